"""PDE solvers that regenerate the FNO and Laplace-neural-operator benchmark datasets offline.

Modules: :mod:`~jaxkit.pde.grf` (Gaussian random fields), :mod:`~jaxkit.pde.burgers`, :mod:`~jaxkit.pde.darcy`,
:mod:`~jaxkit.pde.navier_stokes` and :mod:`~jaxkit.pde.lno` (Laplace-neural-operator problems); the dataset layer
(``make_dataset``, ``DATASETS``, disk cache) is at the top of ``jaxkit.pde``. ``DATASETS`` holds every dataset
``make_dataset`` can generate, as ``{name: one-line description}`` (Burgers, Darcy, Navier–Stokes, Kolmogorov flow
and the Laplace-neural-operator problems; :func:`register_dataset` adds more).

    from jaxkit.pde import make_dataset, DATASETS
    ds = make_dataset("burgers", n_train=100, n_test=20, resolution=256, seed=0)
    ds.x_train.shape  # (100, 1, 256), channels first, float32
"""

from . import burgers, darcy, grf, lno, navier_stokes
from ._datasets import (
    DATASETS,
    MAX_BYTES,
    MAX_FINE_RESOLUTION,
    DatasetSpec,
    PDEDataset,
    allowed_resolutions,
    dataset_spec,
    make_dataset,
    refined_resolution,
    register_dataset,
    subsample,
)
from ._grf import grf_neumann, grf_periodic, neumann_spectrum, periodic_spectrum

__all__ = [
    "DATASETS",
    "MAX_BYTES",
    "MAX_FINE_RESOLUTION",
    "DatasetSpec",
    "PDEDataset",
    "allowed_resolutions",
    "dataset_spec",
    "burgers",
    "darcy",
    "grf",
    "grf_neumann",
    "grf_periodic",
    "lno",
    "make_dataset",
    "navier_stokes",
    "neumann_spectrum",
    "periodic_spectrum",
    "refined_resolution",
    "register_dataset",
    "subsample",
]
