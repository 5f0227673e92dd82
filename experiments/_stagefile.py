"""The stage-file payload: values as JSON plus arrays, in a format that cannot run code when it is read.

A stage result is encoded as one JSON tree and a list of NumPy arrays, stored together as an ``.npz`` archive read
with ``allow_pickle=False`` (so reading a stage file never unpickles anything). The tree holds JSON values
directly and tagged objects (``{"$t": tag, ...}``) for everything else:

- ``float`` NaN/inf, ``tuple``, ``set``, ``complex``, ``bytes``, ``pathlib.Path``, dicts with non-string keys;
- NumPy arrays and scalars (numeric, bool, datetime dtypes; object arrays element by element), JAX arrays
  (restored as JAX arrays; PRNG key arrays with their implementation);
- dataclasses (Equinox modules included), named tuples, enums and plain objects whose class is defined in
  ``jaxkit``, ``experiments``, ``optax``, ``equinox`` or ``diffrax`` (restored without calling ``__init__``:
  the class is looked up by name in that allow-list and its fields are set);
- module-level functions of those packages and of ``jax``/``numpy`` (by name);
- ``pandas`` ``DataFrame``/``Series``/``Index`` (values, index, names, datetime time zones);
- RDKit molecules (RDKit's own binary format with all properties; not a pickle).

Anything else raises :class:`StageEncodeError` naming where in the result it sits.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import importlib
import io
import json
import math
import re
from pathlib import PurePath
from typing import Any

import numpy as np

FORMAT = "jaxkit-stage-2"
_CLASS_PACKAGES = ("jaxkit", "experiments", "optax", "equinox", "diffrax")
_FUNCTION_PACKAGES = _CLASS_PACKAGES + ("jax", "numpy")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


_NO = object()  # "not this encoder's type"


class StageEncodeError(TypeError):
    """A stage result holds a value that stage files cannot store."""


class StageDecodeError(ValueError):
    """A stage payload is not a valid stage encoding (or names a class outside the allow-list)."""


def _qualname(obj: Any) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


def _allowed(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _resolve(name: str, packages: tuple[str, ...]) -> Any:
    module, _, qual = str(name).partition(":")
    if not (_NAME.match(module) and _NAME.match(qual) and _allowed(module, packages)):
        raise StageDecodeError(f"refusing to resolve {name!r}: not a name inside {', '.join(packages)}")
    obj = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


class _Encoder:
    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []

    def array(self, a: np.ndarray) -> int:
        self.arrays.append(a)
        return len(self.arrays) - 1

    def __call__(self, x: Any, where: str) -> Any:
        for encode in (self.builtin, self.numeric, self.library):
            out = encode(x, where)
            if out is not _NO:
                return out
        return self.instance(x, where)

    def builtin(self, x: Any, where: str) -> Any:
        if x is None or isinstance(x, bool | str):
            return x
        if isinstance(x, int) and type(x) is int:
            return x
        if isinstance(x, float) and type(x) is float:
            return x if math.isfinite(x) else {"$t": "float", "v": repr(x)}
        if isinstance(x, list) and type(x) is list:
            return [self(v, f"{where}[{i}]") for i, v in enumerate(x)]
        if isinstance(x, dict) and type(x) is dict:
            if all(isinstance(k, str) for k in x) and "$t" not in x:
                return {k: self(v, f"{where}[{k!r}]") for k, v in x.items()}
            return {
                "$t": "dict",
                "v": [[self(k, f"{where} key"), self(v, f"{where}[{k!r}]")] for k, v in x.items()],
            }
        if type(x) is tuple:
            return {"$t": "tuple", "v": [self(v, f"{where}[{i}]") for i, v in enumerate(x)]}
        if isinstance(x, set | frozenset):
            return {"$t": type(x).__name__, "v": [self(v, f"{where}{{}}") for v in x]}
        if isinstance(x, complex):
            return {"$t": "complex", "v": [x.real, x.imag]}
        if isinstance(x, bytes):
            return {"$t": "bytes", "v": base64.b64encode(x).decode()}
        if isinstance(x, PurePath):
            return {"$t": "path", "v": str(x)}
        return _NO

    def numeric(self, x: Any, where: str) -> Any:
        if isinstance(x, np.ndarray):
            if x.dtype.kind == "O":
                return {"$t": "ndobj", "shape": list(x.shape), "v": [self(v, where) for v in x.reshape(-1)]}
            if x.dtype.kind not in "biufcmMSU":
                raise StageEncodeError(f"{where}: NumPy dtype {x.dtype} cannot be stored")
            return {"$t": "nd", "i": self.array(x)}
        if isinstance(x, np.generic):
            return {"$t": "npscalar", "i": self.array(np.asarray(x))}
        mod = type(x).__module__ or ""
        if mod.startswith(("jax", "jaxlib")) and hasattr(x, "dtype") and hasattr(x, "shape"):
            import jax

            if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
                impl = str(jax.random.key_impl(x))
                return {"$t": "jaxkey", "impl": impl, "i": self.array(np.asarray(jax.random.key_data(x)))}
            return {"$t": "jax", "i": self.array(np.asarray(x))}
        return _NO

    def library(self, x: Any, where: str) -> Any:
        mod = type(x).__module__ or ""
        if mod.startswith("pandas"):
            return self.pandas(x, where)
        if mod.startswith("rdkit") and type(x).__name__ == "Mol":
            from rdkit import Chem

            raw = x.ToBinary(Chem.PropertyPickleOptions.AllProps)
            return {"$t": "rdkit.Mol", "v": base64.b64encode(raw).decode()}
        return _NO

    def instance(self, x: Any, where: str) -> Any:
        cls = type(x)
        if isinstance(x, enum.Enum) and _allowed(cls.__module__, _CLASS_PACKAGES):
            return {"$t": "enum", "cls": _qualname(cls), "v": x.name}
        if isinstance(x, tuple) and hasattr(x, "_fields") and _allowed(cls.__module__, _CLASS_PACKAGES):
            return {
                "$t": "namedtuple",
                "cls": _qualname(cls),
                "v": [self(v, f"{where}.{f}") for f, v in zip(x._fields, x)],
            }
        if isinstance(x, type) or (
            callable(x)
            and hasattr(x, "__qualname__")
            and hasattr(x, "__module__")
            and not dataclasses.is_dataclass(x)
        ):
            return self.function(x, where)
        if _allowed(cls.__module__, _CLASS_PACKAGES):
            if dataclasses.is_dataclass(x):
                fields = {f.name: getattr(x, f.name) for f in dataclasses.fields(x) if hasattr(x, f.name)}
            elif hasattr(x, "__dict__") and not hasattr(cls, "__slots__"):
                fields = dict(vars(x))
            else:
                raise StageEncodeError(
                    f"{where}: {_qualname(cls)} has neither dataclass fields nor a __dict__"
                )
            return {
                "$t": "obj",
                "cls": _qualname(cls),
                "v": {k: self(v, f"{where}.{k}") for k, v in fields.items()},
            }
        raise StageEncodeError(
            f"{where}: a {cls.__module__}.{cls.__qualname__} cannot be stored in a stage file (stage files hold JSON "
            "values, arrays, pandas and RDKit objects, and objects of jaxkit/experiments classes; never pickles)"
        )

    def function(self, f: Any, where: str) -> Any:
        name = _qualname(f)
        if "<" in name or not _allowed(f.__module__, _FUNCTION_PACKAGES):
            raise StageEncodeError(
                f"{where}: the function {name} cannot be stored (only named functions of "
                f"{', '.join(_FUNCTION_PACKAGES)})"
            )
        try:
            same = _resolve(name, _FUNCTION_PACKAGES) is f
        except Exception:  # noqa: BLE001
            same = False
        if not same:
            raise StageEncodeError(f"{where}: the function {name} cannot be found again by its name")
        return {"$t": "fn", "v": name}

    def pandas(self, x: Any, where: str) -> Any:
        import pandas as pd

        if isinstance(x, pd.DataFrame):
            return {
                "$t": "pd.DataFrame",
                "index": self.pandas(x.index, f"{where}.index"),
                "columns": self.pandas(x.columns, f"{where}.columns"),
                "data": [self.column(x.iloc[:, j], f"{where}.iloc[:, {j}]") for j in range(x.shape[1])],
            }
        if isinstance(x, pd.Series):
            return {
                "$t": "pd.Series",
                "index": self.pandas(x.index, f"{where}.index"),
                "name": self(x.name, f"{where}.name"),
                "data": self.column(x, where),
            }
        if isinstance(x, pd.MultiIndex):
            return {
                "$t": "pd.MultiIndex",
                "v": [self(tuple(t), where) for t in x.tolist()],
                "names": [self(n, where) for n in x.names],
            }
        if isinstance(x, pd.DatetimeIndex):
            return {
                "$t": "pd.DatetimeIndex",
                "i": self.array(x.asi8.copy()),
                "unit": getattr(x, "unit", "ns"),
                "tz": None if x.tz is None else str(x.tz),
                "freq": x.freqstr,
                "name": self(x.name, where),
            }
        if isinstance(x, pd.RangeIndex):
            return {"$t": "pd.RangeIndex", "v": [x.start, x.stop, x.step], "name": self(x.name, where)}
        if isinstance(x, pd.Index):
            return {"$t": "pd.Index", "v": self.column(x, where), "name": self(x.name, where)}
        if isinstance(x, pd.Timestamp):
            return {"$t": "pd.Timestamp", "v": x.isoformat()}
        raise StageEncodeError(f"{where}: pandas {type(x).__name__} cannot be stored in a stage file")

    def column(self, s: Any, where: str) -> Any:
        import pandas as pd

        if isinstance(s.dtype, pd.DatetimeTZDtype) or str(s.dtype).startswith("datetime64"):
            idx = pd.DatetimeIndex(s)
            return {
                "$t": "datetimes",
                "i": self.array(idx.asi8.copy()),
                "unit": getattr(idx, "unit", "ns"),
                "tz": None if idx.tz is None else str(idx.tz),
            }
        if isinstance(s.dtype, pd.CategoricalDtype) or s.dtype == object or s.dtype.kind not in "biufcmM":
            return {"$t": "values", "dtype": str(s.dtype), "v": [self(v, where) for v in s.tolist()]}
        return {"$t": "nd", "i": self.array(np.asarray(s))}


class _Decoder:
    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays

    def array(self, i: Any) -> np.ndarray:
        try:
            return self.arrays[f"a{int(i)}"]
        except KeyError:
            raise StageDecodeError(f"array {i} is missing from the stage file") from None

    def __call__(self, x: Any) -> Any:
        if isinstance(x, list):
            return [self(v) for v in x]
        if not isinstance(x, dict):
            return x
        t = x.get("$t")
        if t is None:
            return {k: self(v) for k, v in x.items()}
        if t in ("enum", "namedtuple", "obj"):
            return self.instance(t, x)
        if t.startswith("pd.") or t in ("datetimes", "values"):
            return self.pandas(t, x)
        return self.value(t, x)

    def value(self, t: str, x: dict) -> Any:
        v = x.get("v")
        if t == "float":
            return float(v)
        if t == "dict":
            return {self(k): self(val) for k, val in v}
        if t == "tuple":
            return tuple(self(e) for e in v)
        if t in ("set", "frozenset"):
            return (set if t == "set" else frozenset)(self(e) for e in v)
        if t == "complex":
            return complex(*v)
        if t == "bytes":
            return base64.b64decode(v)
        if t == "path":
            from pathlib import Path

            return Path(v)
        if t == "nd":
            return self.array(x["i"])
        if t == "ndobj":
            out = np.empty(len(v), dtype=object)
            out[:] = [self(e) for e in v]
            return out.reshape(x["shape"])
        if t == "npscalar":
            return self.array(x["i"])[()]
        if t == "jax":
            import jax.numpy as jnp

            return jnp.asarray(self.array(x["i"]))
        if t == "jaxkey":
            import jax

            return jax.random.wrap_key_data(self.array(x["i"]), impl=x["impl"])
        if t == "rdkit.Mol":
            from rdkit import Chem

            return Chem.Mol(base64.b64decode(v))
        if t == "fn":
            return _resolve(v, _FUNCTION_PACKAGES)
        raise StageDecodeError(f"unknown tag {t!r} in the stage file")

    def instance(self, t: str, x: dict) -> Any:
        v = x.get("v")
        cls = _resolve(x["cls"], _CLASS_PACKAGES)
        if not isinstance(cls, type):
            raise StageDecodeError(f"{x['cls']} is not a class")
        if t == "enum":
            if not issubclass(cls, enum.Enum):
                raise StageDecodeError(f"{x['cls']} is not an enum")
            return cls[v]
        if t == "namedtuple":
            if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
                raise StageDecodeError(f"{x['cls']} is not a named tuple")
            return cls._make(self(e) for e in v)
        obj = object.__new__(cls)
        for k, val in v.items():
            object.__setattr__(obj, k, self(val))
        return obj

    def pandas(self, t: str, x: dict) -> Any:
        import pandas as pd

        if t == "pd.DataFrame":
            index, columns = self(x["index"]), self(x["columns"])
            cols = [self.column(c) for c in x["data"]]
            df = pd.DataFrame({j: c for j, c in enumerate(cols)}, index=index)
            df.columns = columns
            return df
        if t == "pd.Series":
            return pd.Series(self.column(x["data"]), index=self(x["index"]), name=self(x["name"]))
        if t == "pd.MultiIndex":
            return pd.MultiIndex.from_tuples([self(e) for e in x["v"]], names=[self(n) for n in x["names"]])
        if t == "pd.DatetimeIndex":
            unit = str(x.get("unit", "ns"))
            idx = pd.DatetimeIndex(self.array(x["i"]).astype(f"datetime64[{unit}]"), name=self(x["name"]))
            if x.get("tz"):
                idx = idx.tz_localize("UTC").tz_convert(x["tz"])
            if x.get("freq"):
                idx = pd.DatetimeIndex(idx, freq=x["freq"])
            return idx
        if t == "pd.RangeIndex":
            return pd.RangeIndex(*x["v"], name=self(x["name"]))
        if t == "pd.Index":
            return pd.Index(self.column(x["v"]), name=self(x["name"]))
        if t == "pd.Timestamp":
            return pd.Timestamp(x["v"])
        return self.column(x)

    def column(self, c: dict) -> Any:
        import pandas as pd

        t = c.get("$t")
        if t == "datetimes":
            unit = str(c.get("unit", "ns"))
            idx = pd.DatetimeIndex(self.array(c["i"]).astype(f"datetime64[{unit}]"))
            return idx.tz_localize("UTC").tz_convert(c["tz"]) if c.get("tz") else idx
        if t == "values":
            vals = [self(e) for e in c["v"]]
            arr = np.empty(len(vals), dtype=object)
            arr[:] = vals
            return pd.array(arr, dtype=c["dtype"]) if c["dtype"] not in ("object",) else arr
        return self(c)


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` as stage-file payload bytes (raises :class:`StageEncodeError`)."""
    enc = _Encoder()
    tree = enc(obj, "result")
    buf = io.BytesIO()
    text = json.dumps({"format": FORMAT, "tree": tree}, allow_nan=False).encode()
    np.savez(buf, tree=np.frombuffer(text, dtype=np.uint8), **{f"a{i}": a for i, a in enumerate(enc.arrays)})
    return buf.getvalue()


def loads(data: bytes) -> Any:
    """Decode stage-file payload bytes written by :func:`dumps` (never unpickles; raises
    :class:`StageDecodeError` for anything else)."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as e:  # noqa: BLE001 (not an npz archive, or one holding pickled objects)
        raise StageDecodeError(f"not a stage payload ({type(e).__name__}: {e})") from None
    if "tree" not in arrays:
        raise StageDecodeError("not a stage payload (no tree)")
    try:
        doc = json.loads(arrays.pop("tree").tobytes())
    except ValueError as e:
        raise StageDecodeError(f"not a stage payload ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StageDecodeError(f"not a {FORMAT} payload")
    return _Decoder(arrays)(doc["tree"])
