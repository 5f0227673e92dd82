"""Run the whole fuzz table once and write what it found (not a test; ``python tests/fuzz/fuzz_report.py``).

Writes ``tests/fuzz/examples/bases.json`` (the labels of every base call found from a signature, so the default
run starts its search where it ended) and prints the violation counts per subpackage, with the ``PENDING`` and
``KNOWN_VIOLATIONS`` entries that match the run (for review before they go into ``_fuzz_tables.py``).
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))  # this checkout's jaxkit, not an installed one
os.environ["XLA_FLAGS"] = "--xla_backend_optimization_level=0"

from jaxtyping import install_import_hook  # noqa: E402

install_import_hook("jaxkit", "beartype.beartype")

import _fuzz_exports as fe  # noqa: E402
import _fuzz_factories as ff  # noqa: E402
import _fuzz_harness as fh  # noqa: E402


def main() -> None:
    only = tuple(f"jaxkit.{s}." for s in sys.argv[1].split(",")) if len(sys.argv) > 1 else ("jaxkit.",)
    bases_file = HERE / "examples" / "bases.json"
    cached = json.loads(bases_file.read_text()) if bases_file.exists() else {}
    bases, pending, known = dict(cached), {}, {}
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    times = {}
    for e in fe.callables():
        if not e.name.startswith(only):
            continue
        t0 = time.time()
        print("...", e.name, file=sys.stderr, flush=True)
        if e.name in ff.FACTORIES:
            kwargs = ff.FACTORIES[e.name]()
            out, err = fh.call(e.obj, kwargs, fh.BASE_TIMEOUT_S)
            params, _ = fh.signature_parts(e.obj)
            defaults = {k: v for k, v in fh.numeric_defaults(params).items() if k not in kwargs}
            base = None if err else fh.Base(e.obj, kwargs, {}, defaults, out, "factory")
            why = f"{type(err).__name__}: {err}" if err else ""
        else:
            base, why = fh.find_base(e.obj, ff.TYPE_FACTORIES, cached.get(e.name))
            if base is not None:
                bases[e.name] = base.labels
        counts[e.subpackage]["exports"] += 1
        if base is None:
            pending[e.name] = why.splitlines()[0][:150] if why else "no base call"
            counts[e.subpackage]["pending"] += 1
            continue
        v = fh.violations(e.name, base)
        counts[e.subpackage]["calls"] += 1 + len(fh.edges(base.kwargs, base.defaults))
        counts[e.subpackage]["violations"] += len(v)
        counts[e.subpackage]["violating exports"] += bool(v)
        if v:
            known[e.name] = v
        times[e.name] = time.time() - t0
    bases_file.parent.mkdir(exist_ok=True)
    if bases_file.exists():  # another run (of other subpackages) may have written meanwhile
        bases = {**json.loads(bases_file.read_text()), **bases}
    bases_file.write_text(json.dumps(dict(sorted(bases.items())), indent=1) + "\n")
    print("| subpackage | exports | pending | calls | violations | exports with a violation |")
    print("|---|---|---|---|---|---|")
    for sub, c in sorted(counts.items()):
        print(
            f"| {sub} | {c['exports']} | {c['pending']} | {c['calls']} | {c['violations']} | {c['violating exports']} |"
        )
    print("\nTIMES =", {k: round(v, 2) for k, v in sorted(times.items(), key=lambda kv: -kv[1])})
    print("\nPENDING = {")
    for k, v in pending.items():
        print(f"    {k!r}: {v!r},")
    print("}\nKNOWN_VIOLATIONS = {")
    for k, v in known.items():
        print(f"    {k!r}: {{")
        for (p, kind), d in v.items():
            print(f"        ({p!r}, {kind!r}): {d[:110]!r},")
        print("    },")
    print("}")


if __name__ == "__main__":
    main()
