"""Input validation helpers for public entry points.

Every public function checks its arguments *before* tracing and raises ``ValueError``/``TypeError`` whose message
names the argument, what was expected and what was received. These helpers keep those messages uniform.
They operate on static information (shapes, dtypes, Python numbers); ``check_finite`` reads concrete values and is
skipped under tracing.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np


def _shape(x: Any, name: str = "") -> tuple[int, ...]:
    try:
        return tuple(np.shape(x))
    except ValueError as e:  # ragged nested lists: NumPy's "setting an array element with a sequence"
        lead = f"{name}: " if name else ""
        raise ValueError(f"{lead}expected a rectangular array, received ragged nested lists ({e})") from None


def check_ndim(name: str, x: Any, ndim: int | Sequence[int], *, what: str = "") -> None:
    """Raise ``ValueError`` unless ``x.ndim`` is ``ndim`` (or one of ``ndim``)."""
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    shape = _shape(x, name)
    if len(shape) not in allowed:
        exp = " or ".join(str(a) for a in allowed)
        extra = f" ({what})" if what else ""
        raise ValueError(f"{name}: expected an array with {exp} dimensions{extra}, received shape {shape}")


def check_shape(name: str, x: Any, expected: Sequence[int | None]) -> None:
    """Raise ``ValueError`` unless ``x.shape`` matches ``expected`` (``None`` matches any size)."""
    shape = _shape(x, name)
    exp = tuple(expected)
    if len(shape) != len(exp) or any(e is not None and e != s for e, s in zip(exp, shape)):
        pretty = "(" + ", ".join("*" if e is None else str(e) for e in exp) + ")"
        raise ValueError(f"{name}: expected shape {pretty}, received shape {shape}")


def check_trailing_shape(name: str, x: Any, shape: tuple[int, ...]) -> None:
    """Raise ``ValueError`` unless the last dimensions of ``x`` are ``shape`` (any leading batch dimensions)."""
    s = _shape(x, name)
    if len(s) < len(shape) or s[len(s) - len(shape) :] != tuple(shape):
        pretty = "(..., " + ", ".join(map(str, shape)) + ")"
        raise ValueError(f"{name}: expected shape {pretty}, received shape {s}")


def check_real(name: str, x: Any) -> None:
    """Raise ``TypeError`` if ``x`` is complex (or not numeric)."""
    dtype = jnp.result_type(x)
    if jnp.issubdtype(dtype, jnp.complexfloating):
        raise TypeError(f"{name}: expected a real array, received dtype {dtype}")
    if not (jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer) or dtype == jnp.bool_):
        raise TypeError(f"{name}: expected a numeric array, received dtype {dtype}")


def check_float(name: str, x: Any) -> None:
    """Raise ``TypeError`` unless ``x`` has a real floating dtype."""
    dtype = jnp.result_type(x)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"{name}: expected a real floating-point array, received dtype {dtype}")


def check_broadcast(**named: Any) -> tuple[int, ...]:
    """The broadcast shape of the named arrays; ``ValueError`` naming them and their shapes if they do not
    broadcast together (NumPy's rule)."""
    shapes = {n: _shape(x, n) for n, x in named.items()}
    try:
        return tuple(np.broadcast_shapes(*shapes.values()))
    except ValueError:
        listed = ", ".join(f"{n} {s}" for n, s in shapes.items())
        raise ValueError(
            f"{', '.join(shapes)}: expected shapes that broadcast together (NumPy's rule), received {listed}"
        ) from None


def check_dims(**named: tuple[Any, tuple[str, ...]]) -> dict[str, int]:
    """Shapes against symbolic patterns, e.g. ``check_dims(P=(P, ("k", "n")), Q=(Q, ("k",)))``: every array has its
    pattern's rank, and a symbol has one size throughout (``ValueError`` naming the first array that disagrees,
    the pattern and the size fixed by an earlier one). Returns the sizes. Shapes are static, so this also works
    on traced values."""
    dims: dict[str, int] = {}
    source: dict[str, str] = {}
    for name, (x, pattern) in named.items():
        shape = tuple(np.shape(x))
        want = "(" + ", ".join(pattern) + ("," if len(pattern) == 1 else "") + ")"
        if len(shape) != len(pattern):
            raise ValueError(f"{name}: expected shape {want}, received {shape}")
        for d, size in zip(pattern, shape, strict=True):
            if d in dims and dims[d] != size:
                raise ValueError(
                    f"{name}: expected shape {want} with {d} = {dims[d]} (as in {source[d]}), received {shape}"
                )
            dims.setdefault(d, int(size))
            source.setdefault(d, name)
    return dims


def _check_concrete(name: str, value: Any) -> None:
    if np.ndim(value) != 0:
        raise TypeError(f"{name}: expected a number, received an array of shape {np.shape(value)}")
    if isinstance(value, jax.core.Tracer):
        raise TypeError(
            f"{name}: expected a concrete number (a Python or NumPy scalar), received a traced value: this argument "
            "is read on the host to set up the computation, so it cannot be transformed by jax.jit/jax.vmap; pass "
            "it as a Python number (loop over its values, or mark it static)"
        )


def check_positive(name: str, value: Any, *, strict: bool = True) -> None:
    """Raise ``ValueError`` unless a Python/NumPy scalar is > 0 (or >= 0 with ``strict=False``); ``TypeError`` for
    a traced value (an argument that sets up the computation on the host cannot be traced by ``jit``/``vmap``)."""
    _check_concrete(name, value)
    v = float(value)
    if not np.isfinite(v) or (v <= 0 if strict else v < 0):
        rel = "> 0" if strict else ">= 0"
        raise ValueError(f"{name}: expected a finite value {rel}, received {value!r}")


def check_range(name: str, value: Any, lo: float, hi: float, *, closed: bool = True) -> None:
    """Raise ``ValueError`` unless ``lo <= value <= hi`` (open interval with ``closed=False``); ``TypeError`` for a
    traced value."""
    _check_concrete(name, value)
    v = float(value)
    ok = (lo <= v <= hi) if closed else (lo < v < hi)
    if not ok or not np.isfinite(v):
        br = ("[", "]") if closed else ("(", ")")
        raise ValueError(f"{name}: expected a value in {br[0]}{lo}, {hi}{br[1]}, received {value!r}")


def check_int(name: str, value: Any, *, minimum: int | None = None) -> None:
    """Raise ``TypeError`` unless ``value`` is an integer, ``ValueError`` if below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name}: expected an integer, received {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, received {value}")


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name}: expected one of {list(choices)}, received {value!r}")


# ------------------------------------------------------------------------------- arrays, norms, rotations
# Shared by train, geometry, dynamics (and anyone else). Conversions accept lists, tuples, NumPy and JAX arrays
# alike; value checks (finite, norms, rotation validity) read concrete values and are skipped on tracers, where
# ``error_if_invalid`` (``eqx.error_if``) is the check that survives ``jax.jit``.

ROTATION_ATOL = 1e-4
"""Default tolerance of :func:`check_rotation`: ``max |R^T R - I| <= atol`` and ``|det R - 1| <= atol``."""


def _numeric(name: str, x: Any) -> np.ndarray:
    """``x`` as a NumPy array with a real numeric dtype (no cast), or ``TypeError``/``ValueError`` naming ``name``."""
    try:
        arr = np.asarray(x)
    except ValueError as e:  # ragged nested lists
        raise ValueError(f"{name}: expected a rectangular array, received a ragged sequence ({e})") from None
    if arr.dtype.kind in "OUSV":
        raise TypeError(f"{name}: expected a numeric array, received dtype {arr.dtype} ({type(x).__name__})")
    if arr.dtype.kind == "c":
        raise TypeError(f"{name}: expected a real array, received dtype {arr.dtype}")
    return arr


def as_float_array(name: str, x: Any) -> jax.Array:
    """``x`` (list, NumPy or JAX array, scalar) as a JAX array with a real floating dtype.

    Integer and boolean inputs are promoted to the default float dtype; complex, string and object inputs raise
    ``TypeError``; ragged nested lists raise ``ValueError``; all naming the argument. Works on tracers (dtype
    checks only)."""
    if isinstance(x, jax.Array):  # JAX arrays and tracers: dtype checks, no transfer
        dtype = x.dtype
        if jnp.issubdtype(dtype, jnp.complexfloating):
            raise TypeError(f"{name}: expected a real array, received dtype {dtype}")
        if jnp.issubdtype(dtype, jnp.floating):
            return x
        if jnp.issubdtype(dtype, jnp.integer) or dtype == jnp.bool_:
            return x.astype(jnp.result_type(float))
        raise TypeError(f"{name}: expected a numeric array, received dtype {dtype}")
    arr = _numeric(name, x)
    return jnp.asarray(arr, dtype=None if arr.dtype.kind == "f" else jnp.result_type(float))


def as_float64(name: str, x: Any) -> np.ndarray:
    """``x`` as a float64 NumPy array (for NumPy/SciPy code paths), with the checks of :func:`as_float_array`."""
    if isinstance(x, jax.core.Tracer):
        raise TypeError(
            f"{name}: expected a concrete array (this function runs in NumPy, outside jax.jit), "
            "received a traced value"
        )
    return _numeric(name, x).astype(np.float64)


def check_nonempty(name: str, x: Any) -> None:
    """Raise ``ValueError`` if ``x`` has no elements."""
    if int(np.prod(_shape(x, name), dtype=np.int64)) == 0:
        raise ValueError(f"{name}: expected a non-empty array, received shape {_shape(x)}")


def check_norm(name: str, x: Any, *, unit: bool = False, atol: float = 1e-4, min_norm: float = 1e-12) -> None:
    """Vectors along the last axis of concrete ``x`` must have norm ``>= min_norm`` (``unit``: ``|norm - 1| <=
    atol``). No-op on tracers."""
    if is_tracer(x):
        return
    n = np.linalg.norm(np.asarray(x, dtype=np.float64), axis=-1)
    if unit:
        bad = np.abs(n - 1.0) > atol
        if np.any(bad):
            raise ValueError(
                f"{name}: expected unit vectors (|norm - 1| <= {atol}), received {int(bad.sum())} of "
                f"{n.size} with norms in [{n.min():.6g}, {n.max():.6g}]"
            )
    elif np.any(n < min_norm):
        raise ValueError(
            f"{name}: expected vectors of non-zero norm, received {int((n < min_norm).sum())} of "
            f"{n.size} with norm < {min_norm}"
        )


def rotation_errors(R: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per matrix of concrete ``R (..., 3, 3)``: ``max |R^T R - I|`` and ``det R`` (float64; NaN/inf give NaN)."""
    Rn = np.asarray(R, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        orth = np.abs(np.swapaxes(Rn, -1, -2) @ Rn - np.eye(3)).max(axis=(-1, -2))
        det = np.linalg.det(Rn) if Rn.size else np.zeros(Rn.shape[:-2])
    finite = np.all(np.isfinite(Rn), axis=(-1, -2))
    return np.where(finite, orth, np.nan), np.where(finite, det, np.nan)


def check_rotation(name: str, R: Any, atol: float = ROTATION_ATOL) -> None:
    """Raise ``ValueError`` unless ``R`` has shape ``(..., 3, 3)`` and (when concrete) holds finite rotation
    matrices: ``max |R^T R - I| <= atol`` and ``|det R - 1| <= atol`` (a reflection has ``det = -1``)."""
    check_trailing_shape(name, R, (3, 3))
    if is_tracer(R):
        return
    orth, det = rotation_errors(R)
    ok = (orth <= atol) & (np.abs(det - 1.0) <= atol)
    if not np.all(ok):
        bad = int(np.size(ok) - np.count_nonzero(ok))
        what = "NaN/inf entries" if np.any(np.isnan(orth)) else "not rotations"
        raise ValueError(
            f"{name}: expected rotation matrices (R^T R = I, det R = +1 within {atol}), received {bad} of "
            f"{np.size(ok)} {what} (max |R^T R - I| = {np.nanmax(orth, initial=0):.3g}, det range "
            f"[{np.nanmin(det, initial=np.inf):.3g}, {np.nanmax(det, initial=-np.inf):.3g}])"
        )


def check_key(name: str, key: Any) -> None:
    """Raise ``TypeError`` unless ``key`` is a JAX PRNG key (``jax.random.key``) or a legacy raw ``uint32`` key
    (``jax.random.PRNGKey``), which every jaxkit function accepts as the same key: both give identical random
    numbers. A ``uint32`` array whose trailing shape is not the default PRNG implementation's key shape (``(2,)``
    for threefry) is refused, naming the expected shape."""
    dtype = getattr(key, "dtype", None)
    if dtype is not None and jnp.issubdtype(dtype, jax.dtypes.prng_key):
        return
    if dtype is None or np.dtype(dtype) != np.uint32 or len(_shape(key)) < 1:
        raise TypeError(
            f"{name}: expected a PRNG key (jax.random.key(seed), or a raw uint32 key), received "
            f"{type(key).__name__}{' of dtype ' + str(dtype) if dtype is not None else ''} with shape {_shape(key)}"
        )
    try:
        jax.random.wrap_key_data(key)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name}: expected a PRNG key (jax.random.key(seed)); a raw uint32 key needs the trailing shape of "
            f"jax.random.key_data(jax.random.key(seed)).shape = {tuple(jax.random.key_data(jax.random.key(0)).shape)}, "
            f"received shape {_shape(key)}"
        ) from None


def check_shape_tuple(name: str, shape: Any) -> tuple[int, ...]:
    """A batch shape: a tuple/list of integers >= 0 (or one integer); returns it as a tuple."""
    seq = (shape,) if isinstance(shape, int | np.integer) and not isinstance(shape, bool) else shape
    try:
        out = tuple(seq)
    except TypeError:
        raise TypeError(
            f"{name}: expected a tuple of integers, received {type(shape).__name__} {shape!r}"
        ) from None
    if any(isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 0 for s in out):
        raise ValueError(f"{name}: expected a tuple of integers >= 0, received {shape!r}")
    return tuple(int(s) for s in out)


def error_if_invalid(x: Any, invalid: Any, message: str) -> Any:
    """``x`` with a runtime check that also works under ``jax.jit``/``vmap`` (``equinox.error_if``): raises when
    any entry of the boolean ``invalid`` is true. On concrete values (an eager call) that is a ``ValueError`` with
    ``message`` as its first line; on traced values a run-time error of the compiled code carrying ``message``
    (re-raised as ``ValueError`` by :func:`library_errors` on jaxkit's compiled entry points)."""

    if not is_tracer(invalid) and not any(is_tracer(leaf) for leaf in jax.tree_util.tree_leaves(x)):
        if np.any(np.asarray(invalid)):
            raise ValueError(message)
        return x
    return traced_check(x, invalid, message)


_TRACED_MESSAGES: dict[str, None] = {}  # the messages of jaxkit's run-time checks, newest last (bounded)


def traced_check(x: Any, invalid: Any, message: str) -> Any:
    """``equinox.error_if(x, invalid, message)`` for a check on traced values, with ``message`` registered so
    that, when it fires inside a user's own ``jax.jit``, the first line on stderr is ``message`` (see
    :class:`_FirstLineIsTheMessage`) instead of jax's "jax.pure_callback failed" and a callback traceback."""
    import equinox as eqx

    _TRACED_MESSAGES.pop(message, None)
    _TRACED_MESSAGES[message] = None
    while len(_TRACED_MESSAGES) > 4096:
        del _TRACED_MESSAGES[next(iter(_TRACED_MESSAGES))]
    return eqx.error_if(x, invalid, message)


class _FirstLineIsTheMessage(logging.Filter):
    """When a jaxkit run-time check fires inside compiled code that jaxkit does not wrap (a user's ``jax.jit``),
    jax logs "jax.pure_callback failed" with the callback's traceback before raising ``JaxRuntimeError: INTERNAL:
    CpuCallback error ...``, whose text ends with the check's message. This filter rewrites that log record (only
    for messages of jaxkit's checks) into the message itself, so the first line a user reads names the argument;
    the exception raised is unchanged (``runtime_message`` extracts the message from it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None or type(exc).__name__ != "_EquinoxRuntimeError":
            return True
        message = str(exc).split("\n\n", 1)[0].strip()
        if message not in _TRACED_MESSAGES:
            # the kernels' own checks (the kernels import nothing from the rest of jaxkit)
            from jaxkit.kernels._common import TRACED_MESSAGES

            if message not in TRACED_MESSAGES:
                return True
        record.msg = "%s  [a jaxkit check inside compiled code; the error raised below carries this message]"
        record.args = (message,)
        record.exc_info = None
        record.exc_text = None
        return True


def install_runtime_message_filter() -> None:
    """Add :class:`_FirstLineIsTheMessage` to jax's callback logger (once; on ``import jaxkit``)."""
    logger = logging.getLogger("jax._src.callback")
    if not any(isinstance(f, _FirstLineIsTheMessage) for f in logger.filters):
        logger.addFilter(_FirstLineIsTheMessage())


F = TypeVar("F", bound=Callable[..., Any])
_RUNTIME_MESSAGE = re.compile(r"(?:_EquinoxRuntimeError|EquinoxRuntimeError): (.+?)(?:\n\n|\Z)", re.S)


def runtime_message(error: BaseException) -> str | None:
    """The message of the ``eqx.error_if`` check behind a run-time error of compiled code (``JaxRuntimeError:
    INTERNAL: CpuCallback error ...`` under ``jax.jit``, ``EquinoxRuntimeError`` under ``eqx.filter_jit``), or
    None if the error did not come from such a check."""
    found = _RUNTIME_MESSAGE.findall(str(error))
    return found[-1].strip() if found else None


def library_errors(fn: F) -> F:
    """Decorate a public entry point that runs compiled code: a check that fires at run time inside it
    (``eqx.error_if``, buried in a ``JaxRuntimeError: INTERNAL: CpuCallback error ...`` traceback) is re-raised
    as ``ValueError`` whose first line is the library's own message naming the argument."""
    import equinox as eqx

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (jax.errors.JaxRuntimeError, eqx.EquinoxRuntimeError) as e:
            message = runtime_message(e)
            if message is None:
                raise
            raise ValueError(message) from None

    return wrapper  # type: ignore[return-value]


def is_tracer(x: Any) -> bool:
    return isinstance(x, jax.core.Tracer)


def check_finite(name: str, x: Any) -> None:
    """Raise ``ValueError`` if a concrete array holds NaN or inf (no-op on tracers)."""
    if is_tracer(x):
        return
    arr = np.asarray(x)
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        n_bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(
            f"{name}: expected finite values, received {n_bad} NaN/inf entries (shape {arr.shape})"
        )


# ==============================================================================================================
# Portfolio / forecast checks (owned by jaxkit.portfolio and jaxkit.forecast; moved from portfolio/_checks.py)
# ==============================================================================================================


def as_float64_numpy(name: str, x: Any, *, ndim: int | None = None, what: str = "") -> np.ndarray:
    """``x`` (list, tuple, NumPy or JAX array) as a float64 NumPy array; ``TypeError`` naming ``name`` for
    non-numeric input, ``ValueError`` for a wrong number of dimensions."""
    if is_tracer(x):
        raise TypeError(f"{name}: expected a concrete array, received a traced value")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as e:  # ragged lists
        raise TypeError(f"{name}: expected a numeric array, received {type(x).__name__} ({e})") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected a real numeric array, received dtype {arr.dtype}")
    if ndim is not None:
        check_ndim(name, arr, ndim, what=what)
    return arr.astype(np.float64)


def float_dtype(*xs: Any) -> Any:
    """The floating dtype that results from ``xs`` (lists and integers give the default float), as JAX can hold
    it (float32 unless ``jax_enable_x64``)."""
    dts = [np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype for x in xs]
    d = np.result_type(*dts)
    d = d if np.issubdtype(d, np.floating) else np.dtype(np.float64)
    return jax.dtypes.canonicalize_dtype(d)  # float32 unless jax_enable_x64


def warn_if_downcast(name: str, x: Any, *, stacklevel: int = 3) -> None:
    """One ``UserWarning`` when ``x`` is concrete float64 data that JAX will hold as float32 (``jax_enable_x64``
    off): the result then comes back in float32, not in the dtype the caller gave."""
    if is_tracer(x) or jax.config.read("jax_enable_x64"):
        return
    if getattr(x, "dtype", None) == np.float64:
        import warnings

        warnings.warn(
            f"{name}: float64 data is computed in float32 (JAX computes in float32 unless jax_enable_x64 is on); "
            "pass float32 to silence this, or enable x64 for double precision",
            UserWarning,
            stacklevel=stacklevel,
        )


def check_time_order(name: str, x: Any, what: str, why: str) -> None:
    """Refuse a pandas object on a date (or period) index whose rows are not in time order: ``ValueError``
    naming ``name`` (``what``: what was expected in time order; ``why``: what follows row order)."""
    index = getattr(x, "index", None)
    if (
        str(getattr(index, "dtype", "")).startswith(("datetime", "period"))
        and not index.is_monotonic_increasing
    ):
        raise ValueError(
            f"{name}: expected {what} in time order, received one whose index is not increasing ({why}); "
            "call .sort_index() first"
        )


def check_vector(name: str, x: Any, n: int | None = None) -> None:
    """A finite 1-D vector (of length ``n`` if given)."""
    if not is_tracer(x):
        as_float_array(name, x)
    check_ndim(name, x, 1, what="a vector")
    if n is not None and np.shape(x)[0] != n:
        raise ValueError(f"{name}: expected length {n}, received shape {np.shape(x)}")
    check_finite(name, x)


def check_covariance(name: str, cov: Any, n: int | None = None, *, tol: float = 1e-10) -> None:
    """Square, symmetric, finite and positive semi-definite (eigenvalues >= -tol * max|eig|)."""
    if not is_tracer(cov):
        as_float_array(name, cov)
    check_ndim(name, cov, 2, what="a covariance matrix")
    check_nonempty(name, cov)
    shape = np.shape(cov)
    if shape[0] != shape[1]:
        raise ValueError(f"{name}: expected a square (n, n) covariance matrix, received shape {shape}")
    if n is not None and shape[0] != n:
        raise ValueError(f"{name}: expected shape ({n}, {n}) to match the {n} assets, received shape {shape}")
    check_finite(name, cov)
    if is_tracer(cov):
        return
    single = np.asarray(cov).dtype not in (np.float64, np.int64, np.int32)
    c = np.asarray(cov, dtype=np.float64)
    scale = max(float(np.max(np.abs(c))), 1e-300)
    if np.max(np.abs(c - c.T)) > (1e-5 if single else 1e-9) * scale:
        raise ValueError(
            f"{name}: expected a symmetric matrix, max |C - C^T| = {np.max(np.abs(c - c.T)):.3g}"
        )
    lo = float(np.linalg.eigvalsh(0.5 * (c + c.T))[0])
    if lo < -(1e-6 if single else tol) * scale:
        raise ValueError(
            f"{name}: expected a positive semi-definite covariance matrix, smallest eigenvalue is {lo:.3g}"
        )


def check_positive_definite(
    name: str, mat: Any, *, rtol: float = 1e-12, scale: float | None = None, why: str = ""
) -> None:
    """Raise ``ValueError`` unless the symmetric matrix ``mat`` has smallest eigenvalue > ``rtol * scale``
    (``scale``: the size of the problem's entries; default the largest eigenvalue)."""
    c = np.asarray(mat, dtype=np.float64)
    ev = np.linalg.eigvalsh(0.5 * (c + c.T))
    ref = ev[-1] if scale is None else max(float(scale), ev[-1])
    if not ref > 0 or ev[0] <= rtol * ref:
        extra = f" ({why})" if why else ""
        raise ValueError(
            f"{name}: expected a positive definite matrix{extra}, eigenvalues range {ev[0]:.3g} .. {ev[-1]:.3g}"
        )


# ==============================================================================================================
# Checks that hold under jax.jit, NaN from user callables, and a size cap (shared; additive)
# ==============================================================================================================


def finite_checked(name: str, x: Any) -> Any:
    """``x`` after :func:`check_finite` on a concrete value; on a tracer, ``x`` with an ``eqx.error_if`` that
    raises at run time (also under ``jax.jit``/``vmap``) when ``x`` holds NaN or inf."""
    if not is_tracer(x):
        check_finite(name, x)
        return x
    return error_if_invalid(x, ~jnp.isfinite(x), f"{name}: expected finite values, received NaN/inf entries")


def rotation_checked(name: str, R: Any, atol: float = ROTATION_ATOL) -> Any:
    """``R`` after :func:`check_rotation`; on a tracer, ``R`` with an ``eqx.error_if`` that raises at run time
    unless every matrix is a finite rotation (``max |R^T R - I| <= atol``, ``|det R - 1| <= atol``)."""
    check_rotation(name, R, atol)
    if not is_tracer(R):
        return R
    orth = jnp.max(jnp.abs(jnp.swapaxes(R, -1, -2) @ R - jnp.eye(3, dtype=R.dtype)), axis=(-1, -2))
    det = jnp.linalg.det(R)
    bad = ~((orth <= atol) & (jnp.abs(det - 1.0) <= atol))  # NaN compares False, so NaN/inf is bad
    return error_if_invalid(
        R,
        bad,
        f"{name}: expected rotation matrices (R^T R = I, det R = +1 within {atol}), received a non-rotation",
    )


def range_checked(
    name: str, x: Any, lo: float, hi: float, *, what: str = "values", rtol: float = 0.0, interval: str = ""
) -> Any:
    """``x`` whose entries must be finite and lie in ``[lo, hi]`` (widened by ``rtol``): ``ValueError`` on a
    concrete value, ``eqx.error_if`` at run time on a tracer. ``interval`` is how messages write the range."""
    lo_, hi_ = lo - rtol * abs(lo), hi + rtol * abs(hi)
    interval = interval or f"[{lo}, {hi}]"
    if is_tracer(x):
        return error_if_invalid(
            x,
            ~((x >= lo_) & (x <= hi_)),
            f"{name}: expected {what} in {interval}, received a value outside",
        )
    a = np.asarray(x, dtype=np.float64)
    if a.size and (not np.all(np.isfinite(a)) or a.min() < lo_ or a.max() > hi_):
        raise ValueError(
            f"{name}: expected {what} in {interval}, received range [{np.nanmin(a)}, {np.nanmax(a)}]"
            + (" (with NaN/inf)" if not np.all(np.isfinite(a)) else "")
        )
    return x


# NaN policy for user callables. A function a user passes in (a denoiser ``eps_fn``, a score model, a docking
# score network) may return NaN/inf; a sampler that integrates it would pass the NaN silently into its result.
# Every jaxkit function that calls a user callable therefore checks the callable's output where it enters
# (``check_output=True`` by default): a ``ValueError`` where the output is concrete, else (inside ``jax.jit`` or a
# sampler's ``lax.scan`` loop) an ``eqx.error_if`` run-time error, both naming the callable. ``check_output=False`` skips the check (one reduction per call) for speed.


def output_checked(name: str, y: Any, *, check: bool = True) -> Any:
    """The output ``y`` (an array or a pytree of arrays) of the user callable ``name``, checked finite when
    ``check`` (see the NaN policy above): ``ValueError``/run-time error "``name`` returned NaN/inf"."""
    if not check:
        return y
    leaves = [leaf for leaf in jax.tree_util.tree_leaves(y) if hasattr(leaf, "dtype")]
    floats = [leaf for leaf in leaves if jnp.issubdtype(jnp.result_type(leaf), jnp.inexact)]
    if not floats:
        return y
    msg = (
        f"{name}: the callable returned NaN/inf values (a diverging or untrained model?); jaxkit checks the "
        "outputs of user callables, pass check_output=False to skip the check"
    )
    if not any(is_tracer(leaf) for leaf in floats):
        n_bad = sum(int(np.size(a) - np.count_nonzero(np.isfinite(np.asarray(a)))) for a in floats)
        if n_bad:
            raise ValueError(f"{msg} ({n_bad} entries)")
        return y
    bad = jnp.stack([~jnp.all(jnp.isfinite(leaf)) for leaf in floats]).any()
    return jax.tree_util.tree_map(
        lambda leaf: error_if_invalid(leaf, bad, msg) if leaf is floats[0] else leaf, y
    )


# Size cap. A request whose result alone would exceed the cap is refused before anything is allocated, with the
# memory it would need; samplers that can stream work in chunks below it instead. The cap is ``MAX_BYTES``
# (4 GiB), overridden by the environment variable ``JAXKIT_MAX_BYTES`` (bytes; suffixes K, M, G, T accepted) or
# per call by ``max_bytes=``.

MAX_BYTES = 4 * 2**30
"""Default size cap in bytes (4 GiB) of :func:`check_size`; see also ``JAXKIT_MAX_BYTES``."""

_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def size_cap(max_bytes: int | float | None = None) -> int:
    """The size cap in bytes: ``max_bytes`` if given, else ``JAXKIT_MAX_BYTES`` if set, else :data:`MAX_BYTES`."""
    import os

    if max_bytes is not None:
        return int(max_bytes)
    env = os.environ.get("JAXKIT_MAX_BYTES", "").strip().upper().removesuffix("B").removesuffix("I")
    if env:
        try:
            return int(float(env[:-1] if env[-1] in "KMGT" else env) * _SUFFIX.get(env[-1], 1))
        except (ValueError, IndexError):
            raise ValueError(
                f"JAXKIT_MAX_BYTES: expected a number of bytes (e.g. 8G), received {env!r}"
            ) from None
    return MAX_BYTES


def format_bytes(n: float | int) -> str:
    """``n`` bytes as a short human-readable string (binary units)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def check_size(
    name: str, n_bytes: int | float, *, max_bytes: int | float | None = None, hint: str = ""
) -> None:
    """Raise ``ValueError`` naming ``name`` and the memory needed when ``n_bytes`` exceeds the size cap
    (:func:`size_cap`: ``max_bytes``, else ``JAXKIT_MAX_BYTES``, else 4 GiB)."""
    cap = size_cap(max_bytes)
    if n_bytes > cap:
        extra = f"; {hint}" if hint else ""
        raise ValueError(
            f"{name}: the request needs about {format_bytes(n_bytes)}, above the size cap of {format_bytes(cap)} "
            f"(raise it with max_bytes= or the JAXKIT_MAX_BYTES environment variable){extra}"
        )


def seed_rng(seed: Any, name: str = "seed") -> np.random.Generator:
    """``np.random.default_rng(seed)`` after checking that ``seed`` is a non-negative integer (NumPy's own
    message, "expected non-negative integer", does not say which argument); ``None`` draws fresh entropy."""
    if seed is not None:
        check_int(name, seed, minimum=0)
    return np.random.default_rng(seed)


def _pair_labels(x: Any) -> list | None:
    """The labels of a labeled sequence (a ``pandas.Series``: its ``index``), else None (positional)."""
    idx = getattr(x, "index", None)
    return None if idx is None or callable(idx) else list(idx)


def align_pairs(a_name: str, a: Any, b_name: str, b: Any) -> tuple[Any, Any]:
    """Two paired sequences, item ``i`` of one with item ``i`` of the other. Two labeled sequences (``pandas.Series``)
    are aligned by label (``b`` reordered to ``a``'s labels); labels that do not match one to one raise
    ``ValueError`` naming both. Unlabeled sequences pair by position."""
    la, lb = _pair_labels(a), _pair_labels(b)
    if la is None or lb is None or la == lb:
        return a, b
    if len(set(la)) != len(la) or len(set(lb)) != len(lb) or set(la) != set(lb):
        unmatched = sorted(map(str, set(la) ^ set(lb)))[:5]
        duplicated = sorted(
            {str(x) for x in la if la.count(x) > 1} | {str(x) for x in lb if lb.count(x) > 1}
        )[:5]
        detail = f"unmatched {unmatched}" if unmatched else f"duplicated {duplicated}"
        raise ValueError(
            f"{b_name}: expected the labels of {a_name} (paired by label), received labels that do not match one "
            f"to one ({len(la)} and {len(lb)} labels; {detail})"
        )
    return a, b.loc[la]


install_runtime_message_filter()
