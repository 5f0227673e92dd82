r"""Stacked ensembles: $M$ independent models trained in one compiled step, on top of :func:`~jaxkit.train.fit`.

A *stacked model* is one pytree whose every array leaf carries a leading member axis of size $M$ (build it with
:func:`init_ensemble`, i.e. ``eqx.filter_vmap(make_member)(keys)``; read member $i$ back with
:func:`ensemble_member`). :func:`fit_ensemble` trains all members at once by handing :func:`fit` three things:

* the objective $\sum_{i=1}^{M} \ell_i(\theta_i)$ with $\ell_i$ = ``loss_fn(member_i, batch_i, key_i)`` evaluated by
  ``eqx.filter_vmap``. Members share no parameters, so $\partial/\partial\theta_i$ of the sum is exactly member
  $i$'s own gradient;
* a member-wise optimizer (:func:`ensemble_optimizer`): ``optimizer.init``/``update`` are ``jax.vmap``-ed over the
  member axis, so global-norm clipping, Adam moments and schedules act per member, and hyperparameters exposed by
  ``optax.inject_hyperparams`` are set per member (e.g. one learning rate per member);
* a batch ``(step, data(step))``: member $i$ draws its randomness from ``fold_in(keys[i], step)``, the key
  :func:`fit` would give a single model trained with ``key=keys[i]``.

Hence member $i$ follows the same trajectory as ``fit(member_i, optimizer_i, loss_fn, data_i, key=keys[i])`` (up to
floating-point reassociation under ``vmap``), and the run inherits :func:`fit`'s checkpoint/resume (the stacked
parameters and optimizer state are what is saved; a resumed run is bit-identical), evaluation, logging and early
stopping. The history holds, at each logged step, ``loss`` (the sum over members), ``member_loss`` (a list of $M$
floats) and every entry of the per-member ``aux`` dict as a list of $M$ floats.

This is the pattern of seed/hyperparameter ensembles: several seeds of one experiment (stability studies), a
learning-rate grid, or independent tasks (each member with its own data: ``member_data=True``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh

from jaxkit._typing import ArrayInput, TreeT
from jaxkit._validate import library_errors

from ._loop import FitResult, fit
from ._sharding import DATA_AXIS, MEMBER_AXIS, _Placement, default_mesh

__all__ = ["ensemble_member", "ensemble_optimizer", "ensemble_size", "fit_ensemble", "init_ensemble"]

_INJECT_STATE = getattr(optax, "InjectStatefulHyperparamsState", optax.InjectHyperparamsState)


def init_ensemble(make_member: Callable[[jax.Array], TreeT], keys: jax.Array) -> TreeT:
    """Stack ``M = len(keys)`` members ``make_member(keys[i])`` into one pytree (``eqx.filter_vmap``)."""
    n = _n_keys(keys)
    if n < 1:
        raise ValueError("keys: expected at least one member key, received none")
    return eqx.filter_vmap(make_member)(keys)


def ensemble_size(stacked: object, *, name: str = "stacked") -> int:
    """The member count ``M``: the common leading size of every array leaf of ``stacked`` (``name``: the argument
    named in errors)."""
    leaves = [x for x in jax.tree_util.tree_leaves(stacked) if eqx.is_array(x)]
    if not leaves:
        raise ValueError(
            f"{name}: expected a pytree with array leaves (a stacked model), received "
            f"{type(stacked).__name__} with none"
        )
    sizes = {int(np.shape(x)[0]) if np.ndim(x) else -1 for x in leaves}
    if len(sizes) != 1 or -1 in sizes:
        raise ValueError(
            f"{name}: every array leaf needs the same leading member axis; leading sizes {sorted(sizes)}"
        )
    n = sizes.pop()
    if n < 1:
        raise ValueError(
            f"{name}: expected at least one member (leading member axis >= 1), received 0 members"
        )
    return n


def ensemble_member(stacked: TreeT, i: int, *, name: str = "stacked") -> TreeT:
    """Member ``i`` of a stacked pytree (index every array leaf's leading axis; ``i < 0`` counts from the end;
    ``name``: the argument named in errors)."""
    n = ensemble_size(stacked, name=name)
    if isinstance(i, bool) or not isinstance(i, int | np.integer) or not -n <= int(i) < n:
        raise ValueError(
            f"i: expected a member index in [-{n}, {n}) (negative counts from the end), received {i!r}"
        )
    return jax.tree_util.tree_map(lambda x: x[int(i)] if eqx.is_array(x) else x, stacked)


def _n_keys(keys: Any) -> int:
    keys = jnp.asarray(keys) if not isinstance(keys, jax.Array) else keys
    if jnp.issubdtype(keys.dtype, jax.dtypes.prng_key):
        if keys.ndim != 1:
            raise ValueError(f"keys: expected a 1-D array of typed PRNG keys, received shape {keys.shape}")
        return int(keys.shape[0])
    if keys.ndim != 2 or keys.dtype != jnp.uint32:
        raise ValueError(
            f"keys: expected M keys (jax.random.split(key, M)), received {keys.dtype}{keys.shape}"
        )
    return int(keys.shape[0])


def _set_hyperparams(state: Any, values: Mapping[str, Any]) -> Any:
    found: set[str] = set()
    available: set[str] = set()

    def put(s):
        if not isinstance(s, _INJECT_STATE):
            return s
        available.update(s.hyperparams)
        hp = dict(s.hyperparams)
        for name, v in values.items():
            if name in hp:
                hp[name] = jnp.asarray(v, dtype=jnp.result_type(hp[name]))
                found.add(name)
        return s._replace(hyperparams=hp)

    state = jax.tree_util.tree_map(put, state, is_leaf=lambda s: isinstance(s, _INJECT_STATE))
    missing = sorted(set(values) - found)
    if missing:
        raise ValueError(
            f"hyperparams: {missing} not found in the optimizer state; wrap the optimizer with "
            f"optax.inject_hyperparams to expose them (exposed: {sorted(available) or 'none'})"
        )
    return state


def ensemble_optimizer(
    optimizer: optax.GradientTransformation,
    n_members: int,
    hyperparams: Mapping[str, ArrayInput] | None = None,
) -> optax.GradientTransformation:
    """``optimizer`` applied member by member (``jax.vmap`` over the leading axis of params and state).

    ``hyperparams`` maps a hyperparameter name exposed by ``optax.inject_hyperparams`` (anywhere inside a chain)
    to ``n_members`` values, e.g. ``{"learning_rate": [1e-3, 3e-3]}`` with
    ``optax.chain(optax.clip_by_global_norm(1.0), optax.inject_hyperparams(optax.adam)(learning_rate=1e-3))``.
    The values live in the optimizer state, so they are checkpointed and resumed with it.
    """
    if isinstance(n_members, bool) or not isinstance(n_members, int) or n_members < 1:
        raise ValueError(f"n_members: expected an integer >= 1, received {n_members!r}")
    values: dict[str, np.ndarray] = {}
    for name, v in (hyperparams or {}).items():
        arr = np.asarray(v, dtype=float)
        if arr.shape != (n_members,):
            raise ValueError(
                f"hyperparams[{name!r}]: expected {n_members} values (one per member), "
                f"received shape {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"hyperparams[{name!r}]: expected finite values, received {arr.tolist()}")
        values[name] = arr

    def init(params):
        state = jax.vmap(optimizer.init)(params)
        return _set_hyperparams(state, values) if values else state

    def update(updates, state, params=None):
        if params is None:
            return jax.vmap(lambda u, s: optimizer.update(u, s))(updates, state)
        return jax.vmap(optimizer.update)(updates, state, params)

    return optax.GradientTransformation(init, update)


@library_errors
def fit_ensemble(
    models: object,
    optimizer: optax.GradientTransformation,
    loss_fn: Callable[..., object],
    data: Callable[[int], object],
    *,
    n_steps: int,
    keys: jax.Array,
    hyperparams: Mapping[str, ArrayInput] | None = None,
    member_data: bool = False,
    has_aux: bool = False,
    **fit_kwargs: Any,  # Any: forwarded to fit, whose signature types each
) -> FitResult:
    """Train the members of the stacked model ``models`` independently, all in one compiled step per step.

    Args:
        models: stacked model (:func:`init_ensemble`); every array leaf has the leading member axis ``M``.
        optimizer: the optimizer of ONE member (wrapped by :func:`ensemble_optimizer`).
        loss_fn: ``loss_fn(member, batch, key) -> loss`` (or ``(loss, aux_dict)`` with ``has_aux=True``) for a
            single member, exactly as for :func:`fit`.
        data: ``data(step)`` returns the batch of that global step: shared by all members, or with
            ``member_data=True`` a pytree whose leaves carry the leading member axis (member ``i`` gets
            ``leaf[i]``).
        keys: ``M`` PRNG keys; member ``i`` is given ``fold_in(keys[i], step)`` at each step.
        hyperparams: per-member values of ``optax.inject_hyperparams`` hyperparameters (see
            :func:`ensemble_optimizer`).
        fit_kwargs: passed to :func:`fit` (``eval_fn`` receives the stacked model; ``checkpoint_dir``,
            ``checkpoint_every``, ``resume``, ``log_every``, ``progress``, ``callback``, ``patience``, ...).
            ``mesh``: :func:`data_mesh` splits each batch over its devices (parameters replicated);
            :func:`ensemble_mesh` also splits the members over its ``"member"`` axis (each device then holds and
            updates only its members). ``None``: :func:`default_mesh` (every device of a distributed run).

    Returns :func:`fit`'s :class:`FitResult`; ``result.model`` is the trained stacked model.
    """
    n = ensemble_size(models, name="models")
    for i, p in enumerate(jax.tree_util.tree_leaves(eqx.filter(models, eqx.is_inexact_array))):
        if not isinstance(p, jax.core.Tracer) and not bool(jnp.all(jnp.isfinite(p))):
            raise ValueError(
                f"models: expected finite parameters, received NaN/inf in leaf {i} (shape {tuple(p.shape)})"
            )
    if _n_keys(keys) != n:
        raise ValueError(f"keys: expected {n} keys (one per member), received {_n_keys(keys)}")
    placement = _ensemble_placement(fit_kwargs.pop("mesh", None), n, member_data)
    if "key" in fit_kwargs:
        raise ValueError("key: fit_ensemble takes per-member keys (keys=...), not a single key")
    if member_data:
        _check_member_axis(data(0), n)

    def member_loss(model, batch, key, step):
        out = loss_fn(model, batch, jax.random.fold_in(key, step))
        return out if has_aux else (out, {})

    def stacked_loss(stacked, batch, _key):
        step, b = batch
        losses, aux = eqx.filter_vmap(
            member_loss, in_axes=(eqx.if_array(0), 0 if member_data else None, 0, None)
        )(stacked, b, keys, step)
        return jnp.sum(losses), {"member_loss": losses, **aux}

    def stepped(step: int) -> tuple[np.ndarray, Any]:
        return np.asarray(step, np.int32), data(step)

    stepped.steps_per_epoch = getattr(data, "steps_per_epoch", None)  # history records epochs as fit's does

    return fit(
        models,
        ensemble_optimizer(optimizer, n, hyperparams),
        stacked_loss,
        stepped,
        n_steps=n_steps,
        key=jax.random.key(0),
        has_aux=True,
        mesh=placement,
        **fit_kwargs,
    )


def _ensemble_placement(mesh: Any, n: int, member_data: bool) -> _Placement | None:
    """Members split over the mesh axis ``"member"`` (if the mesh has one), batches over ``"data"``."""
    strict = mesh is not None
    mesh = default_mesh() if mesh is None else mesh
    if mesh is None:
        return None
    if not isinstance(mesh, Mesh):
        raise TypeError(
            "mesh: expected a jax.sharding.Mesh (data_mesh or ensemble_mesh) or None, received "
            f"{type(mesh).__name__}"
        )
    members = MEMBER_AXIS if MEMBER_AXIS in mesh.shape and mesh.shape[MEMBER_AXIS] > 1 else None
    if members is not None and n % mesh.shape[MEMBER_AXIS]:
        raise ValueError(
            f"mesh: {n} members cannot be split evenly over the {mesh.shape[MEMBER_AXIS]} devices of mesh axis "
            f"'{MEMBER_AXIS}'"
        )
    data = DATA_AXIS if DATA_AXIS in mesh.shape else None
    axes = (members, data) if member_data else (data,)
    return _Placement(mesh, batch_axes=axes, state_axis=members, strict=strict)


def _check_member_axis(batch: Any, n: int) -> None:
    for i, leaf in enumerate(jax.tree_util.tree_leaves(batch)):
        if np.ndim(leaf) == 0 or np.shape(leaf)[0] != n:
            raise ValueError(
                f"data: with member_data=True every leaf needs the leading member axis {n}; leaf {i} has shape "
                f"{np.shape(leaf)}"
            )
