"""`python -m experiments` validates every flag before any work starts, naming the flag (issue 49)."""

import pytest

from experiments import _cli, _registry


@pytest.fixture(autouse=True)
def _no_writes_into_the_repository(monkeypatch, tmp_path):
    from experiments import _report

    monkeypatch.setattr(_report, "PAGES", tmp_path / "reproductions")
    monkeypatch.setattr(_report, "PUBLISHED", tmp_path / "published")
    monkeypatch.setattr(_cli, "PUBLISHED", tmp_path / "published")


def _main(argv):
    try:
        return _cli.main(argv)
    except SystemExit as e:  # argparse
        return e.code


@pytest.fixture
def no_work(monkeypatch):
    """Every registered experiment's body fails the test if it starts."""
    import dataclasses

    _registry.discover()

    def run(ctx):
        pytest.fail(f"work started for {ctx.name}")

    for name, exp in list(_cli.EXPERIMENTS.items()):
        monkeypatch.setitem(_cli.EXPERIMENTS, name, dataclasses.replace(exp, run=run))


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["run", "saddle_to_saddle", "--seed", "-5"], "--seed"),  # before: a numpy traceback
        (["run", "saddle_to_saddle", "--seed", str(2**32)], "--seed"),
        (["bench", "kernels", "--seed", "-1"], "--seed"),
        (["bench", "kernels", "--pairs", "0"], "--pairs"),
        (["run", "saddle_to_saddle", "--distributed", "--num-processes", "0"], "--num-processes"),
        (["run", "saddle_to_saddle", "--distributed", "--process-id", "-1"], "--process-id"),
    ],
)
def test_bad_numbers_are_refused_naming_the_flag(no_work, capsys, argv, flag):
    assert _main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and flag in err and err.count("\n") == 1, err


def test_out_file_is_refused_before_any_run_of_run_all(no_work, tmp_path, capsys):
    """Before: a pathlib FileExistsError traceback (`run NAME --out FILE`)."""
    f = tmp_path / "a.txt"
    f.write_text("mine")
    for argv in (["run", "all", "--out", str(f)], ["run", "saddle_to_saddle", "--out", str(f)]):
        assert _main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --out {f}") and err.count("\n") == 1, err
    assert f.read_text() == "mine"


def test_report_refuses_a_missing_results_folder(tmp_path, capsys):
    """Before: `report --results <missing dir>` created it, wrote an empty report and exited 0."""
    missing = tmp_path / "typo"
    assert _main(["report", "--results", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --results {missing} does not exist") and err.count("\n") == 1
    assert not missing.exists()
    f = tmp_path / "file"
    f.write_text("x")
    assert _main(["report", "--results", str(f)]) == 2
    assert "is a file" in capsys.readouterr().err and f.read_text() == "x"


def test_report_never_replaces_a_users_report_file(tmp_path, capsys):
    """A fresh probe: `report --results DIR` replaced a user's own DIR/REPORT.md without a word. It is refused
    (exit 2, naming --results and the file); a REPORT.md the command wrote itself is rewritten."""
    d = tmp_path / "myres"
    d.mkdir()
    (d / "REPORT.md").write_text("MY OWN REPORT")
    assert _main(["report", "--results", str(d)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: --results {d}: {d / 'REPORT.md'} exists and was not written by this command"
    )
    assert (d / "REPORT.md").read_text() == "MY OWN REPORT"
    ours = tmp_path / "runs"
    ours.mkdir()
    assert _main(["report", "--results", str(ours)]) == 0  # writes its own report
    assert _main(["report", "--results", str(ours)]) == 0  # and replaces it on the next call
    assert (ours / "REPORT.md").read_text().startswith("# jaxkit results report")
