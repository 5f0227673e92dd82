"""Probe configuration checks, a tiny vmapped multi-run training, selection on validation, user tasks and
saved probes."""

import shutil

import jax
import numpy as np
import pytest

import jaxkit.ssm as ssm
from jaxkit.ssm import ProbeConfig, train_runs
from jaxkit.ssm._probe import _summarize


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"model": "lstm"}, "model"),
        ({"tasks": ()}, "tasks"),
        ({"tasks": ("nope",)}, "unknown task"),
        ({"threshold": 1.5}, "threshold"),
        ({"lrs": (0.0,)}, "lrs"),
        ({"n_steps": 0}, "n_steps"),
        ({"val_lengths": (60, 99), "test_lengths": (99, 200)}, "val_lengths: expected lengths disjoint"),
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
        val_lengths=(10, 12),
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
        assert len(res["chosen_runs"]) == 1  # one seed: one chosen run, the better one on validation
        chosen = out["runs"][res["chosen_runs"][0]]
        assert chosen["val_acc"] == max(r["val_acc"] for r in runs)
        assert np.isclose(res["test_acc"], chosen["mean_acc"])
        assert res["solved"] == (chosen["mean_acc"] >= cfg.threshold) and res["n_seeds"] == 1
    # 20 steps of Adam reduce the loss below the chance level log(2) on the easy flip-flop reads
    ff = [r["final_loss"] for r in out["runs"] if r["task"] == "flip_flop"]
    assert min(ff) < np.log(2)


def test_selection_reads_validation_never_test():
    # two learning rates x three seeds; the lr with the high TEST accuracy has the low VALIDATION accuracy
    cfg = ProbeConfig(tasks=("parity",), lrs=(1e-3, 3e-3), n_seeds=3, val_lengths=(50,), test_lengths=(99,))
    runs = [(0, s, lr) for s in range(3) for lr in cfg.lrs]
    test = [{99: 1.0 if lr == 3e-3 else 0.6} for _, _, lr in runs]
    val = [{50: 0.55 if lr == 3e-3 else 0.95} for _, _, lr in runs]
    train = [{30: 1.0} for _ in runs]
    results, per = _summarize(cfg, runs, test, val, train, [])
    p = per["parity"]
    assert p["chosen_lrs"] == [1e-3, 1e-3, 1e-3]
    assert p["test_acc"] == pytest.approx(0.6) and not p["solved"]
    assert p["test_ci"] == [pytest.approx(0.6), pytest.approx(0.6)]
    # the public selector is given no test accuracy at all, and picks the same runs
    sub = [{"seed": r["seed"], "val_acc": r["val_acc"], "train_acc": r["train_acc"]} for r in results]
    assert list(ssm.select_runs(sub).values()) == p["chosen_runs"]


def test_seed_interval_is_the_student_t_interval():
    import scipy.stats

    v = [0.9, 0.95, 1.0]
    lo, hi = scipy.stats.t.interval(0.95, 2, loc=np.mean(v), scale=scipy.stats.sem(v))
    assert ssm.seed_interval(v) == (pytest.approx(lo), pytest.approx(min(hi, 1.0)))


def test_custom_task_trains_predicts_on_new_strings_and_saves_bit_identically(tmp_path):
    # "the last symbol is b" over {a, b}, from a user DFA, passed as a Task object and registered by name
    task = ssm.dfa_task("ends_in_b", "ab", ssm.DFA(trans=[[0, 1], [0, 1]], accept=[False, True]))
    ssm.register_task("ends_in_b", task, overwrite=True)
    assert ssm.get_task("ends_in_b") is task and "ends_in_b" in ssm.TASKS
    with pytest.raises(ValueError, match="already registered"):
        ssm.register_task("ends_in_b", task)
    common = dict(
        model="selective_signed",
        d_model=8,
        d_state=4,
        n_layers=1,
        n_steps=60,
        batch_size=16,
        lrs=(1e-2,),
        n_seeds=1,
        train_max_len=8,
        curriculum_start=2,
        n_train_per_length=16,
        train_eval_lengths=(6, 8),
        val_lengths=(12,),
        test_lengths=(20,),
        n_test=16,
    )
    assert ProbeConfig(tasks=("ends_in_b",), **common).resolved_tasks() == [task]
    out = train_runs(ProbeConfig(tasks=(task,), **common), seed=0, return_models=True)
    assert out["config"]["tasks"] == ["ends_in_b"]
    probe = out["models"][out["per_task"]["ends_in_b"]["best_run"]]
    strings = ["ab", "aab", "bba", "abababb", "b" * 30 + "a", "a" * 25 + "b"]
    want = [task.member(s) for s in strings]
    np.testing.assert_array_equal(probe.predict(strings), want)
    # predict pads the strings into one batch: the same classes as one string at a time
    one_by_one = [int(np.argmax(np.asarray(probe.logits(task.encode(s)))[-1])) for s in strings[3:5]]
    np.testing.assert_array_equal(probe.predict(strings[3:5]), one_by_one)
    path = probe.save(tmp_path / "probe")
    back = ssm.TrainedProbe.load(path)
    toks = jax.random.randint(jax.random.key(3), (4, 17), 0, 2)
    np.testing.assert_array_equal(np.asarray(back.logits(toks)), np.asarray(probe.logits(toks)))
    np.testing.assert_array_equal(back.predict(strings), probe.predict(strings))
    assert back.config == ProbeConfig(tasks=("ends_in_b",), **common)


def test_validation_loss_breaks_ties_and_test_still_unread():
    """Equal validation and training accuracy: the run with the lower validation cross-entropy is chosen, whatever
    its test accuracy; without a val_loss key the first run wins, as before."""
    cfg = ProbeConfig(tasks=("parity",), lrs=(1e-3, 3e-3), n_seeds=1, val_lengths=(50,), test_lengths=(99,))
    runs = [(0, 0, 1e-3), (0, 0, 3e-3)]
    test = [{99: 1.0}, {99: 0.5}]
    val = [{50: 1.0}, {50: 1.0}]
    train = [{30: 1.0}, {30: 1.0}]
    _, per = _summarize(cfg, runs, test, val, train, [], val_loss=[0.2, 0.01])
    assert per["parity"]["chosen_lrs"] == [3e-3] and per["parity"]["test_acc"] == pytest.approx(0.5)
    _, per = _summarize(cfg, runs, test, val, train, [], val_loss=[0.01, 0.2])
    assert per["parity"]["chosen_lrs"] == [1e-3]
    tie = [{"seed": 0, "val_acc": 1.0, "train_acc": 1.0}] * 2
    assert ssm.select_runs(tie) == {0: 0}


def test_predict_batches_within_learned_positions():
    """A transformer with learned positions (max_len 20, start token): predict pads to a width that still fits
    (17 + start = 18 <= 20, not the power of two 32) and gives the one-string-at-a-time classes."""
    task = ssm.get_task("parity")
    model = ssm.CausalTransformer(
        4, 2, key=jax.random.key(0), d_model=8, n_heads=2, positional="learned", max_len=20
    )
    probe = ssm.TrainedProbe(
        model, task, ProbeConfig(tasks=("parity",), model="transformer"), vocab=4, n_classes=2
    )
    strings = ["1" * 17, "01", "101"]
    want = [int(np.argmax(np.asarray(probe.logits(task.encode(s)))[-1])) for s in strings]
    np.testing.assert_array_equal(probe.predict(strings), want)


def test_a_probe_saved_before_step_gate_loads_without_it(tmp_path, monkeypatch):
    """Saves written before ``ProbeConfig.step_gate`` existed hold no such key: a dense probe loads with the step
    gate off (its gate arrays have the old shape) and gives the same logits; a current save keeps it on."""
    task = ssm.get_task("parity")
    old_cfg = ProbeConfig(tasks=("parity",), model="dense", d_model=8, d_state=4, step_gate=False)
    from jaxkit.ssm._probe import make_model

    model = make_model(old_cfg, 4, 2, jax.random.key(0))
    probe = ssm.TrainedProbe(model, task, old_cfg, vocab=4, n_classes=2)
    to_dict = ProbeConfig.to_dict
    monkeypatch.setattr(
        ProbeConfig, "to_dict", lambda self: {k: v for k, v in to_dict(self).items() if k != "step_gate"}
    )
    path = probe.save(tmp_path / "old")
    monkeypatch.setattr(ProbeConfig, "to_dict", to_dict)
    loaded = ssm.TrainedProbe.load(path)
    assert loaded.config.step_gate is False and not loaded.model.layers[0].step_gate
    np.testing.assert_array_equal(
        np.asarray(loaded.logits(task.encode("0110"))), np.asarray(probe.logits(task.encode("0110")))
    )
    new_cfg = ProbeConfig(tasks=("parity",), model="dense", d_model=8, d_state=4)
    new = ssm.TrainedProbe(make_model(new_cfg, 4, 2, jax.random.key(1)), task, new_cfg, vocab=4, n_classes=2)
    again = ssm.TrainedProbe.load(new.save(tmp_path / "new"))
    assert again.config.step_gate is True and again.model.layers[0].step_gate
