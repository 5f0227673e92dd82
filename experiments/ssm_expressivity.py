"""SSM expressivity: gate classes x formal languages, by theory, by construction and by training.

Tests the claims of Alsmann, Noori & Lange (ICLR 2026; theory only) and the trained results they build on (Sarrof
et al. 2024, Merrill et al. 2024, Grazzi et al. 2025, Deletang et al. 2023). Every (gate class, language) cell
keeps three things apart: the theoretical claim with its source (at fixed width and at log precision), whether a
construction exists and was verified exactly (ours), and whether training on lengths <= 40 learned the language
in distribution and generalized to longer strings (per-length accuracy). A trained failure of a run that never
fitted its training lengths is "not learned at this budget", not evidence of inexpressibility.

Protocol. Train on lengths 1..40 with a curriculum (Grazzi et al. 2025 train parity up to length 40 and test at
40-256 over 3 seeds; Deletang et al. 2023 also train up to 40), choose the learning rate (1e-3, 3e-3, 1e-2, 3e-2) per
seed on validation lengths 300/303 (fresh strings of lengths never tested, between the test lengths 201-204
and 495-498; ties broken by validation cross-entropy), report the chosen
runs' test accuracy at 201-498 with a t-interval over 3 seeds. A 'cannot' cell
counts only beside a row's positive control (a class the theory says can, learned with length generalization).

Recipe, and why. The earlier recipe (plain sigmoid/tanh gates, no normalization) fitted first/last symbol in
distribution but forgot or drifted beyond length 100 (dense lost even last_symbol: its state grows with the
length and swamps the readout). Each change targets one failure and leaves the class (the range of ``A``) as is:
a start token (the start is otherwise invisible to a causal model), RMS-normalized states before each readout (the
readout sees directions, not a length-dependent magnitude), gates initialized near 1 (LRU ring init; Mamba's step
size init also starts near 1) and able to reach the ends of their range exactly (a memory of 500 steps needs a gate
of exactly 1; float32 rounds sigmoid to 1 only beyond 17), and, in the diagonal selective classes, writes scaled by
1 - |a| (Mamba's discretization couples them through the step size), so a held state does not drift; ``dense``
writes scaled by the mean beta / 2 of its factors (DeltaNet writes beta k v^T), so beta = 0 in every factor is an
exact hold with no write. Two more changes fixed first_symbol, which dense, complex and non-negative gates had
fitted at length 40 but lost beyond 100 (the prediction collapsing to one class): a short causal depthwise
convolution (width 4, identity init) before the gates and writes, as in Mamba's ``conv1d`` and DeltaNet's short
convolutions, so a gate can open on the token after the start instead of inferring it from a decaying state; and a
wider saturation margin (eps = 0.25 instead of 0.05) with an exact-zero band for the complex gate's phase, so a
hold of exactly |a| = 1 and no rotation is reached on an open set of gate inputs. The complex class then needed the
larger learning rate 1e-2 on several seeds in our probes; and the validation lengths moved from
99/102 to 300/303: runs that hold to 150 and fail past 200 were indistinguishable at 99/102 and at 150/153 (every
rate scored 1.0 there), so the choice was a coin toss; at 300/303 it picks the runs that hold. The claim is then
generalization from training lengths <= 40 to 5-12x longer strings, with the learning rate chosen on held-out
strings of lengths in that range. Dense still lost first_symbol past length 200 (its writes never stopped: the
state norm grew 4 -> 370 by position 400). Coupling its writes (above) and a fourth learning rate 3e-2 on the
grid of every class raised it to 0.88 in the standard run (2 of 3 seeds): in a one-layer diagnostic, failing runs kept every
beta_j > 0 (mean 0.1-0.27) at every later token, so the held state turned slowly (cosine 0.8 to itself 36 steps
later), invisible at length 40. A hold needs every one of the 4 factors' beta_j exactly 0 at every input; with a
shared step size g per step (beta_j = 2 g s_j, Mamba's delta scaling all of A; the class is unchanged) it needs
only g = 0. Probes on 6 fresh seeds x 4 rates: runs holding the first symbol to length 498 rose from 6 to 17 of
24, the chosen runs from 0.97 to 1.00 (parity 0.63, mod-3 0.60 in a 3-seed probe: not learned either way).
Published models are larger (Grazzi et al.: Mamba/DeltaNet, longer training); the
standard preset is sized for a 2-core CPU (d_model 16, 2 layers, 1000 steps).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, NamedTuple

import numpy as np

from experiments import Anchor, Experiment, register
from jaxkit.evaluation import AgreementEndpoint, cell_status, endpoint_from_dict, verdict
from jaxkit.ssm import (
    CONSTRUCTIONS,
    VARIANTS,
    FixedPoint,
    LowFloat,
    ProbeConfig,
    construct,
    first_failure,
    get_task,
    train_runs,
    verify,
)

QUICK_TASKS = ["parity", "flip_flop", "count_mod3", "no_bb", "dyck1"]
STANDARD_TASKS = [
    "parity",
    "count_mod3",
    "aa_star",
    "first_symbol",
    "last_symbol",
    "flip_flop",
    "s5_word",
    "anbncn",
    "since",
    "until",
]
PAPER_TASKS = STANDARD_TASKS + [
    "no_bb",
    "dyck1",
    "count_mod5",
    "position_mod3",
    "ab_star",
    "a_before_b",
    "tomita1",
    "tomita2",
    "tomita3",
    "tomita4",
    "tomita5",
    "tomita6",
    "tomita7",
    "dyck2_depth3",
    "anbn",
    "a5_word",
    "even_pairs",
    "parity_check",
    "cycle_navigation",
    "modular_arithmetic_simple",
    "modular_arithmetic",
    "solve_equation",
    "reverse_string",
    "stack_manipulation",
]
MODELS = list(VARIANTS) + ["transformer"]
COUNTING = {"anbncn", "dyck1", "anbn"}  # non-regular: the claim depends on the precision

_CONSTRUCTION_CHECK = {
    "construction_random": 10000,
    "construction_max_len": 1000,
    "fixed_width": [[8, 0], [10, 0]],
    "low_float": [[5, 3], [8, 7]],
}
# The training recipe (see the module docstring and the summary): a start token, RMS-normalized states before each
# readout, gates initialized near 1 (LRU-style) that can reach the ends of their range exactly, writes scaled by
# 1 - |a| in the diagonal selective classes (as Mamba's step size does), a short causal convolution before the gates
# (conv_width), a length curriculum up to 40, Adam with warmup-cosine and clipping, learning rate
# chosen per seed on validation lengths beyond training and disjoint from the test lengths.
_RECIPE = {
    "state_norm": True,
    "ring_init": True,
    "saturating": True,
    "coupled_classes": ["selective_nonneg", "selective_signed", "selective_complex", "dense"],
    "conv_width": 4,
    "step_gate": True,
    "bos": True,
    "train_eval_lengths": [24, 27, 30, 33, 36, 39],
    "positional": "rope",
    "threshold": 0.9,
}
PRESETS = {
    "quick": {
        "tasks": QUICK_TASKS,
        "models": MODELS,
        "n_steps": 300,
        "n_seeds": 3,
        "lrs": [3e-3],
        "d_model": 16,
        "d_state": 8,
        "n_layers": 2,
        "n_householder": 2,
        "mode": "parallel",
        "batch_size": 32,
        "n_train_per_length": 64,
        "val_lengths": [57, 60],
        "test_lengths": [99, 102, 249, 252],
        "n_test": 32,
        **_RECIPE,
        **_CONSTRUCTION_CHECK,
    },
    # sized from the measured CPU time per member-step (see summary.md): <= 60 min on an idle 2-core machine
    "standard": {
        "tasks": STANDARD_TASKS,
        "models": MODELS,
        "model_tasks": {"transformer": ["parity", "last_symbol", "s5_word"]},
        "n_steps": 1000,
        "n_seeds": 3,
        "lrs": [1e-3, 3e-3, 1e-2, 3e-2],
        "d_model": 16,
        "d_state": 8,
        "n_layers": 2,
        "n_householder": 4,
        "mode": "recurrent",
        "batch_size": 32,
        "n_train_per_length": 128,
        "val_lengths": [300, 303],
        "test_lengths": [201, 204, 495, 498],
        "n_test": 32,
        **_RECIPE,
        **{**_CONSTRUCTION_CHECK, "construction_random": 2000},
    },
    "paper": {
        "tasks": PAPER_TASKS,
        "models": MODELS,
        "n_steps": 20000,
        "n_seeds": 10,
        "lrs": [1e-4, 3e-4, 1e-3],
        "d_model": 64,
        "d_state": 32,
        "n_layers": 2,
        "n_householder": 4,
        "mode": "parallel",
        "batch_size": 128,
        "n_train_per_length": 1000,
        "val_lengths": [99, 102],
        "test_lengths": list(range(201, 501, 6)),
        "n_test": 256,
        **_RECIPE,
        "construction_random": 10000,
        "construction_max_len": 1000,
        "fixed_width": [[8, 0], [12, 0], [16, 0]],
        "low_float": [[5, 3], [5, 10], [8, 7]],
    },
}


# Seconds (tests/experiments/test_smoke.py): every task of quick and standard, every model (the many-class group on
# the dense class and the transformer, with standard's transformer task list), the learning-rate choice over two
# rates and two seeds, every construction of parity (each construction compiles its own model: all 45 take
# minutes) and both number formats on dyck1 and anbncn (of a diagonal and the dense class: the other classes take
# the same path), at a tiny one-layer model, 4 steps and short lengths. ``mode`` is standard's "recurrent" (quick's
# "parallel" scan computes the same recurrence; a preset holds one mode).
PRESETS["smoke"] = dict(
    PRESETS["standard"],
    tasks=list(dict.fromkeys(STANDARD_TASKS + QUICK_TASKS)),
    # the many-class group (s5_word) on the dense class and the transformer only: the other classes take the same
    # path, and each group of each class compiles its own training program
    model_tasks={
        **PRESETS["standard"]["model_tasks"],
        **{
            v: [t for t in dict.fromkeys(STANDARD_TASKS + QUICK_TASKS) if t != "s5_word"]
            for v in VARIANTS
            if v != "dense"
        },
    },
    n_steps=4,
    n_seeds=2,
    lrs=[3e-3, 1e-2],
    d_model=8,
    d_state=4,
    n_layers=1,
    n_householder=2,
    batch_size=4,
    n_train_per_length=2,
    train_eval_lengths=[8, 12],
    val_lengths=[20, 23],
    test_lengths=[26, 27, 30, 31],
    n_test=2,
    construction_tasks=["parity"],
    fixed_width_variants=["selective_signed", "dense"],
    construction_random=20,
    construction_max_len=40,
    fixed_width=[[4, 0]],
    low_float=[[3, 2]],
)


class Claim(NamedTuple):
    """Theory at fixed width and at log precision (True/False/None), its source, whether it is a conjecture,
    and the published trained result (True/False/None) with its source."""

    fixed: bool | None
    log: bool | None
    source: str
    published: bool | None = None
    published_source: str = ""
    conjecture: bool = False


ANL, SVH, MPS = "Alsmann, Noori & Lange 2026", "Sarrof et al. 2024", "Merrill et al. 2024"
GRZ, DEL, SK = "Grazzi et al. 2025", "Deletang et al. 2023", "Shakerinava et al. 2026"
_DIAG = ("time_invariant", "selective_nonneg", "selective_signed", "selective_complex")
_SINCE_SUPERSET = "contains the non-negative gates, which express S (" + ANL + "; " + SVH + ")"
CLAIMS: dict[tuple[str, str], Claim] = {
    ("time_invariant", "parity"): Claim(
        False, False, f"{ANL}: time-invariant (+MOD) SSMs stay in AC0 ∩ regular; parity is not in AC0"
    ),
    ("selective_nonneg", "parity"): Claim(
        False,
        False,
        f"{SVH} Thm (NONNEGATIVE gates); {GRZ} Thm 1",
        False,
        f"{GRZ} Fig. 1: Mamba [0,1] at chance on lengths 40-256; {SVH} Fig. 3",
    ),
    ("selective_signed", "parity"): Claim(
        True,
        True,
        f"{GRZ}; {SVH}: a negative gate flips the sign",
        True,
        f"{GRZ} Fig. 1: Mamba [-1,1] perfect on lengths 40-256 (3 seeds)",
    ),
    ("selective_complex", "parity"): Claim(
        True, True, f"{MPS}; {SK}: complex diagonal gates track abelian groups"
    ),
    ("dense", "parity"): Claim(
        True,
        True,
        f"{GRZ} Thm: Householder products with eigenvalues in [-1,1]",
        True,
        f"{GRZ} Fig. 1: DeltaNet [-1,1] perfect on lengths 40-256",
    ),
    ("transformer", "parity"): Claim(
        None,
        None,
        "contested: hard attention cannot (Hahn 2020), soft attention can "
        "with vanishing margin (Chiang & Cholak 2022)",
        False,
        f"{DEL}: transformers fail parity beyond the training lengths",
    ),
    ("time_invariant", "count_mod3"): Claim(
        False, False, f"{ANL}: AC0 ∩ regular; counting mod 3 is not in AC0"
    ),
    ("selective_nonneg", "count_mod3"): Claim(
        False,
        False,
        f"{SVH} (star-free only); {GRZ} Thm 1",
        False,
        f"{SVH} Fig. 3: Mamba fails the non-star-free languages, incl. "
        "Tomita 6 ((#0 - #1) mod 3 = 0, the nearest language in their suite)",
    ),
    ("selective_signed", "count_mod3"): Claim(
        False, False, f"{GRZ}: real diagonal gates cannot count modulo 3"
    ),
    ("selective_complex", "count_mod3"): Claim(
        True, True, f"{MPS}; {SK}: rotation by 2π/3 (abelian group Z3)"
    ),
    ("dense", "count_mod3"): Claim(True, True, f"{GRZ}: a rotation is a product of two reflections"),
    ("time_invariant", "aa_star"): Claim(
        True, True, f"{ANL}: a cyclic-permutation gate gives MOD predicates; (aa)* = no b and even length"
    ),
    ("selective_nonneg", "aa_star"): Claim(
        False,
        False,
        f"{ANL}: monotonicity lemma (fixed width); {SVH}: not star-free",
        False,
        f"{SVH} Fig. 3: Mamba performs poorly on (aa)*",
    ),
    ("selective_signed", "aa_star"): Claim(True, True, f"a gate -1 counts the length mod 2 ({SVH}; {GRZ})"),
    ("selective_complex", "aa_star"): Claim(
        True, True, "a gate e^{iπ} counts the length mod 2 (as time-invariant)"
    ),
    ("dense", "aa_star"): Claim(True, True, f"{GRZ}: every regular language"),
    ("time_invariant", "since"): Claim(
        False, False, f"{ANL}: conjectured that time-invariant SSMs cannot express S", conjecture=True
    ),
    ("selective_nonneg", "since"): Claim(
        True,
        True,
        f"{ANL}: diagonal gates = PLTLf (with S) = star-free; {SVH}",
        True,
        f"{SVH}: Mamba length-generalizes on the star-free languages and on flip-flop (a since)",
    ),
    ("selective_signed", "since"): Claim(True, True, _SINCE_SUPERSET),
    ("selective_complex", "since"): Claim(True, True, _SINCE_SUPERSET),
    ("dense", "since"): Claim(True, True, f"{GRZ}: beta = 1 is a reset; every regular language"),
    ("transformer", "s5_word"): Claim(
        False,
        False,
        f"{MPS}: transformers are in TC0, S5 is NC1-complete",
        False,
        f"{MPS}: transformers need depth growing with length on S5",
    ),
    ("dense", "s5_word"): Claim(
        True,
        True,
        f"{GRZ} Thm: Householder products reach every regular language "
        "(4 reflections per step: our construction)",
    ),
    ("transformer", "last_symbol"): Claim(True, True, "the residual stream carries the current token"),
    ("time_invariant", "flip_flop"): Claim(False, False, f"{SVH}: flip-flop needs an input-dependent reset"),
    ("selective_nonneg", "flip_flop"): Claim(
        True, True, f"{SVH} (star-free)", True, f"{SVH}: Mamba on flip-flop"
    ),
    ("transformer", "flip_flop"): Claim(None, None, "no claim in the sources"),
}
for _v in VARIANTS:
    CLAIMS[(_v, "anbncn")] = Claim(
        False,
        True,
        f"{ANL}: fixed width stays regular; log precision counts (recognizes a^n b^n c^n)",
        *(
            (None, f"{SVH} Fig. 3: Mamba fits a^n b^n c^n in distribution, length generalization lags")
            if _v == "selective_nonneg"
            else ()
        ),
    )
    CLAIMS[(_v, "dyck1")] = Claim(False, True, f"{ANL}: fixed width stays regular; log precision counts")
    CLAIMS[(_v, "first_symbol")] = Claim(
        True,
        True,
        "star-free, PLTLf O(a ∧ ¬Y true) (" + ANL + "; " + SVH + ")"
        if _v != "time_invariant"
        else "no published claim; our construction: "
        "a constant-gate start detector and an accumulating counter",
    )
    CLAIMS[(_v, "last_symbol")] = Claim(True, True, "propositional at the last position (every class)")
    CLAIMS[(_v, "no_bb")] = (
        Claim(True, True, f"{SVH}: star-free")
        if _v != "time_invariant"
        else Claim(None, None, "no claim (our construction uses a counter)")
    )
    if _v in _DIAG:
        CLAIMS[(_v, "s5_word")] = Claim(
            False,
            False,
            f"{MPS}: diagonal SSMs are in TC0, S5 is NC1-complete; {SK}: "
            "finite-precision complex diagonal SSMs track only solvable groups",
            *(
                (False, f"{MPS}: Mamba needs depth growing with length on S5")
                if _v == "selective_nonneg"
                else ()
            ),
        )
    CLAIMS[(_v, "until")] = (
        Claim(
            True,
            True,
            f"star-free (LTLf and PLTLf define the star-free languages); {ANL}: selective diagonal gates express "
            "PLTLf; a latch set by the first event",
        )
        if _v != "time_invariant"
        else Claim(None, None, "no claim in the sources")
    )
    if _v not in ("time_invariant", "selective_nonneg"):
        CLAIMS[(_v, "flip_flop")] = Claim(True, True, f"{SVH}; {GRZ}: superset of the non-negative gates")

# The primary endpoint, declared for every preset: agreement of each settled cell with the theory. A 'can' cell
# agrees only when learned (a construction is reported beside it, not counted); a 'cannot' cell that is not learned
# is settled only when the same class, in the same run (same budget and lengths), learns a task the theory puts at
# the same difficulty: a regular language whose minimal automaton carries a state over the whole string with 2-4
# states (closest first). last_symbol (the last token suffices) controls nothing; s5_word (a non-solvable group of
# 120 states) has no task of its difficulty in the suite, so its 'cannot' cells stay "not settled".
_MEMORY = ("parity", "count_mod3", "aa_star", "flip_flop", "since", "until", "first_symbol")
SAME_DIFFICULTY = {
    "parity": ("aa_star", "count_mod3", "flip_flop", "since", "until", "first_symbol"),
    "count_mod3": ("parity", "aa_star", "flip_flop", "since", "until", "first_symbol"),
    "aa_star": ("parity", "count_mod3", "flip_flop", "since", "until", "first_symbol"),
    "flip_flop": ("since", "until", "first_symbol", "parity", "aa_star", "count_mod3"),
    "since": ("flip_flop", "until", "first_symbol", "parity", "aa_star", "count_mod3"),
    "until": ("since", "flip_flop", "first_symbol", "parity", "aa_star", "count_mod3"),
    "first_symbol": ("since", "until", "flip_flop", "parity", "aa_star", "count_mod3"),
    "s5_word": (),
}
ENDPOINT = AgreementEndpoint(controls=SAME_DIFFICULTY, alpha=0.05)
for _preset in PRESETS.values():
    _preset.setdefault("endpoint", ENDPOINT.to_dict())
# choices made after test numbers of a full run had been seen (listed on the page)
LR_AFTER_THE_FACT = (
    "The learning-rate grid gained 3e-2 after the test numbers of an earlier full run had been seen."
)
RESCORED = (
    "The same-difficulty controls of the primary endpoint (and the rule that a 'can' cell agrees only when learned) "
    "were declared after this run had been scored; the published page was re-scored from its stored per-cell "
    "records, no cell was rerun."
)


def _after_the_fact(cfg: dict, metrics: dict) -> list[str]:
    """Choices made after test numbers had been seen, for this run."""
    out = [LR_AFTER_THE_FACT] if 3e-2 in cfg["lrs"] else []
    return out + ([metrics["endpoint_declared"]] if metrics.get("endpoint_declared") else [])


NO_CONSTRUCTION = {
    "transformer": "transformers are the baseline here; no hand-set transformer is built",
    ("time_invariant", "parity"): "theory: impossible",
}


def claim_for(model: str, task: str) -> tuple[bool | None, Claim]:
    """The claim the trained float32 cell is compared with: log precision for counting languages (float32 counts
    exactly far beyond length 500), fixed width otherwise (float32 is a fixed width)."""
    c = CLAIMS.get((model, task), Claim(None, None, "no claim recorded"))
    return (c.log if task in COUNTING else c.fixed), c


def _task_groups(cfg: dict, model: str) -> list[list[str]]:
    """The model's tasks, binary ones and many-class ones (S5) trained as separate ensembles (a 120-class head
    and vocabulary would otherwise be paid by every binary task)."""
    tasks = cfg.get("model_tasks", {}).get(model, cfg["tasks"])
    groups = [
        [t for t in tasks if get_task(t).n_classes <= 2],
        [t for t in tasks if get_task(t).n_classes > 2],
    ]
    return [g for g in groups if g]


def _probe(cfg: dict, model: str, tasks: list[str], seed: int, ctx) -> dict:
    keys = (
        "d_model",
        "d_state",
        "n_layers",
        "n_householder",
        "mode",
        "n_steps",
        "batch_size",
        "n_seeds",
        "n_train_per_length",
        "n_test",
        "threshold",
        "positional",
        "state_norm",
        "ring_init",
        "saturating",
        "bos",
        "conv_width",
        "step_gate",
    )
    pc = ProbeConfig(
        tasks=tuple(tasks),
        model=model,
        lrs=tuple(cfg["lrs"]),
        test_lengths=tuple(cfg["test_lengths"]),
        val_lengths=tuple(cfg["val_lengths"]),
        coupled_input=model in cfg["coupled_classes"],
        train_eval_lengths=tuple(cfg["train_eval_lengths"]),
        **{k: cfg[k] for k in keys},
    )
    return train_runs(
        pc,
        seed,
        progress=ctx.progress,
        resume=ctx.resume,
        checkpoint_dir=ctx.checkpoint_dir(f"probe_{model}_{'_'.join(tasks)}"),
    )


def _constructions(cfg: dict, progress) -> dict:
    t0, w0 = time.process_time(), time.perf_counter()
    out: dict[str, Any] = {"verify": {}, "fixed_width": {}}
    only = cfg.get("construction_tasks")  # smoke only: the constructions of a few tasks (default: every one)
    items = [(t, v) for t, vs in CONSTRUCTIONS.items() for v in vs if only is None or t in only]
    for task, variant in progress(items, desc="constructions", total=len(items)):
        out["verify"][f"{task}/{variant}"] = verify(
            construct(task, variant), n_random=cfg["construction_random"], max_len=cfg["construction_max_len"]
        )
    fmts = [("fixed", i, f, FixedPoint(i, f), 2 ** (i - 1)) for i, f in cfg["fixed_width"]]
    fmts += [("float", e, m, LowFloat(e, m), 2 ** (m + 1) + 1) for e, m in cfg["low_float"]]
    variants = cfg.get("fixed_width_variants") or VARIANTS  # smoke only: a diagonal and the dense class
    for task in ("dyck1", "anbncn"):
        for variant in progress(variants, desc=f"fixed width {task}", total=len(variants)):
            c = construct(task, variant)
            for kind, a, b, fmt, predicted in fmts:
                measured = first_failure(c, fmt, max_n=2 * predicted + 8)
                out["fixed_width"][f"{task}/{variant}/{kind}{a}.{b}"] = {
                    "first_failing_n": measured,
                    "predicted": predicted,
                }
    out["cpu_s"], out["wall_s"] = time.process_time() - t0, time.perf_counter() - w0
    return out


def _outcome(cell: dict) -> str:
    """The trained outcome of a cell, from its metrics (runs chosen on validation, test mean over seeds)."""
    if cell["solved"]:
        return "learned with length generalization"
    if cell["learned"]:
        return "not learned at this budget (fits lengths <= 40 only)"
    return "not learned at this budget"


def _representable(model: str, task: str, cons: dict) -> bool | None:
    """True: an exact construction (0 errors); False: a construction with errors; None: no construction."""
    v = cons["verify"].get(f"{task}/{model}")
    if v is None:
        return None
    return v["exhaustive_errors"] + v["random_errors"] == 0


def _construction_cell(model: str, task: str, cons: dict) -> str:
    v = cons["verify"].get(f"{task}/{model}")
    if v is not None:
        err = v["exhaustive_errors"] + v["random_errors"]
        return f"{'exact' if err == 0 else f'{err} ERRORS'} (≤{v['exhaustive_len']} all, {v['random_strings']} random)"
    if model == "transformer":
        return "none: " + NO_CONSTRUCTION["transformer"]
    expected, _ = claim_for(model, task)
    return (
        "none (theory: impossible)"
        if expected is False
        else "none (no claim)"
        if expected is None
        else "MISSING"
    )


def _cells(metrics: dict, cons: dict, endpoint: AgreementEndpoint = ENDPOINT) -> list[dict]:
    """Every (model, task) cell with its claim, construction, trained outcome, positive control and status."""
    rows = []
    for model, per in metrics["cells"].items():
        for task, r in per.items():
            expected, claim = claim_for(model, task)
            rows.append(
                {
                    "model": model,
                    "task": task,
                    "expected": expected,
                    "claim": claim,
                    "representable": _representable(model, task, cons),
                    "outcome": _outcome(r),
                    "construction": _construction_cell(model, task, cons),
                    **r,
                }
            )
    return _apply_endpoint(rows, endpoint)


def _records(rows: list[dict]) -> list[dict]:
    """Per-cell records of the endpoint (claim, learned, construction) with the per-seed test accuracies."""
    return [
        {"unit": r["model"], "item": r["task"], "claim": r["expected"], "learned": bool(r["solved"]),
         "construction": r["representable"], "test_acc": r["test_acc"], "test_acc_per_seed": r["test_acc_per_seed"],
         "n_seeds_solved": r["n_seeds_solved"], "n_seeds": r["n_seeds"]}
        for r in rows
    ]  # fmt: skip


def _apply_endpoint(rows: list[dict], endpoint: AgreementEndpoint) -> list[dict]:
    """Each cell's own control and status under the declared endpoint (:func:`jaxkit.evaluation.cell_status`)."""
    by = {(c["unit"], c["item"]): c for c in cell_status(endpoint, _records(rows))}
    for row in rows:
        c = by[(row["model"], row["task"])]
        row["control"], row["status"] = c["control"], c["status"]
    return rows


def _fmt_claim(v: bool | None, conj: bool = False) -> str:
    return "?" if v is None else ("✓" if v else ("✗ (conj.)" if conj else "✗"))


def _agreement(v) -> dict:
    """The headline counts, from the endpoint's :class:`jaxkit.evaluation.Verdict`."""
    d = v.details
    return {
        "verdict": v.word,
        "cells": d["cells"],
        "settled": d["settled"],
        "settled_agree": d["agree"],
        "settled_fraction": v.estimate,
        "wilson": list(v.ci),
        "can_cells": d["can_cells"],
        "can_learned": d["can_learned"],
        "can_not_learned_with_construction": d["can_not_learned_with_construction"],
        "cannot_cells": d["cannot_cells"],
        "cannot_settled": d["cannot_settled"],
        "not_settled": d["not_settled"],
        "contradictions": d["contradictions"],
        "disagree": d["disagree"],
    }


def _table(rows: list[dict]) -> list[str]:
    out = [
        "| language | gate class | theory: fixed width | theory: log precision | source | representable: "
        "construction (ours) | published experiment | in-dist acc | validation acc | test acc [95% CI over "
        "seeds] | seeds ≥ 0.9 | trained outcome | own control (learned) | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        c = r["claim"]
        pub = "" if not c.published_source else f"{_fmt_claim(c.published)} {c.published_source}"
        ci = "[n/a: one seed]" if r["test_ci"] is None else "[{:.2f}, {:.2f}]".format(*r["test_ci"])
        out.append(
            f"| {r['task']} | {r['model']} | {_fmt_claim(c.fixed, c.conjecture)} | "
            f"{_fmt_claim(c.log, c.conjecture)} | {c.source} | {r['construction']} | {pub} | "
            f"{r['train_acc']:.2f} | {r['val_acc']:.2f} | {r['test_acc']:.2f} {ci} | "
            f"{r['n_seeds_solved']}/{r['n_seeds']} | {r['outcome']} | {r['control'] or ''} | "
            f"{r['status']} |"
        )
    return out


def _grid(rows: list[dict], tasks: list[str]) -> list[str]:
    """A compact grid: test accuracy (mean over seeds) and the status per cell."""
    models = [m for m in MODELS if any(r["model"] == m for r in rows)]
    by = {(r["model"], r["task"]): r for r in rows}

    def short(status: str) -> str:
        if status.startswith("agrees (not learned; own control"):
            return "✓ not learned, own ctrl " + status.split("own control ")[1].split(" ")[0]
        return {
            "agrees (learned)": "✓ learned",
            "does not agree (not learned; exact construction)": "✗ not learned (constr. exists)",
            "does not agree (not learned)": "✗ not learned",
            "not settled (no own positive control learned)": "not settled",
            "no claim": "no claim",
        }.get(status, status)

    out = ["| language | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for t in tasks:
        cells = []
        for m in models:
            r = by.get((m, t))
            cells.append(
                "" if r is None else f"{_fmt_claim(r['expected'])} {r['test_acc']:.2f} {short(r['status'])}"
            )
        out.append(f"| {t} | " + " | ".join(cells) + " |")
    return out


def _summary_head(cfg: dict, preset: str, metrics: dict) -> list[str]:
    a = metrics["agreement"]
    cpu = metrics["cpu_s"]
    probe_cpu = sum(v or 0.0 for v in cpu["probes"].values())
    total = probe_cpu + (cpu["constructions"] or 0)
    return [
        f"# ssm_expressivity ({preset})",
        "",
        f"Command: `python -m experiments run ssm_expressivity --preset {preset} --resume`.",
        "",
        "**Protocol.** Training on lengths 1..40 (the longest length grows from 5 to 40 over the first half), "
        f"{cfg['n_steps']} steps x batch {cfg['batch_size']}, Adam (warmup-cosine factor, global-norm clip 1), "
        f"{cfg['n_layers']} layers, d_model {cfg['d_model']}, d_state {cfg['d_state']}, dense: "
        f"{cfg['n_householder']} Householder factors per step"
        f"{' with one shared step size (beta_j = 2 g s_j)' if cfg.get('step_gate') else ''}; a start token, a causal depthwise convolution of "
        f"width {cfg.get('conv_width', 0)} before the gates, states RMS-normalized before each readout, gates "
        "initialized near 1 that reach the ends of their range exactly (saturation margin 0.25), writes scaled "
        f"by 1 - |a| (dense: by the mean beta / 2) in {', '.join(cfg['coupled_classes'])}. Learning rates {cfg['lrs']} x {cfg['n_seeds']} "
        "seeds: for each seed the learning rate is chosen on **validation** lengths "
        f"{cfg['val_lengths']} (fresh strings, lengths beyond training that are never tested; ties broken by the "
        "validation cross-entropy); the "
        f"table reports the chosen runs' **test** accuracy at lengths {cfg['test_lengths']} ({cfg['n_test']} "
        "strings each), mean over seeds with a 95% Student-t interval over seeds (scipy.stats). A cell is "
        f"*learned with length generalization* when that mean is >= {cfg['threshold']}, otherwise *not learned "
        "at this budget*; *representable* means an exact hand-set construction of the same model class (verified "
        "on every short string and on random strings up to length 1000). A 'can' cell agrees only when it is "
        "learned; its construction is reported beside it, not counted. A 'cannot' cell that is not learned is "
        "settled only beside its **own positive control**: the same class, in the same run, learns a task the "
        "theory puts at the same difficulty (a regular language whose automaton carries a state over the whole "
        "string, 2-4 states; none for s5_word); otherwise it reads *not settled*.",
        "",
        f"Date {time.strftime('%Y-%m-%d')}. CPU time: probes "
        + ", ".join(f"{m} {v / 60:.1f} min" for m, v in cpu["probes"].items() if v)
        + f"; constructions {(cpu['constructions'] or 0) / 60:.1f} min; in all {total / 60:.0f} min of process "
        f"CPU time, so about "
        f"{total / 120:.0f} minutes on an idle 2-core machine; wall time {metrics['wall_s'] / 60:.0f} min summed over "
        "the stages, on a machine shared with other jobs.",
        "",
        metrics["verdict_markdown"],
        "",
        f"Of {a['can_cells']} 'can' cells, {a['can_learned']} are learned with length generalization; the other "
        f"{a['can_cells'] - a['can_learned']} do not agree ({a['can_not_learned_with_construction']} of them have an "
        f"exact construction, reported beside them). {a['cannot_settled']} of {a['cannot_cells']} 'cannot' cells "
        f"are settled beside their own control. Not settled: {', '.join(a['not_settled']) or 'none'}. "
        f"Contradictions: {', '.join(a['contradictions']) or 'none'}.",
        "",
    ]


def _summary(rows: list[dict], metrics: dict, cons: dict, cfg: dict, preset: str) -> str:
    contra = [r for r in rows if r["status"].startswith("does not agree (learned")]
    lines = _summary_head(cfg, preset, metrics)
    lines += [
        "## The grid",
        "",
        "Per cell: the claim compared (✓ can, ✗ cannot, ? none), the test accuracy (chosen runs, mean over "
        "seeds) and the status.",
        "",
        *_grid(rows, cfg["tasks"]),
        "",
    ]
    lines += [f"## Trained cells that contradict an impossibility claim ({len(contra)})", ""]
    lines += [
        f"- **{r['model']} × {r['task']}**: test accuracy {r['test_acc']:.2f} "
        f"({r['n_seeds_solved']}/{r['n_seeds']} seeds >= threshold); claim: {r['claim'].source}. "
        f"{NOTES.get((r['model'], r['task']), 'Not investigated yet.')}"
        for r in contra
    ] or ["None."]
    lines += [
        "",
        "## The full table: theory, construction, training",
        "",
        "✓ expressible, ✗ not expressible, ? no claim; (conj.) a conjecture. The trained float32 cell is "
        "compared with the log-precision claim for counting languages (float32 counts exactly far beyond "
        "length 500) and with the fixed-width claim otherwise.",
        "",
    ]
    lines += _table(sorted(rows, key=lambda r: (r["task"], MODELS.index(r["model"]))))
    notes = [
        f"- {m} × {t}: {n}"
        for (m, t), n in NOTES.items()
        if any(r["model"] == m and r["task"] == t for r in rows)
    ]
    after = _after_the_fact(cfg, metrics) or ["None."]
    lines += [
        "",
        "## Choices made after seeing test numbers",
        "",
        *[f"- {c}" if c != "None." else c for c in after],
    ]
    lines += ["", "## Discussion", "", *DISCUSSION, *notes, ""]
    if cons is not None:
        lines += _construction_lines(cons, cfg)
    lines += ["", "![accuracy per length](acc_by_length.png)", "", "![training curves](train_curves.png)", ""]
    # the numbers the published-pages check compares with metrics.json
    lines += ["<!-- headline", "agreement/settled | d", "agreement/settled_agree | d", "agreement/can_learned | d",
              "agreement/settled_fraction | .0%", "cpu_s/constructions | min", "-->", ""]  # fmt: skip
    return "\n".join(lines) + "\n"


def _construction_lines(cons: dict, cfg: dict) -> list[str]:
    n_err = sum(v["exhaustive_errors"] + v["random_errors"] for v in cons["verify"].values())
    lines = [
        "## Constructions (hand-set weights, verified exactly)",
        "",
        f"{len(cons['verify'])} constructions, total errors {n_err}: every string up to the exhaustive length "
        f"(12, fewer for larger alphabets) and {cfg['construction_random']} random strings up to length "
        f"{cfg['construction_max_len']} each.",
        "",
        "| construction | exhaustive len | errors | random positions | errors |",
        "|---|---|---|---|---|",
    ]
    for k, v in cons["verify"].items():
        lines.append(
            f"| {k} | {v['exhaustive_len']} | {v['exhaustive_errors']} | {v['random_positions']} | "
            f"{v['random_errors']} |"
        )
    lines += [
        "",
        "## Counting constructions in fixed-width arithmetic: first n whose member (^n )^n or "
        "a^n b^n c^n is rejected (measured vs bit-width bound)",
        "",
        "| construction/format | measured | predicted |",
        "|---|---|---|",
    ]
    lines += [f"| {k} | {v['first_failing_n']} | {v['predicted']} |" for k, v in cons["fixed_width"].items()]
    return lines


NOTES: dict[tuple[str, str], str] = {}  # per-cell findings, written after inspecting the standard run
DISCUSSION: list[str] = [
    "- **Precision.** Training runs in float32, a fixed width. For regular languages the fixed-width claim is the "
    "one compared; for the counting language a^n b^n c^n the log-precision claim is, because float32 counts "
    "exactly far beyond the tested lengths (<= 498 needs 9 bits) while the fixed-width failure is shown by the "
    "constructions under 8/10-bit integers and 3/7-bit-mantissa floats (table at the end).",
    "- **Samplers are part of the claim test.** Uniform strings would let a short memory pass several languages, "
    "so: `since` and `until` place 1-4 events (b or c) at uniform positions in a filler of a (since: the last "
    "event is b; until, a U b read at the start: the first event is b), so the event to remember lies ~length/5 "
    "or more away; `aa_star` draws half a^n and half a^n with 1-3 b, at odd and even lengths, so 'no b' alone "
    "scores 75%; `anbncn` draws half members, a quarter sorted near misses (block sizes off by 1-2: only counting "
    "rejects them) and a quarter one-symbol mutations. Validation and test lengths come in (odd, even) pairs of "
    "multiples of 3 for the same reason.",
    "- **Settled.** A 'can' claim agrees only with a learned cell; an exact construction shows the class can "
    "represent the language and is reported beside the cell, but a cell that is not learned does not agree. A "
    "'cannot' claim is contradicted by a learned cell and, when it is not learned, settled only beside the same "
    "class's own positive control (a task of the same difficulty learned in the same run); a control from another "
    "class does not count, since a failure of this class may be its budget, not its expressivity.",
    "- **Not covered.** Mixed time-invariant + selective stacks (the paper's PLTLf[MOD] = AC0 ∩ regular class) are "
    "not built; the transformer runs only parity, S5 and last_symbol (Deletang et al. and Merrill et al. anchors). "
    "Published models are larger and train longer; ours are 2 layers, d_model 16, 1000 steps, so a positive "
    "claim whose cell is 'not learned' says the budget or the parametrization did not find the solution, not "
    "that it does not exist.",
]


def _figure_lengths(rows: list[dict], tasks: list[str]) -> Any:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        2, (len(tasks) + 1) // 2, figsize=(3.3 * ((len(tasks) + 1) // 2), 6.0), sharey=True
    )
    axes = np.atleast_1d(axes).ravel()
    for ax, t in zip(axes, tasks):
        for r in (r for r in rows if r["task"] == t):
            d = {int(k): v for k, v in r["acc_by_length"].items()}
            ls = sorted(d)
            ax.plot(
                ls,
                [d[k] for k in ls],
                marker="o",
                ms=3,
                label=f"{r['model']} (theory {_fmt_claim(r['expected'], r['claim'].conjecture)})",
            )
        ax.set_title(t, fontsize=9)
        ax.set_xscale("log")
        ax.set_ylim(0.0, 1.02)
        ax.axhline(0.9, color="gray", lw=0.5, ls=":")
        ax.legend(fontsize=5)
    for ax in axes[len(tasks) :]:
        ax.axis("off")
    axes[0].set_ylabel("test accuracy (chosen runs, mean over seeds)")
    fig.suptitle(
        "Accuracy per test length (trained on lengths ≤ 40); legend: the theoretical claim", fontsize=9
    )
    fig.tight_layout()
    return fig


def _figure_curves(details: dict, tasks: list[str]) -> Any:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, (len(tasks) + 1) // 2, figsize=(3.3 * ((len(tasks) + 1) // 2), 6.0))
    axes = np.atleast_1d(axes).ravel()
    colors = {m: f"C{i}" for i, m in enumerate(MODELS)}
    for ax, t in zip(axes, tasks):
        for model, d in details.items():
            for i, run in enumerate(r for r in d["runs"] if r["task"] == t):
                c = run["curve"]
                ax.plot(
                    [p["step"] for p in c],
                    [max(p["loss"], 1e-6) for p in c],
                    color=colors[model],
                    lw=0.7,
                    alpha=0.8,
                    label=model if i == 0 else None,
                )
        ax.set_title(t, fontsize=9)
        ax.set_yscale("log")
        ax.set_xlabel("step", fontsize=7)
        ax.legend(fontsize=5)
    for ax in axes[len(tasks) :]:
        ax.axis("off")
    axes[0].set_ylabel("training loss (every run)")
    fig.tight_layout()
    return fig


def _score(metrics: dict, rows: list[dict], endpoint: AgreementEndpoint) -> None:
    """The headline from the declared endpoint and the per-cell records (stored with the run)."""
    metrics["endpoint"] = endpoint.to_dict()
    metrics["records"] = _records(rows)
    v = verdict(endpoint, metrics["records"])
    metrics["verdict"] = v.to_dict()
    metrics["verdict_markdown"] = v.markdown()
    metrics["agreement"] = _agreement(v)


def rescore(folder) -> None:
    """Re-score a published run folder from its stored per-cell records with the declared :data:`ENDPOINT` (no
    training): rewrites ``metrics.json`` (endpoint, records, verdict, statuses) and the summary's head, grid and
    table; the construction sections are kept as published."""
    from pathlib import Path

    folder = Path(folder)
    record = json.loads((folder / "metrics.json").read_text())
    metrics, cfg = record["metrics"], record["config"]
    rows = []
    for model, per in metrics["cells"].items():
        for task, r in per.items():
            expected, claim = claim_for(model, task)
            rows.append({"model": model, "task": task, "expected": expected, "claim": claim,
                         "representable": metrics["outcomes"][f"{model}/{task}"]["representable"],
                         "outcome": _outcome(r), **r})  # fmt: skip
    old = (folder / "summary.md").read_text()
    cons_table = re.search(r"\| language \| gate class .*?\n\n", old, re.S).group(0)
    constr = {
        ln.split(" | ")[0][2:] + "/" + ln.split(" | ")[1]: ln.split(" | ")[5]
        for ln in cons_table.splitlines()[2:]
        if ln.startswith("|")
    }
    for row in rows:
        row["construction"] = constr[f"{row['task']}/{row['model']}"]
    _apply_endpoint(rows, ENDPOINT)
    _score(metrics, rows, ENDPOINT)
    metrics["endpoint_declared"] = RESCORED
    for r in rows:
        metrics["outcomes"][f"{r['model']}/{r['task']}"].update(control=r["control"], status=r["status"])
    record["config"] = {**cfg, "endpoint": ENDPOINT.to_dict()}
    record["rescored"] = {"date": time.strftime("%Y-%m-%d"), "by": "experiments.ssm_expressivity.rescore"}
    new = _summary(rows, metrics, None, cfg, record["preset"])
    head = new[: new.index("![accuracy per length]")]
    _, _, tail = old.partition("## Constructions")
    tail = re.sub(r"<!-- headline.*?-->\n", "", tail, flags=re.S)
    block = new[new.index("<!-- headline") :]
    text = head + "## Constructions" + tail.rstrip("\n") + "\n\n" + block
    text = text.replace("--preset standard --resume`.", "--preset standard --resume`; re-scored from the stored "
                        "per-cell records with `experiments.ssm_expressivity.rescore` on " + record["rescored"]["date"]
                        + " (no cell rerun).", 1)  # fmt: skip
    run_date = str(record.get("finished", ""))[:10]
    text = re.sub(r"^Date \d{4}-\d{2}-\d{2}\.", f"Run date {run_date} (re-scored {record['rescored']['date']}).",
                  text, count=1, flags=re.M)  # fmt: skip
    (folder / "metrics.json").write_text(json.dumps(record, indent=2) + "\n")
    (folder / "summary.md").write_text(text)


def _cell_metrics(res: dict) -> dict:
    return {
        t: {
            "acc_by_length": {str(k): v for k, v in r["acc_by_length"].items()},
            "test_acc": r["test_acc"],
            "test_ci": r["test_ci"],
            "test_acc_per_seed": r["test_acc_per_seed"],
            "val_acc": r["val_acc"],
            "train_acc": r["train_acc"],
            "solved": r["solved"],
            "learned": r["learned"],
            "chosen_lrs": r["chosen_lrs"],
            "n_seeds": r["n_seeds"],
            "n_seeds_solved": r["n_seeds_solved"],
        }
        for t, r in res["per_task"].items()
    }


def run(ctx) -> dict:
    cfg = ctx.config
    details, cells = {}, {}
    for model in ctx.progress(cfg["models"], desc="models", total=len(cfg["models"])):
        cells[model], details[model] = {}, {"runs": [], "per_task": {}, "timing": {"cpu": 0.0, "wall": 0.0}}
        for tasks in _task_groups(cfg, model):
            res = ctx.stage(
                f"probe_{model}_{'_'.join(tasks)}",
                lambda model=model, tasks=tasks: _probe(cfg, model, tasks, ctx.seed, ctx),
            )
            cells[model].update(_cell_metrics(res))
            details[model]["runs"] += res["runs"]
            details[model]["per_task"].update(res["per_task"])
            for k in ("cpu", "wall"):
                details[model]["timing"][k] += res["timing"][k]
    cons = ctx.stage("constructions", lambda: _constructions(cfg, ctx.progress))
    metrics = {"cells": cells}
    endpoint = endpoint_from_dict(cfg["endpoint"])
    rows = _cells(metrics, cons, endpoint)
    _score(metrics, rows, endpoint)
    metrics["outcomes"] = {
        f"{r['model']}/{r['task']}": {
            "representable": r["representable"],
            "outcome": r["outcome"],
            "control": r["control"],
            "status": r["status"],
        }
        for r in rows
    }
    metrics["cpu_s"] = {
        "probes": {m: d["timing"].get("cpu") for m, d in details.items()},
        "constructions": cons.get("cpu_s"),
    }
    metrics["wall_s"] = sum(d["timing"]["wall"] for d in details.values()) + cons.get("wall_s", 0.0)
    (ctx.out_dir / "details.json").write_text(
        json.dumps({"probe": details, "constructions": cons}, indent=1, default=str)
    )
    ctx.save_figure(_figure_lengths(rows, cfg["tasks"]), "acc_by_length.png")
    ctx.save_figure(_figure_curves(details, cfg["tasks"]), "train_curves.png")
    ctx.write_summary(_summary(rows, metrics, cons, cfg, ctx.preset))
    flat = {
        m: {t: {"solved": float(v["solved"]), "learned": float(v["learned"])} for t, v in per.items()}
        for m, per in cells.items()
    }
    return {**flat, **metrics}


register(
    Experiment(
        name="ssm_expressivity",
        reproduces="Alsmann, Noori & Lange (ICLR 2026) gate-class expressivity claims; trained results of Sarrof et al. "
        "2024, Merrill et al. 2024, Grazzi et al. 2025, Deletang et al. 2023",
        presets=PRESETS,
        run=run,
        anchors=(
            Anchor(
                "selective_signed/parity/solved",
                1.0,
                "Grazzi et al. 2025 Fig. 1: negative eigenvalues solve parity",
            ),
            Anchor("dense/parity/solved", 1.0, "Grazzi et al. 2025 Fig. 1: DeltaNet [-1,1] solves parity"),
            Anchor(
                "selective_nonneg/parity/solved",
                0.0,
                "Sarrof et al. 2024 / Grazzi et al. 2025: [0,1] gates fail",
            ),
            Anchor("selective_nonneg/aa_star/solved", 0.0, "Sarrof et al. 2024 Fig. 3: Mamba fails (aa)*"),
            Anchor(
                "selective_nonneg/since/solved",
                1.0,
                "Sarrof et al. 2024: Mamba length-generalizes on star-free",
            ),
            Anchor(
                "selective_nonneg/s5_word/solved", 0.0, "Merrill et al. 2024: Mamba fails S5 at fixed depth"
            ),
            Anchor(
                "transformer/s5_word/solved", 0.0, "Merrill et al. 2024: transformers fail S5 at fixed depth"
            ),
            Anchor(
                "transformer/parity/solved",
                0.0,
                "Deletang et al. 2023: transformers fail parity length generalization",
            ),
        ),
        description="SSM gate classes x formal languages: theory, exact constructions, trained length generalization",
    )
)
