"""docking_real caches one stage per complex and method. The model's keys name the model file's SHA-256, so a
retrained model is never scored with the cached poses of the previous one (the run's config does not change when
the file does); the baselines' keys do not, so Vina is not re-run for a new model."""

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


def _fake_eval(ex, methods, seed):
    (name,) = methods
    return {"id": ex.id, "split": "val", "methods": {name: {"top1_rmsd": 1.0, "by": name}}}


def test_stage_keys_change_with_the_model_file_and_records_merge(monkeypatch, tmp_path):
    monkeypatch.setattr(dr, "evaluate_methods", _fake_eval)
    examples = [types.SimpleNamespace(id="1abc")]
    ctx = _Ctx()
    base = dr._stages(ctx, "val", examples, {"vina": None, "random:vinardo": None})
    ours = dr._stages(ctx, "val", examples, {"ours:vinardo": None}, dr._model_sha256()[:12])
    h = hashlib.sha256()
    for f in sorted(p for p in dr.SHIPPED_MODEL.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(dr.SHIPPED_MODEL)).encode() + b"\0" + f.read_bytes())
    assert ctx.keys == [
        "val_1abc_vina",
        "val_1abc_random:vinardo",
        f"val_1abc_ours:vinardo_{h.hexdigest()[:12]}",
    ]
    (rec,) = dr._merge(base, ours)
    assert rec["id"] == "1abc" and rec["split"] == "val"
    assert {k: v["by"] for k, v in rec["methods"].items()} == {
        "vina": "vina",
        "random:vinardo": "random:vinardo",
        "ours:vinardo": "ours:vinardo",
    }
    # a retrained model (one byte differs in one file of the checkpoint folder) gets other keys
    other = tmp_path / "retrained.jkc"
    for f in (p for p in dr.SHIPPED_MODEL.rglob("*") if p.is_file()):
        (other / f.relative_to(dr.SHIPPED_MODEL)).parent.mkdir(parents=True, exist_ok=True)
        (other / f.relative_to(dr.SHIPPED_MODEL)).write_bytes(f.read_bytes())
    first = next(p for p in sorted(other.rglob("*")) if p.is_file())
    first.write_bytes(first.read_bytes() + b"\0")
    monkeypatch.setattr(dr, "SHIPPED_MODEL", other)
    dr._stages(ctx, "val", examples, {"ours:vinardo": None}, dr._model_sha256()[:12])
    assert ctx.keys[-1].startswith("val_1abc_ours:vinardo_") and ctx.keys[-1] != ctx.keys[2]
