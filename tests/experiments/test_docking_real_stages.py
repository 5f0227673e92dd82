"""docking_real caches one stage per complex; its key names the model file's SHA-256, so a retrained model is
never scored with the cached poses of the previous one (the run's config does not change when the file does)."""

import hashlib
import types

import experiments.docking_real as dr


class _Ctx:
    config = dict(dr.PRESETS["quick"])
    seed = 0

    def __init__(self):
        self.keys = []

    def stage(self, key, fn):
        self.keys.append(key)
        return fn()

    def progress(self, iterable, desc=""):
        return iterable


def test_stage_keys_change_with_the_model_file(monkeypatch, tmp_path):
    monkeypatch.setattr(dr, "_methods", lambda cfg, rankings: {})
    monkeypatch.setattr(dr, "evaluate_methods", lambda ex, methods, seed: {"id": ex.id})
    examples = [types.SimpleNamespace(id="1abc")]
    ctx = _Ctx()
    assert dr._records(ctx, "val", examples, ("vinardo",)) == [{"id": "1abc"}]
    h = hashlib.sha256()
    for f in sorted(p for p in dr.SHIPPED_MODEL.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(dr.SHIPPED_MODEL)).encode() + b"\0" + f.read_bytes())
    assert ctx.keys == [f"val_1abc_vinardo_{h.hexdigest()[:12]}"]
    # a retrained model (one byte differs in one file of the checkpoint folder) gets other keys
    other = tmp_path / "retrained.jkc"
    for f in (p for p in dr.SHIPPED_MODEL.rglob("*") if p.is_file()):
        (other / f.relative_to(dr.SHIPPED_MODEL)).parent.mkdir(parents=True, exist_ok=True)
        (other / f.relative_to(dr.SHIPPED_MODEL)).write_bytes(f.read_bytes())
    first = next(p for p in sorted(other.rglob("*")) if p.is_file())
    first.write_bytes(first.read_bytes() + b"\0")
    monkeypatch.setattr(dr, "SHIPPED_MODEL", other)
    dr._records(ctx, "val", examples, ("vinardo",))
    assert ctx.keys[1].startswith("val_1abc_vinardo_") and ctx.keys[1] != ctx.keys[0]
