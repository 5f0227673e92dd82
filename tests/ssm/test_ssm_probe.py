"""Probe configuration checks and a tiny vmapped multi-run training."""

import shutil

import numpy as np
import pytest

from jaxkit.ssm import ProbeConfig, train_runs


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"model": "lstm"}, "model"),
        ({"tasks": ()}, "tasks"),
        ({"tasks": ("nope",)}, "unknown task"),
        ({"threshold": 1.5}, "threshold"),
        ({"lrs": (0.0,)}, "lrs"),
        ({"n_steps": 0}, "n_steps"),
    ],
)
def test_bad_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ProbeConfig(**kwargs)


def test_tiny_probe_trains_all_runs_scores_per_length_and_resumes(tmp_path):
    cfg = ProbeConfig(
        tasks=("flip_flop",),
        model="selective_signed",
        d_model=8,
        d_state=4,
        n_layers=1,
        n_steps=20,
        batch_size=8,
        lrs=(1e-2, 3e-3),
        n_seeds=1,
        train_max_len=8,
        curriculum_start=2,
        n_train_per_length=8,
        train_eval_lengths=(6, 8),
        test_lengths=(9, 16),
        n_test=8,
        eval_chunk=16,
        log_every=5,
    )
    out = train_runs(cfg, seed=0, checkpoint_dir=tmp_path)
    # an interruption after step 18: drop the final checkpoint, resume, and get the same run back
    shutil.rmtree(tmp_path / "ckpt_000000020")  # a checkpoint is a folder (orbax arrays + checked manifest)
    again = train_runs(cfg, seed=0, checkpoint_dir=tmp_path, resume=True)
    assert again["timing"]["resumed_from"] == 18
    assert again["runs"] == out["runs"]
    assert [c["step"] for c in out["runs"][0]["curve"]] == [5, 10, 15, 20]
    assert len(out["runs"]) == 2
    for r in out["runs"]:
        assert set(r["acc_by_length"]) == {9, 16}
        assert all(0.0 <= a <= 1.0 for a in r["acc_by_length"].values())
        assert np.isfinite(r["final_loss"])
        assert set(r["train_acc_by_length"]) == {6, 8} and 0.0 <= r["train_acc"] <= 1.0
    for task, res in out["per_task"].items():
        runs = [r for r in out["runs"] if r["task"] == task]
        best = max(r["mean_acc"] for r in runs)
        assert np.isclose(np.mean(list(res["acc_by_length"].values())), best)
        assert res["solved"] == (best >= cfg.threshold) and res["n_seeds"] == 1
    # 20 steps of Adam reduce the loss below the chance level log(2) on the easy flip-flop reads
    ff = [r["final_loss"] for r in out["runs"] if r["task"] == "flip_flop"]
    assert min(ff) < np.log(2)
