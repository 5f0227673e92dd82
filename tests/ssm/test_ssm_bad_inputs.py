"""Bad inputs to jaxkit.ssm found by the issue 20 re-probe: each gave a plausible answer without an error
(letters outside the alphabet read as other letters, token ids past the vocabulary clamped by the embedding
lookup, an automaton pointing at states it does not have)."""

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxkit.ssm as ssm


def test_trace_letters_outside_the_alphabet_raise():
    ok = ssm.accepts("G p0", np.array([[1, 3, 1], [1, 0, 1]]), n_props=2)
    np.testing.assert_array_equal(ok, [True, False])  # G p0: bit 0 set at every step
    with pytest.raises(ValueError, match=r"traces: expected letters in \[0, 3\].*received range \[7, 7\]"):
        ssm.accepts("G p0", np.full((2, 3), 7), n_props=2)  # 7 = 0b111 used to read as {p0, p1}
    with pytest.raises(ValueError, match="n_props: expected an integer >= 0"):
        ssm.evaluate("G p0", np.zeros((2, 3), int), n_props=-1)


def test_dfa_tables_are_checked():
    with pytest.raises(ValueError, match=r"trans: expected next states in \[0, 0\]"):
        ssm.DFA(trans=[[0, 5]], accept=[True])
    with pytest.raises(ValueError, match=r"accept: expected one flag per state, shape \(1,\)"):
        ssm.DFA(trans=[[0, 0]], accept=[True, False])
    with pytest.raises(ValueError, match=r"start: expected a state in \[0, 0\]"):
        ssm.DFA(trans=[[0, 0]], accept=[True], start=3)
    parity = ssm.DFA(trans=[[0, 1], [1, 0]], accept=[True, False])
    np.testing.assert_array_equal(parity.run(np.array([[1, 1, 0, 1]])), [[1, 0, 0, 1]])
    with pytest.raises(ValueError, match=r"tokens: expected symbols in \[0, 1\]"):
        parity.run(np.array([[0, 2]]))


def test_token_ids_past_the_vocabulary_raise():
    key = jax.random.key(0)
    m = ssm.SSMModel(ssm.VARIANTS[0], 4, 2, key=key, d_model=8, d_state=4, n_layers=1)
    assert m(jnp.array([0, 3, 1])).shape == (3, 2)
    with pytest.raises(ValueError, match=r"tokens: expected token ids in \[0, 3\], received range \[0, 9\]"):
        m(jnp.array([0, 9, 1]))  # was clamped to token 3
    tf = ssm.CausalTransformer(4, 2, key=key, d_model=8, n_heads=2, n_layers=1)
    with pytest.raises(ValueError, match=r"tokens: expected token ids in \[0, 3\]"):
        tf(jnp.array([0, 4]))
    c = ssm.construct("parity", "dense")
    toks = np.array([[1, 1, 0, 1]])
    np.testing.assert_array_equal(ssm.predict(c, toks), ssm.get_task("parity").labels(toks))
    with pytest.raises(ValueError, match=r"tokens: expected token ids in \[0, 1\], received range \[0, 5\]"):
        ssm.predict(c, np.array([[0, 5, 1]]))
    with pytest.raises(ValueError, match="chunk: expected an integer >= 1"):
        ssm.predict(c, np.array([[0, 1, 1]]), chunk=0)  # was ZeroDivisionError
    with pytest.raises(ValueError, match="max_depth: expected an integer >= 0"):
        ssm.random_formula(np.random.default_rng(0), max_depth=-1)


def test_reflection_shapes_are_named():
    with pytest.raises(ValueError, match=r"beta: expected shape \(2,\)"):
        ssm.householder_product(jnp.ones((2, 3)), jnp.ones(3))  # was a lax.scan leading-axis error
    with pytest.raises(ValueError, match=r"b: expected shape \(4, 3\)"):
        ssm.reflection_scan(jnp.ones((4, 1, 3)), jnp.ones((4, 1)), jnp.ones((5, 3)))
    # a single reflection with beta = 2 along e1 flips the first coordinate
    H = ssm.householder_product(jnp.array([[1.0, 0.0, 0.0]]), jnp.array([2.0]))
    np.testing.assert_allclose(np.asarray(H), np.diag([-1.0, 1.0, 1.0]), atol=1e-6)


def test_token_ids_past_the_vocabulary_raise_under_jit():
    m = ssm.SSMModel("selective_signed", 4, 2, key=jax.random.key(0), d_model=8, d_state=4, n_layers=1)
    f = jax.jit(lambda t: m(t))
    assert f(jnp.array([0, 3, 1])).shape == (3, 2)
    # jax.jit surfaces the check as a runtime error carrying the message (eqx.filter_jit as EquinoxRuntimeError)
    with pytest.raises(Exception, match=r"tokens: expected token ids in \[0, 3\]"):
        f(jnp.array([0, 9, 1])).block_until_ready()  # was clamped to token 3 under jit
    with pytest.raises(eqx.EquinoxRuntimeError, match="tokens: expected token ids"):
        eqx.filter_jit(lambda t: m(t))(jnp.array([4, 0]))
    with pytest.raises(Exception, match="tokens: expected token ids"):
        jax.jit(jax.vmap(lambda t: m(t)))(jnp.array([[0, 1], [-1, 2]])).block_until_ready()


def test_formula_task_refuses_a_huge_alphabet_quickly():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"n_props: 40 propositions give an alphabet of 2\^40.*max_props=12"):
        ssm.formula_task("p0", n_props=40)
    assert time.perf_counter() - t0 < 1.0
    assert ssm.formula_task("p0", n_props=13, max_props=13).vocab == 2**13  # the cap is overridable
    assert ssm.formula_task("p0 S p1", n_props=2).vocab == 4


def test_task_registry_documents_itself():
    assert "register_task" in type(ssm.TASKS).__doc__ and "parity" in type(ssm.TASKS).__doc__
    with pytest.raises(TypeError):
        ssm.TASKS["x"] = lambda: None  # read-only: register_task is the way in
    with pytest.raises(TypeError, match="task"):  # the runtime type check or our own message
        ssm.register_task("x", 3)


def test_quantize_refuses_nan_eagerly_and_under_jit_and_formulas_name_their_argument():
    """Issue 49: quantize passed NaN/inf through; a bad formula was reported as 'formula:' whatever the
    argument's name."""
    fmt = ssm.FixedPoint(4, 2)
    x = jnp.asarray([0.3, -1.7, 2.2])
    np.testing.assert_array_equal(
        np.asarray(ssm.quantize(x, fmt)), np.asarray(jax.jit(lambda v: ssm.quantize(v, fmt))(x))
    )
    with pytest.raises(ValueError, match="x: expected finite values"):
        ssm.quantize(x.at[1].set(jnp.nan), fmt)
    with pytest.raises(Exception, match="x: expected finite values"):
        jax.jit(lambda v: ssm.quantize(v, fmt))(x.at[1].set(jnp.inf)).block_until_ready()
    with pytest.raises(ssm.LTLfSyntaxError, match="^text: unexpected character"):
        ssm.parse("a -")
    traces = np.zeros((2, 3), np.int64)
    for fn in (ssm.evaluate, ssm.accepts, ssm.prefix_labels):
        with pytest.raises(ValueError, match="^f: unexpected character"):
            fn("p0 -", traces, n_props=1)
    with pytest.raises(ValueError, match="d_model: expected an integer >= 1"):
        ssm.ProbeConfig(d_model=-1)
    with pytest.raises(ValueError, match="tokens: expected finite values"):
        ssm.Batch(np.array([[np.nan]]), np.zeros((1, 1)), np.ones((1, 1), bool), np.ones((1, 1), bool))


def test_fuzz_findings_records_and_sizes_are_checked():
    """The fuzz suite's findings on jaxkit.ssm: an automaton of no states, a task or probe of -1 classes and a
    probe of vocabulary 0 were accepted; a negative d_model failed inside MLIR, and a huge n_layers or
    n_householder with an overflow or an out-of-memory error instead of a refusal naming the size."""
    key = jax.random.key(0)
    with pytest.raises(
        ValueError, match=r"trans: expected shape \(states>=1, symbols>=1\), received \(0, 2\)"
    ):
        ssm.DFA(trans=np.zeros((0, 2), int), accept=np.zeros((0,), bool))
    parity = ssm.get_task("parity")
    fields = {
        f: getattr(parity, f) for f in ("name", "alphabet", "n_classes", "kind", "labels", "dfa_for_length")
    }
    assert ssm.Task(**fields).n_classes == 2
    with pytest.raises(ValueError, match="n_classes: expected an integer >= 1, received -1"):
        ssm.Task(**{**fields, "n_classes": -1})
    with pytest.raises(ValueError, match="kind: expected one of"):
        ssm.Task(**{**fields, "kind": "language"})
    cfg = ssm.ProbeConfig(d_model=4, d_state=2, n_layers=1)
    model = ssm.make_model(cfg, 4, 2, key)
    with pytest.raises(ValueError, match="vocab: expected an integer >= 1, received 0"):
        ssm.TrainedProbe(model, parity, cfg, vocab=0, n_classes=2)
    with pytest.raises(ValueError, match="n_classes: expected an integer >= 1, received -1"):
        ssm.TrainedProbe(model, parity, cfg, vocab=4, n_classes=-1)
    small = {"key": key, "d_model": 4, "d_state": 2, "n_layers": 1}
    with pytest.raises(ValueError, match="d_model: expected an integer >= 1, received -1"):
        ssm.SSMModel("dense", 3, 2, **{**small, "d_model": -1})
    with pytest.raises(ValueError, match="n_layers, d_model.*above the size cap"):
        ssm.SSMModel("dense", 3, 2, **{**small, "n_layers": 2**40})
    with pytest.raises(ValueError, match="n_householder.*above the size cap"):
        ssm.SSMModel("dense", 3, 2, **small, n_householder=2**40)
    with pytest.raises(ValueError, match="n_householder.*above the size cap"):
        ssm.SSMLayer("dense", 4, 2, key=key, n_householder=2**40)


def test_formula_task_names_n_props_and_refuses_a_huge_one_at_once():
    """n_props=0 leaves the formula's p0 without a proposition: the error names n_props (it named only the
    formula); n_props=2**40 is refused at once (the message computed 2**n_props exactly, a hang)."""
    assert ssm.formula_task("F p0", 2).vocab == 4
    with pytest.raises(ValueError, match=r"f: propositions \['p0'\] .* n_props=0"):
        ssm.formula_task("F p0", 0)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"n_props: 1099511627776 propositions .* = 1e330985980541 letters"):
        ssm.formula_task("F p0", 2**40)
    assert time.perf_counter() - t0 < 1.0
