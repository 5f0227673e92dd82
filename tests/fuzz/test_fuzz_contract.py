"""The contract of docs/contracts.md, checked on every exported callable of every ``jaxkit`` subpackage.

- ``test_export_contract[name]``, one per export: the export has a base call, either built from its signature
  (``_fuzz_harness.find_base``) or supplied by ``_fuzz_factories.FACTORIES``; the few with neither are listed in
  ``_fuzz_tables.PENDING`` with a reason, and that list may only shrink (an entry that now has a base call fails
  until it is removed). A new export with neither fails here. The base call returns finite values; every edge of the table (``_fuzz_values.edges``)
  ends in a clear error or a finite result of the right shape; anything else is a violation and fails the test,
  unless it is listed in ``_fuzz_tables.KNOWN_VIOLATIONS`` (one reason each), a list that may only shrink. Then
  Hypothesis replaces one array argument at a time by drawn arrays of the same shape (derandomized: the default
  run is the same on every machine).
- ``test_export_contract_long`` (``pytest -m fuzz``): the same with many more drawn examples, random seeds and the
  committed example database ``tests/fuzz/examples/`` so that a failure found once is replayed first next time;
  it covers the exports of ``_fuzz_tables.SLOW`` too (base calls that take seconds: the default run leaves them
  to this run to stay within its time budget).

Runtime type checking (jaxtyping + beartype, tests/conftest.py) is on.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import _fuzz_exports as fe
import _fuzz_factories as ff
import _fuzz_harness as fh
import _fuzz_tables as ft
import hypothesis.extra.numpy as hnp
import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE / "examples"
BASES_FILE = EXAMPLES / "bases.json"

EXPORTS = {e.name: e for e in fe.callables()}


@functools.cache
def _cached_labels() -> dict[str, dict[str, str]]:
    return json.loads(BASES_FILE.read_text()) if BASES_FILE.exists() else {}


@functools.cache
def base_of(name: str) -> tuple[fh.Base | None, str]:
    """The valid base call of an export: the factory's, else one found from the signature."""
    obj = EXPORTS[name].obj
    if name in ff.FACTORIES:
        kwargs = ff.FACTORIES[name]()
        out, err = fh.call(obj, kwargs, fh.BASE_TIMEOUT_S)
        if err is not None:
            return None, f"the factory's base call fails: {type(err).__name__}: {err}"
        params, _ = fh.signature_parts(obj)
        defaults = {k: v for k, v in fh.numeric_defaults(params).items() if k not in kwargs}
        return fh.Base(obj, kwargs, {k: "factory" for k in kwargs}, defaults, out, "factory"), ""
    return fh.find_base(obj, ff.TYPE_FACTORIES, _cached_labels().get(name))


def test_the_export_list_is_complete():
    """Every subpackage contributes; the walk sees re-exported submodules (geometry.so3, pde.burgers)."""
    subs = {e.subpackage for e in EXPORTS.values()}
    assert subs == set(fe.SUBPACKAGES)
    assert "jaxkit.geometry.so3.exp" in EXPORTS and "jaxkit.kernels.linear_scan.linear_scan" in EXPORTS
    assert len(EXPORTS) > 400


def test_documented_exceptions_are_on_the_contracts_page():
    page = (fe.ROOT / "docs" / "contracts.md").read_text()
    missing = [n for n in (*ft.DOCUMENTED, *ft.SHAPE_BY_VALUE) if f"`{n}`" not in page]
    assert not missing, f"documented exceptions missing from docs/contracts.md: {missing}"


def test_the_lists_name_exports():
    """``PENDING``, ``SLOW`` and ``KNOWN_VIOLATIONS`` name current exports only; every entry carries a reason."""
    assert sorted(set(ft.PENDING) - set(EXPORTS)) == [], "PENDING names an export that no longer exists"
    assert sorted(set(ft.SLOW) - set(EXPORTS)) == [], "SLOW names an export that no longer exists"
    assert sorted(set(ft.SLOW) & set(ft.PENDING)) == [], "an export is either PENDING or fuzzed"
    assert sorted(set(ft.KNOWN_VIOLATIONS) - set(EXPORTS)) == []
    assert sorted(set(ft.SHAPE_BY_VALUE) - set(EXPORTS)) == [], (
        "SHAPE_BY_VALUE names an export that no longer exists"
    )
    assert all(isinstance(r, str) and r for v in ft.KNOWN_VIOLATIONS.values() for r in v.values())
    assert all(isinstance(r, str) and r for r in (*ft.PENDING.values(), *ft.SLOW.values()))


FAST = [n for n in EXPORTS if n not in ft.SLOW]


def _violations(name: str) -> dict[tuple[str, str], str]:
    base, why = base_of(name)
    assert base is not None, f"{name}: no base call ({why})"
    return fh.violations(name, base)


def _random_arrays(base: fh.Base):
    """Hypothesis: one float array argument of the base call replaced by a drawn array of the same shape."""
    slots = [
        k
        for k, v in base.kwargs.items()
        if isinstance(v, np.ndarray | jax.Array)
        and not (isinstance(v, jax.Array) and jax.dtypes.issubdtype(v.dtype, jax.dtypes.prng_key))
        and np.asarray(v).dtype.kind == "f"
        and np.size(v) > 0
    ]
    if not slots:
        return None
    elements = st.floats(-10.0, 10.0, width=32, allow_subnormal=False)
    return st.sampled_from(slots).flatmap(
        lambda k: st.tuples(
            st.just(k),
            hnp.arrays(np.asarray(base.kwargs[k]).dtype, np.shape(base.kwargs[k]), elements=elements),
        )
    )


def _check_drawn(name: str, base: fh.Base, drawn) -> None:
    param, value = drawn
    kwargs = dict(base.kwargs)
    kwargs[param] = value
    res, err = fh.call(base.fn, kwargs)
    o = fh.classify(err, res, named=[param])
    allowed, reason = ft.DOCUMENTED.get(name, (frozenset(), ""))
    if o.kind == "violation" and "drawn" in allowed and o.detail.startswith("non-finite result"):
        assert "warning" not in reason.lower() or fh.WARNED, f"{name}: documented nan without its warning"
        return
    if o.kind == "violation" and (param, "drawn") not in ft.KNOWN_VIOLATIONS.get(name, {}):
        raise AssertionError(f"{name}({param}=<drawn array>): {o.detail}")


def _contract(name: str, examples: int, database) -> None:
    base, why = base_of(name)
    if name in ft.PENDING:
        # shrinking only: a PENDING export that now has a base call must leave the list (and be fuzzed)
        assert base is None, f"{name} now has a base call: remove it from _fuzz_tables.PENDING"
        return
    assert base is not None, (
        f"{name}: no base call from its signature ({why}) and no factory in _fuzz_factories.FACTORIES; "
        "add one (a new export is covered by the fuzz suite, not skipped)"
    )
    found = _violations(name)
    known = ft.KNOWN_VIOLATIONS.get(name, {})
    new = {k: v for k, v in found.items() if k not in known}
    fixed = [k for k in known if k[1] != "drawn" and k not in found]
    assert not new, f"{name}: contract violations:\n" + "\n".join(
        f"  {p} <- {k}: {d}" for (p, k), d in new.items()
    )
    assert not fixed, f"{name}: no longer violates {fixed}: remove them from _fuzz_tables.KNOWN_VIOLATIONS"
    strategy = _random_arrays(base)
    if strategy is None or examples == 0:
        return

    @settings(
        max_examples=examples,
        derandomize=database is None,
        database=database,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )
    @given(strategy)
    def drawn(d):
        _check_drawn(name, base, d)

    drawn()


@pytest.mark.parametrize("name", FAST)
def test_export_contract(name):
    _contract(name, int(os.environ.get("JAXKIT_FUZZ_EXAMPLES", "2")), None)


@pytest.mark.fuzz
@pytest.mark.parametrize("name", list(EXPORTS))
def test_export_contract_long(name):
    _contract(
        name, int(os.environ.get("JAXKIT_FUZZ_EXAMPLES", "50")), DirectoryBasedExampleDatabase(EXAMPLES)
    )
