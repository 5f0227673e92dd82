"""The expressivity table's outcomes are computed from the metrics: representable (an exact construction),
learned with length generalization, not learned at this budget; a 'cannot' cell is settled only beside a passing
positive control in its row."""

from experiments.ssm_expressivity import _agreement, _cells


def _cell(test_acc, train_acc=1.0, solved=None):
    return {
        "acc_by_length": {"99": test_acc},
        "test_acc": test_acc,
        "test_ci": [test_acc, test_acc],
        "test_acc_per_seed": [test_acc] * 3,
        "val_acc": test_acc,
        "train_acc": train_acc,
        "solved": test_acc >= 0.9 if solved is None else solved,
        "learned": train_acc >= 0.98,
        "chosen_lrs": [1e-3] * 3,
        "n_seeds": 3,
        "n_seeds_solved": 3 * (test_acc >= 0.9),
    }


def _cons(*keys, errors=0):
    return {
        "verify": {
            k: {"exhaustive_errors": errors, "random_errors": 0, "exhaustive_len": 12, "random_strings": 10}
            for k in keys
        },
        "fixed_width": {},
    }


def _status(rows):
    return {(r["model"], r["task"]): r["status"] for r in rows}


def test_cannot_cells_are_not_settled_without_a_passing_control():
    # parity: selective_signed can (claim), selective_nonneg and time_invariant cannot
    cells = {
        "selective_signed": {"parity": _cell(0.6)},  # the control fails...
        "selective_nonneg": {"parity": _cell(0.5)},
        "time_invariant": {"parity": _cell(0.5)},
    }
    rows = _cells({"cells": cells}, _cons("parity/selective_signed"))
    st = _status(rows)
    assert st[("selective_nonneg", "parity")] == "not settled (no passing positive control)"
    assert st[("time_invariant", "parity")] == "not settled (no passing positive control)"
    # ...the 'can' cell agrees by its exact construction only, and says it was not learned
    assert st[("selective_signed", "parity")] == "agrees (construction; not learned at this budget)"
    sig = next(r for r in rows if r["model"] == "selective_signed")
    assert sig["representable"] is True and sig["outcome"].startswith("not learned at this budget")
    a = _agreement(rows)
    assert a["settled"] == 1 and a["can_learned"] == 0 and len(a["not_settled"]) == 2

    cells["selective_signed"]["parity"] = _cell(0.99)  # now the control passes
    rows = _cells({"cells": cells}, _cons("parity/selective_signed"))
    st = _status(rows)
    assert st[("selective_nonneg", "parity")] == "agrees (not learned; control passes)"
    assert st[("selective_signed", "parity")] == "agrees (learned)"
    a = _agreement(rows)
    assert (a["settled"], a["settled_agree"], a["can_learned"]) == (3, 3, 1)
    assert a["controls"] == {"parity": True}


def test_a_learned_cannot_cell_is_a_contradiction_and_a_broken_construction_settles_nothing():
    cells = {"selective_nonneg": {"parity": _cell(0.97)}, "dense": {"parity": _cell(0.5)}}
    rows = _cells({"cells": cells}, _cons("parity/dense", errors=3))
    st = _status(rows)
    assert st[("selective_nonneg", "parity")] == "CONTRADICTION"
    assert st[("dense", "parity")] == "not settled"  # a construction with errors is not 'representable'
    assert next(r for r in rows if r["model"] == "dense")["representable"] is False
    a = _agreement(rows)
    assert a["contradictions"] == ["selective_nonneg/parity"] and a["settled_agree"] == 0
