"""A user's function handed to a compiled estimator, traced as a pytree so that nothing is cached by identity.

``jax.jit(core, static_argnums=0)(f, ...)`` compiles once per function *object*: after the user changes an array
the function reads (a closed-over or global weight), the same ``f`` returns the old, baked-in value. Here the
function is traced afresh on every call into its jaxpr (static: the computation) and the arrays it reads (the
jaxpr's constants: leaves, passed to the compiled code as arguments), so every call sees their current values.
Jaxprs that print the same share one object, so an unchanged function (or a new lambda doing the same thing)
reuses the compiled code.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax

_SEEN: OrderedDict[tuple, Any] = OrderedDict()
_MAX_SEEN = 256


class TracedCallable(eqx.Module):
    """``f`` as a pytree: ``jaxpr`` and the argument/output structures are static, ``consts`` (every array the
    function read when traced) are leaves. Calling it evaluates the jaxpr on the same argument structure."""

    jaxpr: Any = eqx.field(static=True)
    in_tree: Any = eqx.field(static=True)
    out_tree: Any = eqx.field(static=True)
    name: str = eqx.field(static=True)
    consts: list

    def __call__(self, *args: Any) -> Any:
        flat, tree = jax.tree_util.tree_flatten(args)
        if tree != self.in_tree:
            raise TypeError(
                f"{self.name}: called with arguments of structure {tree}, traced with {self.in_tree}"
            )
        out = jax.core.eval_jaxpr(self.jaxpr, self.consts, *flat)
        return jax.tree_util.tree_unflatten(self.out_tree, out)


def as_pytree(f: Callable[..., Any], *example_args: Any, name: str = "f") -> Any:
    """``f`` ready to pass as a traced (non-static) argument of a jitted function.

    An Equinox module is returned as it is (its arrays are already leaves). Any other callable is traced now on
    ``example_args`` (arrays or ``jax.ShapeDtypeStruct``; the shapes and dtypes it will be called with) into a
    :class:`TracedCallable`. Errors raised while tracing ``f`` propagate unchanged."""
    if isinstance(f, eqx.Module):
        return f
    if not callable(f):
        raise TypeError(f"{name}: expected a callable, received {type(f).__name__}")

    def fresh(*args: Any) -> Any:  # a new function object: no trace cached under ``f``'s identity is reused
        return f(*args)

    closed, out_shape = jax.make_jaxpr(fresh, return_shape=True)(*example_args)
    in_tree = jax.tree_util.tree_structure(example_args)
    out_tree = jax.tree_util.tree_structure(out_shape)
    key = (str(closed.jaxpr), in_tree, out_tree)
    jaxpr = _SEEN.get(key)
    if jaxpr is None:
        jaxpr = _SEEN[key] = closed.jaxpr
        if len(_SEEN) > _MAX_SEEN:
            _SEEN.popitem(last=False)
    else:
        _SEEN.move_to_end(key)
    return TracedCallable(jaxpr, in_tree, out_tree, name, list(closed.consts))
