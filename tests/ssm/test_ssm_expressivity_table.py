"""The expressivity table's statuses come from the declared endpoint (jaxkit.evaluation.cell_status): a 'can' cell
agrees only when learned (a construction is reported beside it, not counted); a 'cannot' cell is settled only beside
the same class's own positive control (a same-difficulty task learned in the same run)."""

from experiments.ssm_expressivity import ENDPOINT, SAME_DIFFICULTY, _cells, _score


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


def _scored(cells, cons):
    metrics = {"cells": cells}
    rows = _cells(metrics, cons)
    _score(metrics, rows, ENDPOINT)
    return rows, metrics


def test_a_cannot_cell_needs_its_own_class_control_and_a_construction_does_not_count():
    # parity: selective_signed can; selective_nonneg cannot; nonneg's own control is flip_flop (same difficulty)
    cells = {
        "selective_signed": {"parity": _cell(0.6)},
        "selective_nonneg": {"parity": _cell(0.5), "flip_flop": _cell(0.6)},
    }
    rows, m = _scored(cells, _cons("parity/selective_signed", "flip_flop/selective_nonneg"))
    st = _status(rows)
    assert st[("selective_nonneg", "parity")] == "not settled (no own positive control learned)"
    # the 'can' cell with an exact construction does not agree when it is not learned
    assert st[("selective_signed", "parity")] == "does not agree (not learned; exact construction)"
    a = m["agreement"]
    assert (a["settled"], a["settled_agree"], a["verdict"]) == (2, 0, "does not agree")

    cells["selective_signed"]["parity"] = _cell(
        0.99
    )  # another class learning parity settles nothing for nonneg
    rows, m = _scored(cells, _cons("parity/selective_signed", "flip_flop/selective_nonneg"))
    assert _status(rows)[("selective_nonneg", "parity")].startswith("not settled")
    cells["selective_nonneg"]["flip_flop"] = _cell(1.0)  # its own same-difficulty control is learned
    rows, m = _scored(cells, _cons("parity/selective_signed", "flip_flop/selective_nonneg"))
    st = _status(rows)
    assert st[("selective_nonneg", "parity")] == "agrees (not learned; own control flip_flop learned)"
    assert st[("selective_signed", "parity")] == "agrees (learned)"
    a = m["agreement"]
    assert (a["settled"], a["settled_agree"], a["can_learned"], a["verdict"]) == (3, 3, 2, "agrees")
    assert m["records"][0] | {} and {r["item"] for r in m["records"]} == {"parity", "flip_flop"}


def test_a_learned_cannot_cell_contradicts_and_last_symbol_or_s5_control_nothing():
    cells = {"selective_nonneg": {"parity": _cell(0.97), "s5_word": _cell(0.01), "last_symbol": _cell(1.0)}}
    rows, m = _scored(cells, _cons())
    st = _status(rows)
    assert st[("selective_nonneg", "parity")] == "does not agree (learned: contradicts 'cannot')"
    assert st[("selective_nonneg", "s5_word")].startswith("not settled")  # no task of its difficulty
    assert "last_symbol" not in {t for ts in SAME_DIFFICULTY.values() for t in ts}
    assert m["agreement"]["contradictions"] == ["selective_nonneg/parity"]
