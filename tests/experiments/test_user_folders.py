"""Nothing of a user's is deleted (issue 49): a folder is a run folder only if it carries the project's run.json;
any other non-empty folder, and an --out that is a file, is refused naming --out and left exactly as it was."""

import dataclasses
import json

import pytest

from experiments import _cli, _registry


@pytest.fixture(autouse=True)
def _no_writes_into_the_repository(monkeypatch, tmp_path):
    from experiments import _report

    monkeypatch.setattr(_report, "PAGES", tmp_path / "reproductions")
    monkeypatch.setattr(_report, "PUBLISHED", tmp_path / "published")
    monkeypatch.setattr(_cli, "PUBLISHED", tmp_path / "published")


@pytest.fixture
def saddle(monkeypatch):
    """The real registered experiment, its body replaced by one that records being called (and would write)."""
    _registry.discover()
    calls = []

    def run(ctx):
        calls.append(ctx.out_dir)
        (ctx.out_dir / "metrics_body.txt").write_text("ran")
        return {"x": 1.0}

    exp = _cli.EXPERIMENTS["saddle_to_saddle"]
    monkeypatch.setitem(_cli.EXPERIMENTS, "saddle_to_saddle", dataclasses.replace(exp, run=run))
    return calls


def _snapshot(root):
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def test_a_users_project_folder_is_refused_and_nothing_deleted(saddle, tmp_path, capsys):
    """Before: `run saddle_to_saddle --preset quick --out proj` deleted proj/thesis.tex and
    proj/checkpoints/model.pt ('starting over ... removed the earlier run's 2 files'): a checkpoints/ folder was
    taken for a run folder."""
    proj = tmp_path / "proj"
    (proj / "checkpoints").mkdir(parents=True)
    (proj / "thesis.tex").write_text("\\documentclass{article}")
    (proj / "checkpoints" / "model.pt").write_bytes(b"\x80weights")
    before = _snapshot(proj)
    for extra in ([], ["--resume"]):
        rc = _cli.main(["run", "saddle_to_saddle", "--preset", "quick", "--out", str(proj), *extra])
        err = capsys.readouterr().err
        assert rc == 2 and err.startswith("error: --out ") and err.count("\n") == 1, err
        assert "not an empty folder nor a run folder" in err and "thesis.tex" in err
    assert _snapshot(proj) == before  # not even a lock file
    assert saddle == []


@pytest.mark.parametrize(
    "contents",
    [
        {"metrics.json": '{"experiment": "saddle_to_saddle"}'},
        {"stages/a.stage": "x"},
        {".lock": "", "notes.md": "mine"},
        {"run.json": '{"name": "my own run file"}'},  # a run.json that is not this project's record
        {"run.json": "not json"},
    ],
)
def test_folders_that_only_look_like_run_folders_are_refused(saddle, tmp_path, capsys, contents):
    out = tmp_path / "out"
    for rel, text in contents.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    before = _snapshot(out)
    assert _cli.main(["run", "saddle_to_saddle", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --out {out}") and err.count("\n") == 1, err
    assert _snapshot(out) == before and saddle == []


def test_out_that_is_a_file_is_refused_naming_the_flag(saddle, tmp_path, capsys):
    """Before: a pathlib FileExistsError traceback."""
    f = tmp_path / "results.txt"
    f.write_text("mine")
    for out in (f, f / "sub"):
        assert _cli.main(["run", "saddle_to_saddle", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --out {out}") and ("is a file" in err or "existing file" in err), err
    assert f.read_text() == "mine" and saddle == []


def test_a_run_folder_is_cleared_and_a_run_of_another_identity_is_not_resumed(saddle, tmp_path, capsys):
    out = tmp_path / "run"
    assert _cli.main(["run", "saddle_to_saddle", "--out", str(out)]) == 0
    rec = json.loads((out / "run.json").read_text())
    assert rec["experiment"] == "saddle_to_saddle" and rec["preset"] == "quick" and rec["seed"] == 0
    capsys.readouterr()
    assert _cli.main(["run", "saddle_to_saddle", "--seed", "3", "--out", str(out), "--resume"]) == 2
    assert "belongs to another run" in capsys.readouterr().err
    assert _cli.main(["run", "saddle_to_saddle", "--seed", "3", "--out", str(out)]) == 0
    assert "starting over" in capsys.readouterr().err
    assert json.loads((out / "run.json").read_text())["seed"] == 3 and len(saddle) == 2


def test_a_file_a_user_added_to_a_run_folder_is_never_deleted(saddle, tmp_path, capsys):
    """Before (fresh probe c21): after a finished run the user saved my_analysis.ipynb beside its figures; the same
    command again, without --resume, started over and deleted the notebook (exit 0). Start-over removes only the
    names the folder's runs wrote (recorded in run.json when a run ends); anything else is refused, naming it."""
    out = tmp_path / "run"
    assert _cli.main(["run", "saddle_to_saddle", "--out", str(out)]) == 0
    written = sorted(json.loads((out / "run.json").read_text())["outputs"])
    assert "metrics.json" in written and "summary.md" in written
    (out / "my_analysis.ipynb").write_text("{precious}")
    before = sorted(p.name for p in out.iterdir())
    capsys.readouterr()
    assert _cli.main(["run", "saddle_to_saddle", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "my_analysis.ipynb" in err and "nothing was changed" in err and "--resume" in err, err
    assert sorted(p.name for p in out.iterdir()) == before and len(saddle) == 1
    # --resume keeps it, and does not count it among the run's outputs
    assert _cli.main(["run", "saddle_to_saddle", "--out", str(out), "--resume"]) == 0
    assert "my_analysis.ipynb" not in json.loads((out / "run.json").read_text())["outputs"]
    assert (out / "my_analysis.ipynb").read_text() == "{precious}"
    # moved out, the run folder starts over as before: everything the runs wrote goes, the record is new
    (out / "my_analysis.ipynb").unlink()
    assert _cli.main(["run", "saddle_to_saddle", "--seed", "5", "--out", str(out)]) == 0
    assert "starting over" in capsys.readouterr().err
    assert json.loads((out / "run.json").read_text())["seed"] == 5


@pytest.mark.parametrize("where", ["stages/my_nested_note.txt", "checkpoints/notes/todo.txt", "figs/a/b.txt"])
def test_a_file_a_user_put_inside_a_run_folders_own_subfolder_is_never_deleted(
    saddle, tmp_path, capsys, where
):
    """Before (fresh probe C10): after a finished run the user saved a note in its stages/ folder; the same command
    again started over and deleted the whole folder with the note (exit 0). Inside the run's own folders, a file
    is the run's only if run.json lists it (recorded when a run ends) or it is named as only the runner names
    files (stages/*.stage, checkpoints/**/ckpt_*/...)."""
    out = tmp_path / "run"
    assert _cli.main(["run", "saddle_to_saddle", "--out", str(out)]) == 0
    (out / "figs" / "a").mkdir(parents=True)  # a folder the run itself wrote, with a file of the run's
    (out / "figs" / "a" / "run_plot.txt").write_text("run")
    rec = json.loads((out / "run.json").read_text())
    rec["outputs"] = sorted({*rec["outputs"], "figs"})
    rec["files"] = sorted({*rec.get("files", []), "figs/a/run_plot.txt"})
    (out / "run.json").write_text(json.dumps(rec))
    (out / "stages").mkdir(exist_ok=True)
    (out / "stages" / "old.stage").write_text("a stage file of a killed run")  # the runner's name: the run's
    (out / where).parent.mkdir(parents=True, exist_ok=True)
    (out / where).write_text("precious")
    before = _snapshot(out)
    capsys.readouterr()
    assert _cli.main(["run", "saddle_to_saddle", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert where in err and "nothing was changed" in err, err
    assert _snapshot(out) == before and len(saddle) == 1
    (out / where).unlink()  # moved out: the start-over goes ahead and removes the run's files
    assert _cli.main(["run", "saddle_to_saddle", "--out", str(out)]) == 0
    assert "starting over" in capsys.readouterr().err
    assert not (out / "stages" / "old.stage").exists() and not (out / "figs").exists()


def test_publish_and_report_work_on_runs_without_run_json(tmp_path, capsys):
    """Published runs in docs/results (and older result folders) carry no run.json."""
    src = tmp_path / "results" / "saddle_to_saddle" / "paper"
    src.mkdir(parents=True)
    rec = {
        "experiment": "saddle_to_saddle",
        "preset": "paper",
        "seed": 0,
        "metrics": {"loss": 0.5},
        "anchors": [],
    }
    (src / "metrics.json").write_text(json.dumps(rec))
    (src / "summary.md").write_text("# s\n")
    assert _cli.main(["publish", "saddle_to_saddle", "--results", str(tmp_path / "results")]) == 0
    assert (tmp_path / "published" / "saddle_to_saddle" / "paper" / "summary.md").read_text() == "# s\n"
    assert _cli.main(["report", "--results", str(tmp_path / "results")]) == 0
    assert "| saddle_to_saddle | paper | 0 | loss | 0.5 |" in (tmp_path / "results" / "REPORT.md").read_text()


def test_an_empty_out_or_results_path_is_refused_naming_the_flag(saddle, tmp_path, capsys, monkeypatch):
    """Before (fresh probe C9): ``--out ""`` exited 0 after writing into results/NAME/PRESET of the current folder."""
    monkeypatch.chdir(tmp_path)
    for argv in (["run", "saddle_to_saddle", "--out", ""], ["report", "--results", " "]):
        with pytest.raises(SystemExit) as e:
            _cli.main(argv)
        assert e.value.code == 2
        assert "expected a folder path" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [] and saddle == []
