"""Training the fragment score model, and the model file the ``dock`` command loads.

:func:`featurize_examples` turns :class:`DockingExample` s into one stacked :class:`DockingComplex` (each example
``augment`` times: new RDKit conformer for the fragment geometry, random minimal cut set). :func:`train_model`
runs :func:`jaxkit.train.fit` on it: Adam with cosine decay, gradient clipping, parameter EMA (sampling uses the
average), data-parallel over a device mesh (:func:`jaxkit.train.data_mesh`; batches are split over the
``"data"`` axis, parameters replicated), atomic checkpoints and exact resume. The model file
(:func:`save_model` / :func:`load_model`) is a :mod:`jaxkit.train` checkpoint of the EMA parameters whose
metadata carries the :class:`ModelConfig`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import equinox as eqx
import jax
import optax
from jaxtyping import PRNGKeyArray

from jaxkit._validate import seed_rng
from jaxkit.train import (
    ArrayLoader,
    CheckpointError,
    fit,
    load_checkpoint,
    read_ema,
    read_metadata,
    save_checkpoint,
    track_ema,
)

from .._validate import check_choice, check_int, check_key, check_positive, check_range
from ._complex import ComplexSizes, DockingComplex, example_complex, stack_complexes
from ._datasets import DockingExample
from ._dock import batch_loss, docking_process
from ._fragments import FragmentationError
from ._model import FragmentScoreModel

MODEL_FORMAT = "jaxkit-docking-model/1"
SHIPPED_MODEL = Path(__file__).parent / "models" / "sigmadock_small.jkc"
"""The model trained by ``python -m experiments run sigmadock --preset standard`` (package data)."""


@dataclass(frozen=True)
class ModelConfig:
    """Architecture, process and padding of a docking model (stored in the model file)."""

    width: int = 48
    depth: int = 3
    n_rbf: int = 16
    k_pocket: int = 16
    cutoff: float = 8.0
    translation: Literal["ve", "vp"] = "ve"
    trans_sigma_max: float = 2.0
    pocket_depth: int = 0
    ligand: int = 48
    pocket: int = 160
    fragments: int = 10
    dummies: int = 18

    def __post_init__(self):
        for name in ("width", "depth", "n_rbf", "k_pocket", "ligand", "pocket", "fragments"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("pocket_depth", self.pocket_depth, minimum=0)
        check_int("dummies", self.dummies, minimum=0)
        check_positive("cutoff", self.cutoff)
        check_positive("trans_sigma_max", self.trans_sigma_max)
        check_choice("translation", self.translation, ("ve", "vp"))

    def sizes(self, pocket: int | None = None) -> ComplexSizes:
        return ComplexSizes(
            self.ligand, self.pocket if pocket is None else pocket, self.fragments, self.dummies
        )

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @staticmethod
    def from_dict(d: dict) -> ModelConfig:
        names = {f.name for f in dataclasses.fields(ModelConfig)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"model config: unknown fields {unknown}")
        return ModelConfig(**d)


@dataclass
class TrainConfig:
    """Optimization settings of :func:`train_model`."""

    n_steps: int = 2000
    batch_size: int = 16
    lr: float = 2e-3
    final_lr_fraction: float = 0.05
    weight_decay: float = 1e-4
    clip: float = 1.0
    ema_decay: float = 0.998
    t_power: float = 1.0
    log_every: int = 25
    checkpoint_every: int = 200
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        for name in ("n_steps", "batch_size", "log_every"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("checkpoint_every", self.checkpoint_every, minimum=0)
        check_positive("lr", self.lr)
        check_range("final_lr_fraction", self.final_lr_fraction, 0.0, 1.0)
        check_positive("weight_decay", self.weight_decay, strict=False)
        check_positive("clip", self.clip)
        if self.ema_decay is not None:
            check_range("ema_decay", self.ema_decay, 0.0, 1.0)
        check_positive("t_power", self.t_power)


def build_model(config: ModelConfig, key: PRNGKeyArray) -> FragmentScoreModel:
    check_key("key", key)
    return FragmentScoreModel(
        docking_process(config.translation, config.trans_sigma_max),
        width=config.width,
        depth=config.depth,
        n_rbf=config.n_rbf,
        k_pocket=config.k_pocket,
        cutoff=config.cutoff,
        pocket_depth=config.pocket_depth,
        key=key,
    )


def featurize_examples(
    examples: list[DockingExample],
    sizes: ComplexSizes,
    *,
    conformer: Literal["rdkit", "oracle"] = "oracle",
    augment: int = 1,
    choice: Literal["canonical", "random"] = "random",
    seed: int = 0,
    progress: Callable[[list[DockingExample]], Iterable[DockingExample]] | None = None,
) -> tuple[DockingComplex, list[str]]:
    """Stack featurized complexes; examples that do not fit ``sizes`` or cannot be fragmented are skipped (their
    messages are returned). The pocket padding grows to the largest pocket (the model reads any pocket size). ``augment`` copies per example use independent cut sets (``choice="random"``) and,
    with ``conformer="rdkit"``, independent conformers.

    Training uses ``conformer="oracle"`` (documented choice): the targets are then exactly assembled poses. With
    RDKit-conformer fragments the Kabsch-fitted targets keep dummy-partner gaps (0.3 Å median after MMFF), and a
    model trained on them learns weak bond springs (measured: springs 3-4x softer, sampled poses not
    reassembled). Inference always uses RDKit conformers (no leakage)."""
    rng = seed_rng(seed)
    check_int("augment", augment, minimum=1)
    out, skipped = [], []
    most = max((ex.pocket.n_atoms for ex in examples), default=0)
    if most > sizes.pocket:  # real pockets (10 Å residues) outgrow the CCD padding: pad to the largest
        sizes = ComplexSizes(sizes.ligand, most, sizes.fragments, sizes.dummies)
    it = examples if progress is None else progress(examples)
    for ex in it:
        for _ in range(augment):
            try:
                c, _ = example_complex(
                    ex,
                    conformer=conformer,
                    sizes=sizes,
                    seed=int(rng.integers(2**31 - 1)),
                    choice=choice,
                    rng=rng,
                )
            except (ValueError, FragmentationError) as e:
                skipped.append(f"{ex.id}: {e}")
                break
            if float(c.fragment_mask.sum()) < 2:
                skipped.append(f"{ex.id}: a single rigid fragment (nothing to reassemble)")
                break
            out.append(c)
    if not out:
        raise ValueError(f"examples: none could be featurized ({len(skipped)} skipped: {skipped[:3]} ...)")
    return stack_complexes(out), skipped


def train_model(
    data: DockingComplex,
    config: ModelConfig,
    train: TrainConfig,
    *,
    key: PRNGKeyArray,
    checkpoint_dir: str | Path | None = None,
    resume: bool = False,
    mesh: jax.sharding.Mesh | None = None,
    progress: bool | str = True,
    init: FragmentScoreModel | None = None,
) -> tuple[FragmentScoreModel, list[dict[str, object]]]:
    """Train on a stacked batch of complexes; returns ``(EMA model, history)``. Resumable from ``checkpoint_dir``."""
    check_key("key", key)
    k_init, k_data, k_fit = jax.random.split(key, 3)
    model = build_model(config, k_init) if init is None else init
    process = model.process
    sched = optax.cosine_decay_schedule(train.lr, max(train.n_steps, 1), alpha=train.final_lr_fraction)
    opt = optax.chain(
        optax.clip_by_global_norm(train.clip),
        optax.adamw(sched, weight_decay=train.weight_decay),
        track_ema(train.ema_decay),
    )
    loader = ArrayLoader(data, train.batch_size, key=k_data)

    def loss_fn(m, batch, k):
        return batch_loss(m, process, batch, k, t_power=train.t_power)

    res = fit(
        model,
        opt,
        loss_fn,
        loader,
        n_steps=train.n_steps,
        key=k_fit,
        log_every=train.log_every,
        checkpoint_dir=checkpoint_dir,
        checkpoint_every=train.checkpoint_every if checkpoint_dir else 0,
        resume=resume,
        mesh=mesh,
        progress=progress,
    )
    params, static = eqx.partition(res.model, eqx.is_inexact_array)
    params_ema = read_ema(res.opt_state, train.ema_decay)
    return eqx.combine(jax.device_get(params_ema), static), res.history


def save_model(
    path: str | Path,
    model: FragmentScoreModel,
    config: ModelConfig,
    info: Mapping[str, object] | None = None,
    *,
    overwrite: bool = False,
) -> Path:
    """Write a model file (atomic, checksummed) holding the parameters and ``config``.

    ``config`` must describe ``model`` (the model :func:`build_model` makes from it has the same parameter
    names, shapes and dtypes; ``ValueError`` otherwise), so the file always loads back. An existing ``path`` is
    replaced only with ``overwrite=True`` and only if it is a docking model file (``FileExistsError``
    otherwise); the replacement is atomic (the old file or the new one, never neither)."""
    from ._model import FragmentScoreModel

    if not isinstance(model, FragmentScoreModel):
        raise TypeError(f"model: expected a FragmentScoreModel, received {type(model).__name__}")
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config: expected a ModelConfig, received {type(config).__name__}")
    if info is not None and not isinstance(info, dict):
        raise TypeError(f"info: expected a JSON-able dict or None, received {type(info).__name__}")
    params = eqx.filter(model, eqx.is_inexact_array)
    like = eqx.filter(build_model(config, jax.random.key(0)), eqx.is_inexact_array)
    meta = {"format": MODEL_FORMAT, "config": config.to_dict(), "info": info or {}}
    try:
        return save_checkpoint(path, params, meta, overwrite=overwrite, like=like)
    except ValueError as e:
        if str(e).startswith("tree:") and "NaN/inf" in str(e):
            raise ValueError(f"model: {str(e)[6:].strip()}") from None
        if str(e).startswith("tree:"):
            raise ValueError(f"config: does not describe model ({str(e)[6:].strip()})") from None
        raise


@functools.lru_cache(maxsize=4)
def _skeleton(config: ModelConfig) -> FragmentScoreModel:
    """The model structure a file of ``config`` is read into (its arrays are replaced by the file's): built once
    per configuration in a process (about 1 s each), so that docking many ligands does not rebuild it per call."""
    return build_model(config, jax.random.key(0))


def load_model(path: str | Path) -> tuple[FragmentScoreModel, ModelConfig, dict[str, object]]:
    """Read a model file written by :func:`save_model`; returns ``(model, config, info)``.

    Raises ``ValueError`` naming the file if it is not a docking model file."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"model file {path} does not exist")
    try:
        meta = read_metadata(path)
    except CheckpointError as e:
        raise ValueError(f"model file {path} is not a docking model file ({e})") from None
    if meta.get("format") != MODEL_FORMAT:
        raise ValueError(
            f"model file {path}: expected format {MODEL_FORMAT!r}, received {meta.get('format')!r}"
        )
    config = ModelConfig.from_dict(meta["config"])
    skeleton = _skeleton(config)
    params, static = eqx.partition(skeleton, eqx.is_inexact_array)
    loaded, _ = load_checkpoint(path, params)
    return eqx.combine(loaded, static), config, meta.get("info", {})
