r"""A learned confidence model (as DiffDock's): from a ligand pose in its pocket, the probability that the pose is
within 2 Å RMSD of the crystal pose.

Inputs are SE(3)-invariant features the score model builds (:class:`jaxkit.docking.FragmentScoreModel`): ligand
atom features, ligand pair features (bond, same fragment, cut bond, topological distance) with radial-basis
intra-ligand distances, and for each ligand atom its ``k_pocket`` nearest pocket atoms with radial-basis
distances under a cosine cutoff; the same message-passing layers update the atom states, a masked mean pools them,
and an MLP maps the pooled state (with optional per-pose scalars ``extra``, e.g. the Vinardo energy and the
validity verdict) to a logit $\ell$; $p = \sigma(\ell)$. Training minimizes the binary cross-entropy against
labels $y = [\mathrm{RMSD} < 2\,\text{Å}]$ of poses *sampled by the docking model on training complexes*.

What the model reads of a complex is :class:`ConfidenceInputs`, which has no field for the reference pose (the
``R0, T0`` targets of a :class:`DockingComplex` are dropped by :func:`confidence_inputs`), so the crystal pose
cannot reach it at inference; the pose to judge is passed explicitly, in Å.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float, PRNGKeyArray

from .._validate import (
    check_finite,
    check_int,
    check_key,
    check_positive,
    check_size,
    finite_checked,
    range_checked,
)
from ._complex import (
    LENGTH_SCALE,
    N_ATOM_FEATURES,
    N_PAIR_FEATURES,
    N_POCKET_FEATURES,
    ComplexSizes,
    DockingComplex,
)
from ._datasets import DockingExample
from ._model import FragmentScoreModel, InteractionLayer, _rbf, _silu_mlp

SUCCESS_RMSD_A = 2.0
"""A pose is a success (label 1) when its symmetry-aware RMSD to the crystal pose is below this (Å)."""


class ConfidenceInputs(eqx.Module):
    """The pose-independent part of a complex the confidence model reads: ligand ``atom_features``,
    ``pair_features``, ``atom_mask``; pocket ``pocket`` (scaled, centered), ``pocket_features``, ``pocket_mask``;
    ``center`` (Å). No reference pose."""

    atom_features: Array | np.ndarray
    pair_features: Array | np.ndarray
    atom_mask: Array | np.ndarray
    pocket: Array | np.ndarray
    pocket_features: Array | np.ndarray
    pocket_mask: Array | np.ndarray
    center: Array | np.ndarray

    def __check_init__(self):
        # a concrete NaN/inf field is refused here (no-op on tracers: under jit the arrays come from a checked
        # DockingComplex or from this constructor called eagerly)
        for name in (
            "atom_features",
            "pair_features",
            "atom_mask",
            "pocket",
            "pocket_features",
            "pocket_mask",
            "center",
        ):
            check_finite(name, getattr(self, name))


def _confidence_param_count(width: int, depth: int, n_rbf: int, n_extra: int) -> int:
    """Parameters of a :class:`ConfidenceModel` (Python integers: no overflow for absurd sizes)."""
    embed = (N_ATOM_FEATURES + 1) * width + (N_POCKET_FEATURES + 1) * width
    pair = 3 * width * width + 2 * width  # a, b (no bias), d of a PairBlock
    layer = 2 * pair + (N_PAIR_FEATURES + 2 * n_rbf) * width + (3 * width + 1) * width + (width + 1) * width
    head = (width + n_extra + 1) * width + width + 1
    return embed + depth * layer + head


def check_samples_memory(n_samples: int, n_ligand: int, name: str = "n_samples") -> None:
    """Refuse up front (``ValueError`` naming ``name`` and the memory) a number of poses whose coordinates alone,
    ``(n_samples, n_ligand, 3)`` float64 (plus one PRNG key each), exceed the size cap: a lower bound of what
    sampling them holds at once."""
    check_size(name, n_samples * (n_ligand * 3 * 8 + 8), hint=f"{n_samples} poses of {n_ligand} atoms")


def confidence_inputs(c: DockingComplex) -> ConfidenceInputs:
    """The fields of ``c`` the confidence model may read (never ``R0``/``T0``, the reference pose)."""
    if not isinstance(c, DockingComplex):
        raise TypeError(f"c: expected a DockingComplex, received {type(c).__name__}")
    return ConfidenceInputs(
        *(
            jnp.asarray(getattr(c, f))
            for f in (
                "atom_features",
                "pair_features",
                "atom_mask",
                "pocket",
                "pocket_features",
                "pocket_mask",
                "center",
            )
        )
    )


class ConfidenceModel(eqx.Module):
    """``model(inputs, x, extra)``: the logit that pose ``x`` ``(L, 3)`` (Å, the complex's atom order, padded rows
    ignored) is within 2 Å of the crystal pose; ``extra`` ``(n_extra,)`` per-pose scalars. One pose: batch with
    ``jax.vmap``."""

    atom_embed: eqx.nn.Linear
    pocket_embed: eqx.nn.Linear
    layers: list[InteractionLayer]
    head: eqx.nn.MLP
    n_rbf: int = eqx.field(static=True)
    k_pocket: int = eqx.field(static=True)
    cutoff: float = eqx.field(static=True)
    n_extra: int = eqx.field(static=True)

    def __init__(
        self,
        *,
        width: int = 32,
        depth: int = 2,
        n_rbf: int = 16,
        k_pocket: int = 16,
        cutoff: float = 8.0,
        n_extra: int = 0,
        key: PRNGKeyArray,
    ):
        check_int("width", width, minimum=1)
        check_int("depth", depth, minimum=1)
        check_int("n_extra", n_extra, minimum=0)
        check_int("n_rbf", n_rbf, minimum=2)  # the radial basis spaces its centers d_max / (n_rbf - 1) apart
        check_int("k_pocket", k_pocket, minimum=1)
        check_positive("cutoff", cutoff)
        n_params = _confidence_param_count(width, depth, n_rbf, n_extra)
        check_size(
            f"width={width}, depth={depth}, n_rbf={n_rbf}, n_extra={n_extra}",
            4 * n_params,
            hint="ConfidenceModel parameters (float32)",
        )
        keys = jax.random.split(key, depth + 3)
        self.atom_embed = eqx.nn.Linear(N_ATOM_FEATURES, width, key=keys[0])
        self.pocket_embed = eqx.nn.Linear(N_POCKET_FEATURES, width, key=keys[1])
        self.layers = [InteractionLayer(width, n_rbf, key=k) for k in keys[2 : 2 + depth]]
        self.head = _silu_mlp(keys[-1], width + n_extra, 1, width)
        self.n_rbf, self.k_pocket, self.cutoff, self.n_extra = n_rbf, k_pocket, cutoff, n_extra

    def __call__(
        self, inputs: ConfidenceInputs, x: Float[Array, "l 3"], extra: Float[Array, " e"] | None = None
    ) -> Float[Array, ""]:
        c = inputs
        xs = (x - c.center) / LENGTH_SCALE
        am = c.atom_mask
        L = xs.shape[0]
        h = jax.vmap(self.atom_embed)(c.atom_features)
        hp = jax.vmap(self.pocket_embed)(c.pocket_features)
        dx_ll = xs[:, None, :] - xs[None, :, :]
        d_ll = jnp.sqrt(jnp.sum(dx_ll**2, -1) + 1e-9)
        ll_nbr = jnp.broadcast_to(jnp.arange(L), (L, L))
        ll_e = jnp.concatenate([c.pair_features, _rbf(d_ll, self.n_rbf)], -1)
        ll_w = am[:, None] * am[None, :] * (1.0 - jnp.eye(L, dtype=xs.dtype))
        d2_lp = jnp.sum((xs[:, None, :] - c.pocket[None, :, :]) ** 2, -1)
        d2_masked = jnp.where(c.pocket_mask[None, :] > 0, jax.lax.stop_gradient(d2_lp), jnp.inf)
        k = min(self.k_pocket, c.pocket.shape[0])
        _, lp_nbr = jax.lax.top_k(-d2_masked, k)
        d_lp = jnp.sqrt(jnp.sum((xs[:, None, :] - c.pocket[lp_nbr]) ** 2, -1) + 1e-9)
        rc = self.cutoff / LENGTH_SCALE
        cut = jnp.where(d_lp < rc, 0.5 * (jnp.cos(jnp.pi * d_lp / rc) + 1.0), 0.0)
        lp_w = cut * c.pocket_mask[lp_nbr] * am[:, None]
        lp_e = _rbf(d_lp, self.n_rbf)
        for layer in self.layers:
            h = layer(h, hp, ll_nbr, ll_e, ll_w, lp_nbr, lp_e, lp_w)
        pooled = (h * am[:, None]).sum(0) / jnp.maximum(am.sum(), 1.0)
        extra = (
            jnp.zeros((self.n_extra,), pooled.dtype) if extra is None else jnp.asarray(extra, pooled.dtype)
        )
        return self.head(jnp.concatenate([pooled, extra]))[0]


def pad_pose(x: np.ndarray, inputs: ConfidenceInputs, name: str = "x") -> np.ndarray:
    """A pose ``(n_atoms, 3)`` Å padded with the pocket center to the complex's ``L`` ligand slots (errors name
    the argument ``name``)."""
    x = np.asarray(x, np.float64)
    L = int(np.shape(inputs.atom_mask)[0])
    n = int(np.asarray(inputs.atom_mask).sum())
    if x.ndim != 2 or x.shape != (n, 3):
        raise ValueError(
            f"{name}: expected the pose's {n} atoms as shape ({n}, 3) Å, received shape {x.shape}"
        )
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name}: expected finite coordinates (Å), received NaN or inf")
    out = np.tile(np.asarray(inputs.center, np.float64), (L, 1))
    out[:n] = x
    return out


def confidence_loss(
    model: ConfidenceModel,
    inputs: ConfidenceInputs,
    x: Float[Array, "b l 3"],
    extra: Float[Array, "b e"],
    labels: Float[Array, " b"],
) -> Float[Array, ""]:
    """Mean binary cross-entropy of the logits of poses ``x`` (one complex's inputs shared) against ``labels``
    (in [0, 1]). Non-finite ``x``/``extra``/``labels`` or labels outside [0, 1] raise ``ValueError`` naming the
    argument, eagerly and under ``jit`` (``eqx.error_if``)."""
    if not isinstance(model, ConfidenceModel):
        raise TypeError(f"model: expected a ConfidenceModel, received {type(model).__name__}")
    if not isinstance(inputs, ConfidenceInputs):
        raise TypeError(f"inputs: expected ConfidenceInputs, received {type(inputs).__name__}")
    b, L = np.shape(x)[0], np.shape(inputs.atom_mask)[0]
    if np.shape(x) != (b, L, 3):
        raise ValueError(f"x: expected poses of shape (b, {L}, 3) Å, received {np.shape(x)}")
    if np.shape(extra) != (b, model.n_extra):
        raise ValueError(
            f"extra: expected shape ({b}, {model.n_extra}) (one row per pose of x), received {np.shape(extra)}"
        )
    if np.shape(labels) != (b,):
        raise ValueError(f"labels: expected shape ({b},) (one per pose of x), received {np.shape(labels)}")
    x = finite_checked("x", x)
    extra = finite_checked("extra", extra)
    labels = range_checked("labels", labels, 0.0, 1.0)
    logits = jax.vmap(model, in_axes=(None, 0, 0))(inputs, x, extra)
    return jnp.mean(optax.sigmoid_binary_cross_entropy(logits, labels))


def train_confidence(
    data: list[tuple[ConfidenceInputs, np.ndarray, np.ndarray, np.ndarray]],
    *,
    n_steps: int = 200,
    lr: float = 1e-3,
    width: int = 32,
    depth: int = 2,
    key: PRNGKeyArray,
) -> ConfidenceModel:
    """Fit a :class:`ConfidenceModel` with Adam on ``data``: per training complex ``(inputs, x (b, L, 3) Å,
    extra (b, n_extra), labels (b,) in {0, 1})``; each step takes one complex (cycled in a key-shuffled order)."""
    check_key("key", key)
    check_int("n_steps", n_steps, minimum=1)
    check_positive("lr", lr)
    if not data:
        raise ValueError("data: expected at least one training complex, received none")
    n_extra = int(np.shape(data[0][2])[-1])
    k_init, k_order = jax.random.split(key)
    model = ConfidenceModel(width=width, depth=depth, n_extra=n_extra, key=k_init)
    opt = optax.adam(lr)
    state = opt.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def step(model, state, inputs, x, extra, y):
        loss, grads = eqx.filter_value_and_grad(confidence_loss)(model, inputs, x, extra, y)
        updates, state = opt.update(grads, state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), state, loss

    order = np.asarray(jax.random.permutation(k_order, len(data)))
    for s in range(n_steps):
        inputs, x, extra, y = data[int(order[s % len(data)])]
        model, state, _ = step(
            model, state, inputs, jnp.asarray(x), jnp.asarray(extra), jnp.asarray(y, jnp.float32)
        )
    return model


def confidence_scores(
    model: ConfidenceModel,
    inputs: ConfidenceInputs,
    poses: list[np.ndarray],
    extra: np.ndarray | None = None,
) -> np.ndarray:
    """Probabilities ``sigmoid(logit)`` that each pose ``(n_atoms, 3)`` Å is within 2 Å of the crystal pose."""
    if not isinstance(inputs, ConfidenceInputs):
        raise TypeError(
            f"inputs: expected ConfidenceInputs (confidence_inputs(complex): no reference pose), received "
            f"{type(inputs).__name__}"
        )
    if not isinstance(model, ConfidenceModel):
        raise TypeError(f"model: expected a ConfidenceModel, received {type(model).__name__}")
    if len(poses) == 0:
        raise ValueError("poses: expected at least one pose, received none")
    x = jnp.asarray(np.stack([pad_pose(p, inputs, "poses") for p in poses]))
    if extra is None:
        e = jnp.zeros((len(poses), model.n_extra))
    else:
        if np.shape(extra) != (len(poses), model.n_extra):
            raise ValueError(
                f"extra: expected shape ({len(poses)}, {model.n_extra}) (one row per pose), received "
                f"{np.shape(extra)}"
            )
        check_finite("extra", extra)
        e = jnp.asarray(extra)
    return np.asarray(jax.nn.sigmoid(jax.vmap(model, in_axes=(None, 0, 0))(inputs, x, e)))


def confidence_training_data(
    score_model: FragmentScoreModel,
    examples: list[DockingExample],
    key: PRNGKeyArray,
    *,
    n_samples: int = 16,
    n_steps: int = 30,
    sizes: ComplexSizes | None = None,
    conformer_seed: int = 0,
) -> list[tuple[ConfidenceInputs, np.ndarray, np.ndarray, np.ndarray]]:
    """Training data for :func:`train_confidence` from poses *sampled by* ``score_model`` (a
    :class:`jaxkit.docking.FragmentScoreModel`) on ``examples`` (training complexes only: each example's
    reference pose is used for the labels and nothing else): per complex ``(inputs, x (n, L, 3) Å,
    extra (n, 0), labels (n,))`` with ``labels = symmetric RMSD < 2 Å``. The complex is built without its
    reference (as at inference) and the poses are conformer-matched samples (``dock``'s default assembly).
    ``sizes``: one padding for every complex (one compiled sampler); default: the largest needed."""
    from ._api import _sizes_for, sample_complex
    from ._complex import build_complex, ligand_fragments
    from ._evaluate import symmetric_rmsd
    from ._fragments import conformer_positions
    from ._train import ModelConfig

    check_key("key", key)
    check_int("n_samples", n_samples, minimum=1)
    check_int("n_steps", n_steps, minimum=1)
    check_int("conformer_seed", conformer_seed, minimum=0)  # RDKit reads a negative seed as "random"
    if not examples:
        raise ValueError("examples: expected at least one training complex, received none")
    check_samples_memory(n_samples, sizes.ligand if sizes is not None else ComplexSizes().ligand)
    ligs = [ligand_fragments(ex.mol, conformer="rdkit", seed=conformer_seed) for ex in examples]
    if sizes is None:
        fields = ("ligand", "pocket", "fragments", "dummies")
        all_sizes = [_sizes_for(ModelConfig(), lig, ex.pocket) for lig, ex in zip(ligs, examples)]
        sizes = ComplexSizes(*(max(getattr(s, f) for s in all_sizes) for f in fields))
    out = []
    for i, (ex, lig) in enumerate(zip(examples, ligs)):
        c = build_complex(lig, ex.pocket, sizes=sizes, name=ex.id)  # no reference: as at inference
        mols, _ = sample_complex(
            score_model,
            c,
            lig,
            jax.random.fold_in(key, i),
            n_samples=n_samples,
            n_steps=n_steps,
            assemble="conformer_matching",
        )
        inputs = confidence_inputs(c)
        x = np.stack([pad_pose(conformer_positions(m), inputs) for m in mols])
        rmsd = np.array([symmetric_rmsd(m, ex.mol) for m in mols])
        out.append((inputs, x, np.zeros((len(mols), 0)), (rmsd < SUCCESS_RMSD_A).astype(np.float32)))
    return out


CONFIDENCE_FORMAT = "jaxkit-docking-confidence/1"


def _hyper(model: ConfidenceModel) -> dict:
    return {
        "width": int(model.atom_embed.out_features),
        "depth": len(model.layers),
        "n_rbf": model.n_rbf,
        "k_pocket": model.k_pocket,
        "cutoff": model.cutoff,
        "n_extra": model.n_extra,
    }


def save_confidence_model(
    path: str | Path,
    model: ConfidenceModel,
    info: Mapping[str, object] | None = None,
    *,
    overwrite: bool = False,
) -> Path:
    """Write a confidence model file (atomic, checksummed: :func:`jaxkit.train.save_checkpoint`). An existing
    ``path`` is replaced only with ``overwrite=True`` and only if it is a confidence model file
    (``FileExistsError`` otherwise, nothing written)."""
    from jaxkit.train import save_checkpoint

    if not isinstance(model, ConfidenceModel):
        raise TypeError(f"model: expected a ConfidenceModel, received {type(model).__name__}")
    if info is not None and not isinstance(info, dict):
        raise TypeError(f"info: expected a JSON-able dict or None, received {type(info).__name__}")
    meta = {"format": CONFIDENCE_FORMAT, "config": _hyper(model), "info": info or {}}
    # the structure load_confidence_model rebuilds from the metadata: a file that cannot load back is never written
    like = eqx.filter(ConfidenceModel(**_hyper(model), key=jax.random.key(0)), eqx.is_inexact_array)
    return save_checkpoint(
        path, eqx.filter(model, eqx.is_inexact_array), meta, overwrite=overwrite, like=like
    )


def load_confidence_model(path: str | Path) -> tuple[ConfidenceModel, dict[str, object]]:
    """Read a file written by :func:`save_confidence_model`; returns ``(model, info)``. Raises ``ValueError``
    naming the file if it is not a confidence model file."""
    from jaxkit.train import CheckpointError, load_checkpoint, read_metadata

    path = Path(path)
    try:
        meta = read_metadata(path)
    except (CheckpointError, OSError) as e:
        raise ValueError(f"confidence model file {path} cannot be read ({e})") from None
    if meta.get("format") != CONFIDENCE_FORMAT:
        raise ValueError(
            f"confidence model file {path}: expected format {CONFIDENCE_FORMAT!r}, received {meta.get('format')!r}"
        )
    skeleton = ConfidenceModel(**meta["config"], key=jax.random.key(0))
    params, static = eqx.partition(skeleton, eqx.is_inexact_array)
    loaded, _ = load_checkpoint(path, params)
    return eqx.combine(loaded, static), meta.get("info", {})


def cross_validate_rankings(
    data: list[tuple[ConfidenceInputs, np.ndarray, np.ndarray, np.ndarray]],
    energies: list[np.ndarray],
    *,
    weights: tuple[float, ...] = (0.1, 0.3, 1.0),
    n_folds: int = 5,
    n_steps: int = 200,
    width: int = 32,
    depth: int = 2,
    key: PRNGKeyArray,
) -> dict[str, object]:
    r"""Choose how to rank sampled poses by ``n_folds``-fold cross-validation over *training* complexes.

    ``data`` as for :func:`train_confidence` (labels: RMSD < 2 Å), ``energies[i]`` the Vinardo energy of each pose
    of complex ``i`` (kcal/mol; ``inf`` for a pose Vina cannot score). Complexes are split into folds (a
    key-shuffled order); for each fold a confidence model is trained on the other folds and scores the fold's
    poses. Candidates: ``"vinardo"`` (lowest energy first), ``"confidence"`` (highest logit $\ell$ first) and
    ``"combined:w"`` for each ``w`` in ``weights`` (highest $\ell - w E / \mathrm{kcal\,mol^{-1}}$ first). A
    candidate's score is its top-1 success (the top pose's label) over all complexes, each scored by the model
    that did not train on it. Returns ``{"top1": {candidate: rate}, "chosen": name, "n_complexes": n}``; ties go
    to the earlier candidate in the order above (the simpler ranking)."""
    check_key("key", key)
    check_int("n_folds", n_folds, minimum=2)
    if len(data) != len(energies):
        raise ValueError(
            f"energies: expected one array per complex of data ({len(data)}), received {len(energies)}"
        )
    if len(data) < n_folds:
        raise ValueError(f"n_folds: expected at most one fold per complex ({len(data)}), received {n_folds}")
    for i, (d, e) in enumerate(zip(data, energies)):
        if np.shape(e) != np.shape(d[3]):
            raise ValueError(
                f"energies: complex {i} has {np.shape(d[3])[0]} poses but {np.shape(e)} energies"
            )
    names = ["vinardo", "confidence"] + [f"combined:{w:g}" for w in weights]
    k_order, k_train = jax.random.split(key)
    order = np.asarray(jax.random.permutation(k_order, len(data)))
    folds = np.array_split(order, n_folds)
    hits = {n: [] for n in names}
    for f, held in enumerate(folds):
        train = [data[i] for i in order if i not in set(held.tolist())]
        model = train_confidence(
            train, n_steps=n_steps, width=width, depth=depth, key=jax.random.fold_in(k_train, f)
        )
        for i in held:
            inputs, x, extra, y = data[int(i)]
            logit = np.asarray(
                jax.vmap(model, in_axes=(None, 0, 0))(inputs, jnp.asarray(x), jnp.asarray(extra))
            )
            e = np.where(np.isfinite(energies[int(i)]), energies[int(i)], 1e6)
            scores = {"vinardo": -e, "confidence": logit}
            scores.update({f"combined:{w:g}": logit - w * e for w in weights})
            for n in names:
                hits[n].append(float(y[int(np.argmax(scores[n]))]))
    top1 = {n: float(np.mean(h)) for n, h in hits.items()}
    chosen = max(names, key=lambda n: (top1[n], -names.index(n)))
    return {"top1": top1, "chosen": chosen, "n_complexes": len(data)}
