"""The two lists that keep what the fuzz suite has not closed visible. Both may only shrink: the tests fail on an
entry that no longer applies, telling you to remove it.

- ``PENDING``: exports with neither a base call built from their signature nor a factory, with the reason.
- ``SLOW``: exports fuzzed only in the long run (``pytest -m fuzz``), with the reason.
- ``KNOWN_VIOLATIONS``: ``{export: {(parameter, edge): reason}}`` for contract violations not fixed yet.

A documented exception to the contract (a defined ``inf``, an unchecked ``*_core`` function) is not a violation:
it is listed in ``DOCUMENTED`` below *and* in the table of docs/contracts.md (a test checks that every name here
appears there), with the edges it applies to.
"""

from __future__ import annotations

PENDING: dict[str, str] = {
    "jaxkit.diffusion.AbstractSE3Sampler": "abstract base class (abstract methods, cannot be instantiated): its concrete subclasses EulerMaruyama, ProbabilityFlowODE and DDIM are fuzzed",
    "jaxkit.diffusion.AbstractSchedule": "abstract base class (abstract methods, cannot be instantiated): its concrete subclasses VPSchedule, CosineVPSchedule and VESchedule are fuzzed",
    "jaxkit.diffusion.Parametrization": "a type alias, not a callable: typing.Literal['score', 'eps'] (the values of SE3Diffusion's parametrization field, which SE3Diffusion checks with check_choice) cannot be instantiated",
    "jaxkit.train.initialize_distributed": "no base call in a test process: it starts JAX's multi-process runtime, which must come before any JAX computation (and with a single process it switches the whole test process to distributed defaults); covered by tests/train/test_multiprocess.py and test_distributed_timeout.py",
}

# Exports fuzzed only by the long run (``pytest -m fuzz``): the base call and its edges took more than 2 s
# (measured on the shared 2-core machine), past the default run's budget; the time is in the reason.
SLOW: dict[str, str] = {
    "jaxkit.diffusion.ddim_sample": "13.7 s for the base call and its edge table",
    "jaxkit.diffusion.ddpm_sample": "4.8 s for the base call and its edge table",
    "jaxkit.diffusion.igso3.log_density": "2.5 s for the base call and its edge table",
    "jaxkit.diffusion.igso3.sample_angle": "6.2 s for the base call and its edge table",
    "jaxkit.diffusion.igso3.score_vector": "3.4 s for the base call and its edge table",
    "jaxkit.diffusion.so3_diffusion.brownian_motion": "4.1 s for the base call and its edge table",
    "jaxkit.diffusion.so3_diffusion.dsm_loss": "9.7 s for the base call and its edge table",
    "jaxkit.docking.FragmentScoreModel": "11.0 s for the base call and its edge table",
    "jaxkit.docking.bond_gap": "7.0 s for the base call and its edge table",
    "jaxkit.docking.build_model": "22.0 s for the base call and its edge table",
    "jaxkit.docking.confidence_training_data": "17.0 s for the base call alone (it samples poses with a score model)",
    "jaxkit.docking.cross_validate_rankings": "17.6 s for the base call and its edge table (trains one model per fold)",
    "jaxkit.docking.dock_many": "11.5 s for the base call alone (it docks a ligand with the shipped model)",
    "jaxkit.docking.train_confidence": "13.3 s for the base call and its edge table (compiles an Adam step)",
    "jaxkit.docking.dock": "12.3 s for the base call and its edge table (samples with a score model, prepares the receptor with meeko, scores with Vinardo)",
    "jaxkit.docking.sample_complex": "7.2 s for the base call and its edge table (compiles the sampler)",
    "jaxkit.docking.evaluate_complex": "9.0 s for the base call and its edge table (compiles the sampler, builds Vinardo maps)",
    "jaxkit.docking.evaluate_variants": "3.4 s for the base call and its edge table (samples with a score model, builds Vinardo maps)",
    "jaxkit.docking.batch_loss": "7.1 s for the base call and its edge table (compiles the batched loss)",
    "jaxkit.docking.train_model": "5.9 s for the base call and its edge table (compiles a training step)",
    "jaxkit.docking.VinardoScorer": "6.9 s for the base call and its edge table (Vinardo grid maps for every edge)",
    "jaxkit.docking.vina_dock": "3.3 s for the base call and its edge table (runs AutoDock Vina)",
    "jaxkit.docking.vina_crystal_energies": "3.2 s for the base call and its edge table (prepares the receptor, runs Vina)",
    "jaxkit.docking.rank_poses": "2.9 s for the base call and its edge table (Vinardo grid maps)",
    "jaxkit.docking.model_method": "2.6 s for the base call and its edge table (builds and saves a score model first)",
    "jaxkit.docking.vina_pose_energy": "2.6 s for the base call and its edge table (prepares the receptor, runs Vina)",
    "jaxkit.docking.make_scorer": "2.1 s for the base call and its edge table (Vinardo grid maps)",
    "jaxkit.docking.load_model": "2.1 s for the base call and its edge table (builds and saves a score model first)",
    "jaxkit.docking.ccd_examples": "77.2 s for the base call and its edge table",
    "jaxkit.docking.contact_score": "3.8 s for the base call and its edge table",
    "jaxkit.docking.dock_samples": "47.0 s for the base call and its edge table",
    "jaxkit.docking.dsm_loss": "7.9 s for the base call and its edge table",
    "jaxkit.docking.posebusters_complexes": "2.5 s for the base call and its edge table",
    "jaxkit.docking.real_complexes": "2.9 s for the base call and its edge table",
    "jaxkit.docking.real_training_complexes": "2.1 s for the base call and its edge table",
    "jaxkit.docking.sample_poses": "19.7 s for the base call and its edge table",
    "jaxkit.dynamics.deep_linear_apply": "7.9 s for the base call and its edge table",
    "jaxkit.dynamics.deep_linear_mode": "8.9 s for the base call and its edge table",
    "jaxkit.dynamics.gradient_flow": "the base call alone ran past 10 s (compilation of a sampler or training step)",
    "jaxkit.dynamics.gradient_flow_batch": "13.0 s for the base call and its edge table (compiles the vmapped Kvaerno5 solve)",
    "jaxkit.dynamics.linear_fixed_point": "3.2 s for the base call and its edge table",
    "jaxkit.forecast.ConditionalDenoiser": "2.4 s for the base call and its edge table",
    "jaxkit.forecast.MLPDenoiser": "4.0 s for the base call and its edge table",
    "jaxkit.forecast.build_market_data": "5.5 s for the base call and its edge table",
    "jaxkit.forecast.forecaster_loss": "the base call alone ran past 10 s (compilation of a sampler or training step)",
    "jaxkit.forecast.garch_paths": "4.3 s for the base call and its edge table",
    "jaxkit.forecast.market_data_from_frames": "3.0 s for the base call and its edge table",
    "jaxkit.forecast.sample_paths": "52.7 s for the base call and its edge table",
    "jaxkit.forecast.step_embedding": "2.2 s for the base call and its edge table",
    "jaxkit.forecast.train_forecaster": "22.8 s for the base call and its edge table (n_steps=2**40 runs to the 10 s limit)",
    "jaxkit.geometry.kabsch": "3.9 s for the base call and its edge table",
    "jaxkit.geometry.so3.rotation_from_uniforms": "2.0 s for the base call and its edge table",
    "jaxkit.kernels.linear_scan.linear_scan": "6.3 s for the base call and its edge table",
    "jaxkit.kernels.linear_scan.linear_scan_reference": "5.8 s for the base call and its edge table",
    "jaxkit.operators.FNO": "24.3 s for the base call and its edge table",
    "jaxkit.operators.FlaxFNO": "3.4 s for the base call and its edge table",
    "jaxkit.operators.FlaxNeuralOperator": "1.4 s for the base call and its edge table",
    "jaxkit.operators.member": "2.4 s for the base call and its edge table",
    "jaxkit.operators.riesz_spectral_conv": "2.4 s for the base call and its edge table",
    "jaxkit.operators.train_ensemble": "21.4 s for the base call and its edge table (compiles an ensemble training step)",
    "jaxkit.operators.LNO": "6.6 s for the base call and its edge table",
    "jaxkit.operators.RNO": "12.3 s for the base call and its edge table",
    "jaxkit.operators.evaluate": "4.0 s for the base call and its edge table",
    "jaxkit.operators.riesz_pairs": "12.1 s for the base call and its edge table",
    "jaxkit.operators.spectral_conv": "3.7 s for the base call and its edge table",
    "jaxkit.operators.to_flax": "6.1 s for the base call and its edge table",
    "jaxkit.operators.train_operator": "the base call alone ran past 10 s (compilation of a sampler or training step)",
    "jaxkit.pde.darcy.solve": "3.2 s for the base call and its edge table",
    "jaxkit.pde.grf.grf_neumann": "4.1 s for the base call and its edge table",
    "jaxkit.pde.lno.beam": "64.1 s for the base call and its edge table",
    "jaxkit.pde.lno.brusselator": "the base call alone ran past 10 s (compilation of a sampler or training step)",
    "jaxkit.pde.lno.diffusion": "33.8 s for the base call and its edge table",
    "jaxkit.pde.lno.duffing": "208.8 s for the base call and its edge table",
    "jaxkit.pde.lno.reaction_diffusion": "96.1 s for the base call and its edge table",
    "jaxkit.pde.lno.reaction_diffusion_manufactured": "3.9 s for the base call and its edge table",
    "jaxkit.pde.navier_stokes.fno_forcing": "the base call alone ran past 10 s (compilation of a sampler or training step)",
    "jaxkit.pde.navier_stokes.solve": "2.9 s for the base call and its edge table",
    "jaxkit.portfolio.black_litterman": "3.5 s for the base call and its edge table",
    "jaxkit.portfolio.black_litterman_core": "2.6 s for the base call and its edge table",
    "jaxkit.portfolio.he_litterman_omega": "3.4 s for the base call and its edge table",
    "jaxkit.portfolio.idzorek_omega": "3.9 s for the base call and its edge table",
    "jaxkit.portfolio.max_sharpe": "18.0 s for the base call and its edge table",
    "jaxkit.portfolio.solve_qp_nonneg": "9.7 s for the base call and its edge table",
    "jaxkit.portfolio.stable_long_only_weights": "the base call alone ran past 10 s (compilation of a sampler or training step)",
    "jaxkit.portfolio.stable_weights": "4.5 s for the base call and its edge table",
    "jaxkit.portfolio.stable_weights_core": "8.0 s for the base call and its edge table",
    "jaxkit.portfolio.strategy_weights": "the base call alone ran past 10 s (compilation of a sampler or training step)",
    "jaxkit.portfolio.walk_forward": "2.6 s for the base call and its edge table",
    "jaxkit.ssm.CausalTransformer": "the base call alone ran past 10 s (compilation of a sampler or training step)",
    "jaxkit.ssm.construct": "5.7 s for the base call and its edge table",
    "jaxkit.ssm.diagonal_scan": "3.5 s for the base call and its edge table",
    "jaxkit.ssm.first_failure": "14.8 s for the base call and its edge table",
    "jaxkit.ssm.householder_product": "4.1 s for the base call and its edge table",
    "jaxkit.ssm.make_model": "10.5 s for the base call and its edge table",
    "jaxkit.ssm.predict": "2.7 s for the base call and its edge table",
    "jaxkit.ssm.reflection_scan": "9.0 s for the base call and its edge table",
    "jaxkit.ssm.train_runs": "5.2 s for the base call and its edge table (a 5-step probe of one task; compiling its training step is most of it)",
    "jaxkit.ssm.verify": "7.3 s for the base call and its edge table",
    "jaxkit.stability.Transformer": "9.5 s for the base call and its edge table",
    "jaxkit.stability.average_sensitivity": "3.3 s for the base call and its edge table",
    "jaxkit.stability.correlated_copy": "3.3 s for the base call and its edge table",
    "jaxkit.stability.gaussian_embedding_mse_penalty": "6.9 s for the base call and its edge table",
    "jaxkit.stability.noise_stability": "10.7 s for the base call and its edge table",
    "jaxkit.stability.relu_correlation_map": "4.0 s for the base call and its edge table",
    "jaxkit.stability.relu_second_moment": "5.8 s for the base call and its edge table",
    "jaxkit.stability.token_agreement": "8.6 s for the base call and its edge table",
    "jaxkit.stability.train_method": "21.1 s for the base call and its edge table",
    "jaxkit.stability.regularized_loss": "5.8 s for the base call and its edge table",
    "jaxkit.stability.embedding_stability": "5.7 s for the base call and its edge table",
    "jaxkit.train.fit": "10.7 s for the base call and its edge table (n_steps=2**40 runs to the 10 s limit)",
    "jaxkit.train.fit_ensemble": "10.5 s for the base call and its edge table (n_steps=2**40 runs to the 10 s limit)",
}

_PLACEMENT_PASSES_NONFINITE = "NaN/inf reaches the result by design: a placement function moves any pytree onto devices and computes nothing, and legitimate inf travels through it (an attention mask's -inf, optax.contrib.reduce_on_plateau's best value); as to_host"


def _passes_nonfinite(param: str) -> dict[tuple[str, str], str]:
    """The three non-finite edges of ``param`` of a placement function (which moves a pytree and computes nothing)."""
    return {(param, edge): _PLACEMENT_PASSES_NONFINITE for edge in ("nan", "inf", "-inf")}


KNOWN_VIOLATIONS: dict[str, dict[tuple[str, str], str]] = {
    "jaxkit.dynamics.FlowResult": {
        (
            "ts",
            "nan",
        ): "NaN/inf reaches the result by design: FlowResult records what gradient_flow computed, and gradient_flow(on_failure='flag') returns NaN saves after t_stop on purpose; the record holds what it is given",
        (
            "ts",
            "inf",
        ): "NaN/inf reaches the result by design: FlowResult records what gradient_flow computed, and gradient_flow(on_failure='flag') returns NaN saves after t_stop on purpose; the record holds what it is given",
        (
            "ts",
            "-inf",
        ): "NaN/inf reaches the result by design: FlowResult records what gradient_flow computed, and gradient_flow(on_failure='flag') returns NaN saves after t_stop on purpose; the record holds what it is given",
        (
            "loss",
            "nan",
        ): "NaN/inf reaches the result by design: FlowResult records what gradient_flow computed, and gradient_flow(on_failure='flag') returns NaN saves after t_stop on purpose; the record holds what it is given",
        (
            "loss",
            "inf",
        ): "NaN/inf reaches the result by design: FlowResult records what gradient_flow computed, and gradient_flow(on_failure='flag') returns NaN saves after t_stop on purpose; the record holds what it is given",
        (
            "loss",
            "-inf",
        ): "NaN/inf reaches the result by design: FlowResult records what gradient_flow computed, and gradient_flow(on_failure='flag') returns NaN saves after t_stop on purpose; the record holds what it is given",
        (
            "t_stop",
            "nan",
        ): "NaN/inf reaches the result by design: FlowResult records what gradient_flow computed, and gradient_flow(on_failure='flag') returns NaN saves after t_stop on purpose; the record holds what it is given",
        (
            "t_stop",
            "inf",
        ): "NaN/inf reaches the result by design: FlowResult records what gradient_flow computed, and gradient_flow(on_failure='flag') returns NaN saves after t_stop on purpose; the record holds what it is given",
        (
            "t_stop",
            "-inf",
        ): "NaN/inf reaches the result by design: FlowResult records what gradient_flow computed, and gradient_flow(on_failure='flag') returns NaN saves after t_stop on purpose; the record holds what it is given",
    },
    "jaxkit.dynamics.gradient_flow_batch": {
        (
            "tau",
            "sigma->0",
        ): "a tiny time constant tau makes the flow stiff: the solver stops at max_steps and raises SolveError (a RuntimeError that names the remedies: raise max_steps, loosen rtol/atol, another solver), as gradient_flow; refusing tau up front would refuse problems a stiffer setup solves",
    },
    "jaxkit.pde.make_dataset": {
        (
            "n_test",
            "zero",
        ): "n_test=0 is valid by design (a training set only: n_test is checked as an integer >= 0); the test arrays are then empty, which the harness counts as an empty result",
    },
    "jaxkit.operators.TrainedOperator": {
        (
            "epoch_time",
            "nan",
        ): "NaN is the field's default and documented meaning (the time per epoch was not measured, e.g. a record built by hand); inf and negative times are refused",
    },
    "jaxkit.dynamics.gradient_flow": {
        (
            "tau",
            "sigma->0",
        ): "a tiny time constant tau makes the flow stiff: the default explicit solver stops at max_steps and raises SolveError (a RuntimeError that names the remedies: a stiff solver such as diffrax.Kvaerno5 solves it); refusing tau up front would refuse problems a stiff solver solves",
    },
    "jaxkit.docking.cross_validate_rankings": {
        (
            "n_steps",
            "huge",
        ): "n_steps=2**40 is a valid (very long) training request, not a size beyond memory: nothing grows with it, so it is not refused and runs past the 10 s limit; no step cap chosen yet",
    },
    "jaxkit.docking.train_confidence": {
        (
            "n_steps",
            "huge",
        ): "n_steps=2**40 is a valid (very long) training request, not a size beyond memory: nothing grows with it, so it is not refused and runs past the 10 s limit; no step cap chosen yet",
    },
    "jaxkit.forecast.train_forecaster": {
        (
            "n_steps",
            "huge",
        ): "n_steps=2**40 is a valid (very long) training request, not a size beyond memory: nothing grows with it, so it is not refused and runs past the 10 s limit; no step cap chosen yet (as jaxkit.train.fit, which it calls)",
    },
    "jaxkit.docking.confidence_training_data": {
        (
            "conformer_seed",
            "zero",
        ): "conformer_seed=0 is the default and valid; the result's extra arrays have shape (n, 0) by design (no per-pose extra features), which the harness counts as an empty result",
    },
    "jaxkit.docking.dock_many": {
        (
            "pb_budget",
            "zero",
        ): "pb_budget=0 is valid (no validity check allowed) and the result is summary rows of strings, which the harness counts as an empty result (no numeric value)",
        (
            "conformer_seed",
            "zero",
        ): "conformer_seed=0 is the default and valid; the result is summary rows of strings, which the harness counts as an empty result (no numeric value)",
    },
    "jaxkit.docking.ranking_warning": {
        (
            "pb_budget",
            "zero",
        ): "pb_budget=0 is valid (no validity check allowed) and the result is a message string, which the harness counts as an empty result (no numeric value)",
    },
    "jaxkit.docking.RankedPose": {
        (
            "vinardo",
            "nan",
        ): "NaN/inf reaches the result by design: RankedPose is the record rank_poses and the rankings build, and holds what it is given: vinardo is inf where Vina cannot place a pose and NaN where the ranking uses no Vinardo (SamplingOrder, ConsensusRanking); rank_poses checks the bond gaps it is handed",
        (
            "vinardo",
            "inf",
        ): "NaN/inf reaches the result by design: RankedPose is the record rank_poses and the rankings build, and holds what it is given: vinardo is inf where Vina cannot place a pose and NaN where the ranking uses no Vinardo (SamplingOrder, ConsensusRanking); rank_poses checks the bond gaps it is handed",
        (
            "vinardo",
            "-inf",
        ): "NaN/inf reaches the result by design: RankedPose is the record rank_poses and the rankings build, and holds what it is given: vinardo is inf where Vina cannot place a pose and NaN where the ranking uses no Vinardo (SamplingOrder, ConsensusRanking); rank_poses checks the bond gaps it is handed",
        (
            "bond_gap",
            "nan",
        ): "NaN/inf reaches the result by design: RankedPose is the record rank_poses and the rankings build, and holds what it is given: vinardo is inf where Vina cannot place a pose and NaN where the ranking uses no Vinardo (SamplingOrder, ConsensusRanking); rank_poses checks the bond gaps it is handed",
        (
            "bond_gap",
            "inf",
        ): "NaN/inf reaches the result by design: RankedPose is the record rank_poses and the rankings build, and holds what it is given: vinardo is inf where Vina cannot place a pose and NaN where the ranking uses no Vinardo (SamplingOrder, ConsensusRanking); rank_poses checks the bond gaps it is handed",
        (
            "bond_gap",
            "-inf",
        ): "NaN/inf reaches the result by design: RankedPose is the record rank_poses and the rankings build, and holds what it is given: vinardo is inf where Vina cannot place a pose and NaN where the ranking uses no Vinardo (SamplingOrder, ConsensusRanking); rank_poses checks the bond gaps it is handed",
        (
            "confidence",
            "nan",
        ): "NaN/inf reaches the result by design: RankedPose is the record rank_poses and the rankings build, and holds what it is given: vinardo is inf where Vina cannot place a pose and NaN where the ranking uses no Vinardo (SamplingOrder, ConsensusRanking); rank_poses checks the bond gaps it is handed",
        (
            "confidence",
            "inf",
        ): "NaN/inf reaches the result by design: RankedPose is the record rank_poses and the rankings build, and holds what it is given: vinardo is inf where Vina cannot place a pose and NaN where the ranking uses no Vinardo (SamplingOrder, ConsensusRanking); rank_poses checks the bond gaps it is handed",
        (
            "confidence",
            "-inf",
        ): "NaN/inf reaches the result by design: RankedPose is the record rank_poses and the rankings build, and holds what it is given: vinardo is inf where Vina cannot place a pose and NaN where the ranking uses no Vinardo (SamplingOrder, ConsensusRanking); rank_poses checks the bond gaps it is handed",
        (
            "rank",
            "negative",
        ): "rank=-1 is the record's default, meaning not ranked yet (rank_poses sets 0, 1, ...): a sentinel, not a count",
    },
    "jaxkit.docking.DockingResult": {
        (
            "seconds",
            "nan",
        ): "NaN/inf reaches the result by design: DockingResult is the record dock builds from its own clock (time.perf_counter), and holds what it is given",
        (
            "seconds",
            "inf",
        ): "NaN/inf reaches the result by design: DockingResult is the record dock builds from its own clock (time.perf_counter), and holds what it is given",
        (
            "seconds",
            "-inf",
        ): "NaN/inf reaches the result by design: DockingResult is the record dock builds from its own clock (time.perf_counter), and holds what it is given",
    },
    "jaxkit.docking.DockingInputs": {
        (
            "box_size",
            "nan",
        ): "NaN/inf reaches the result by design: DockingInputs is the record docking_inputs builds after checking box_size (finite, > 0), and holds what it is given",
        (
            "box_size",
            "inf",
        ): "NaN/inf reaches the result by design: DockingInputs is the record docking_inputs builds after checking box_size (finite, > 0), and holds what it is given",
        (
            "box_size",
            "-inf",
        ): "NaN/inf reaches the result by design: DockingInputs is the record docking_inputs builds after checking box_size (finite, > 0), and holds what it is given",
        (
            "seed",
            "negative",
        ): "DockingInputs is the record docking_inputs builds after checking seed (an integer >= 0), and holds what it is given",
    },
    "jaxkit.docking.model_method": {
        (
            "pb_budget",
            "zero",
        ): "pb_budget=0 is valid (no validity check allowed) and the result is a method (a callable), with no numeric value, which the harness counts as an empty result",
    },
    "jaxkit.docking.DockingComplex": {
        (
            "R0",
            "nan",
        ): "NaN/inf reaches the result: R0 is not checked at construction, since tests/docking/test_docking_confidence.py builds a complex with a NaN R0 on purpose (the reference pose never reaches the confidence model); checking it needs that test changed",
        (
            "R0",
            "inf",
        ): "NaN/inf reaches the result: R0 is not checked at construction, since tests/docking/test_docking_confidence.py builds a complex with a NaN R0 on purpose (the reference pose never reaches the confidence model); checking it needs that test changed",
        (
            "R0",
            "-inf",
        ): "NaN/inf reaches the result: R0 is not checked at construction, since tests/docking/test_docking_confidence.py builds a complex with a NaN R0 on purpose (the reference pose never reaches the confidence model); checking it needs that test changed",
    },
    "jaxkit.docking.conformer_positions": {
        ("conf_id", "negative"): "a negative count or size is accepted",
    },
    "jaxkit.docking.embed_conformer": {
        ("seed", "zero"): "a size of 0 returns an empty result instead of an error",
    },
    "jaxkit.docking.loose_pseudo_pocket": {
        (
            "positions",
            "zeros",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "positions",
            "negative",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "positions",
            "duplicate",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "positions",
            "collinear",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
    },
    "jaxkit.docking.match_conformer": {
        ("conf_id", "negative"): "a negative count or size is accepted",
    },
    "jaxkit.docking.pseudo_pocket": {
        (
            "positions",
            "zeros",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "positions",
            "negative",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "positions",
            "duplicate",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "positions",
            "collinear",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
    },
    "jaxkit.docking.random_method": {
        ("pb_budget", "zero"): "a size of 0 returns an empty result instead of an error",
    },
    "jaxkit.evaluation.time_to_event": {
        (
            "baseline",
            "nan",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "baseline",
            "inf",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "baseline",
            "-inf",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "method",
            "nan",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "method",
            "inf",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
        (
            "method",
            "-inf",
        ): "accepted with a result of another shape: a degenerate input needs a clear error or a documented result",
    },
    "jaxkit.ssm.random_formula": {
        ("max_depth", "zero"): "a size of 0 returns an empty result instead of an error",
    },
    "jaxkit.stability.stacked_eval": {
        ("positions", "zero"): "a size of 0 returns an empty result instead of an error",
        ("positions", "negative"): "a negative count or size is accepted",
    },
    "jaxkit.stability.train_method": {
        (
            "n_steps",
            "huge",
        ): "n_steps=2**40 is a valid (very long) training request, not a size beyond memory: nothing grows with it, so it is not refused and runs past the 10 s limit; no step cap chosen yet",
    },
    "jaxkit.stability.stacked_batches": {
        (
            "seed",
            "zero",
        ): "seed=0 is a valid seed; the result is a StackedBatches callable (batches are drawn per step), with no numeric value, which the harness counts as an empty result",
    },
    "jaxkit.stability.compare_speed": {
        (
            "target",
            "zero",
        ): "target=0 is valid and every seed of every method reaches it at the first log: the log-rank test has no events to compare and its p-value is None, a result of another structure by design",
        (
            "target",
            "negative",
        ): "target=-1 is valid and every seed of every method reaches it at the first log: the log-rank test has no events to compare and its p-value is None, a result of another structure by design",
    },
    "jaxkit.train.EmaState": {
        (
            "average",
            "nan",
        ): "NaN/inf reaches the result by design: EmaState is the optimizer-state record track_ema builds inside the jitted update, and holds what it is given (read_ema and fit check what goes in and comes out)",
        (
            "average",
            "inf",
        ): "NaN/inf reaches the result by design: EmaState is the optimizer-state record track_ema builds inside the jitted update, and holds what it is given (read_ema and fit check what goes in and comes out)",
        (
            "average",
            "-inf",
        ): "NaN/inf reaches the result by design: EmaState is the optimizer-state record track_ema builds inside the jitted update, and holds what it is given (read_ema and fit check what goes in and comes out)",
    },
    "jaxkit.train.FitResult": {
        (
            "model",
            "nan",
        ): "NaN/inf reaches the result by design: FitResult records what fit trained, and fit(nonfinite='ignore') returns a diverged model on purpose",
        (
            "model",
            "inf",
        ): "NaN/inf reaches the result by design: FitResult records what fit trained, and fit(nonfinite='ignore') returns a diverged model on purpose",
        (
            "model",
            "-inf",
        ): "NaN/inf reaches the result by design: FitResult records what fit trained, and fit(nonfinite='ignore') returns a diverged model on purpose",
    },
    "jaxkit.train.distribute_batch": _passes_nonfinite("batch"),
    "jaxkit.train.shard_batch": _passes_nonfinite("batch"),
    "jaxkit.train.replicate": _passes_nonfinite("tree"),
    "jaxkit.train.fit": {
        (
            "n_steps",
            "huge",
        ): "n_steps=2**40 is a valid (very long) training request, not a size beyond memory: nothing grows with it, so it is not refused and runs past the 10 s limit; no step cap chosen yet",
    },
    "jaxkit.train.fit_ensemble": {
        (
            "n_steps",
            "huge",
        ): "n_steps=2**40 is a valid (very long) training request, not a size beyond memory: nothing grows with it, so it is not refused and runs past the 10 s limit; no step cap chosen yet",
    },
    "jaxkit.train.to_host": {
        ("x", "nan"): "NaN/inf reaches the result: no finite check of this argument at the entry point yet",
        ("x", "inf"): "NaN/inf reaches the result: no finite check of this argument at the entry point yet",
        ("x", "-inf"): "NaN/inf reaches the result: no finite check of this argument at the entry point yet",
    },
}


# Documented exceptions (docs/contracts.md, "Documented exceptions"): export -> (edges whose non-finite result is
# the documented behavior, the reason). Only a non-finite result on these edges is excused; an error of the
# wrong type, a wrong shape or a hang is still a violation.
_NONFINITE_IN = frozenset({"nan", "inf", "-inf"})
_CORE = (
    "unchecked by design: the *_core functions are the jit/vmap building blocks behind a checked public "
    "function; they do no value checks, so NaN/inf in gives NaN/inf out"
)
_UNDEFINED_RATIO = (
    "a ratio whose denominator is zero (constant returns have no spread, a series without a drawdown has no "
    "Calmar ratio) is undefined: nan, with a RuntimeWarning saying why"
)
DOCUMENTED: dict[str, tuple[frozenset[str], str]] = {
    **{
        f"jaxkit.portfolio.{f}": (frozenset({"zeros", "drawn"}), _UNDEFINED_RATIO)
        for f in (
            "sharpe_ratio",
            "sortino_ratio",
            "calmar_ratio",
            "performance_summary",
            "sharpe_confidence_interval",
        )
    },
    "jaxkit.portfolio.black_litterman_core": (_NONFINITE_IN, _CORE),
    "jaxkit.portfolio.precision_black_litterman_core": (
        _NONFINITE_IN | {"negative"},
        _CORE + "; a covariance that is not positive definite (negated) has no precision either: NaN out",
    ),
    "jaxkit.portfolio.stable_weights_core": (
        _NONFINITE_IN | {"zeros", "negative", "singular", "drawn"},
        _CORE + "; a prior or view covariance that is not positive definite (zero, negated, singular, or a "
        "drawn array that is not a covariance, such as all zeros) has no precision: NaN out",
    ),
    "jaxkit.portfolio.ledoit_wolf_core": (_NONFINITE_IN, _CORE),
    "jaxkit.portfolio.simulate": (_NONFINITE_IN, _CORE),
    "jaxkit.operators.relative_l2": (
        frozenset({"zeros"}),
        "a sample whose target is identically zero has no finite relative error: inf (0 for an exact match); a "
        "training loss that meets one stops with FloatingPointError",
    ),
    "jaxkit.stability.StabilityEstimate": (
        _NONFINITE_IN,
        "a record of what noise_stability/average_sensitivity computed: they refuse NaN/inf from f, except with "
        "check_finite=False, where the estimate is documented to be NaN; the record holds what it is given",
    ),
    "jaxkit.diffusion.igso3.angle_log_density": (
        frozenset({"zeros", "drawn"}),
        "the angle density (1 - cos ω)/π · f vanishes at ω = 0, so its logarithm is -inf there (exact)",
    ),
    "jaxkit.dynamics.crossing_time": (
        frozenset({"zeros", "negative", "drawn"}),
        "a series that never reaches the level has no crossing time: nan, with a RuntimeWarning saying so",
    ),
    "jaxkit.train.global_norm": (
        _NONFINITE_IN,
        "a non-finite leaf gives a non-finite norm (NaN for a NaN entry, inf for an infinite one), as "
        "optax.global_norm, so divergence is visible: training loops read the norm to detect it",
    ),
    # A finite result, documented as one of several: the empty edge set excuses nothing in the fuzz suite; the
    # entry keeps this table and the page's in agreement.
    "jaxkit.portfolio.min_variance": (
        frozenset(),
        "when cov is singular (a duplicated asset, a sample covariance of fewer dates than assets) the minimizer "
        "need not be unique; the interior-point solution is the analytic center of the optimal set, e.g. an equal "
        "split between duplicate assets (singular covariances are common, so they are not refused)",
    ),
}


# Results whose length depends on the values, by definition (docs/contracts.md, "Documented exceptions"): export
# -> (edges, reason). On these edges a result of another length than the base call's is what the function
# documents (a list of the plateaus found, the jumps of a path), not a violation; a non-finite result, an error of
# the wrong type or a hang still is.
SHAPE_BY_VALUE: dict[str, tuple[frozenset[str], str]] = {
    "jaxkit.docking.extract_pocket": (
        frozenset({"duplicate", "collinear"}),
        "the pocket is the protein atoms within cutoff of the ligand's atoms, so its size depends on the "
        "positions: duplicated or collinear ligand atoms select fewer atoms (a valid, smaller pocket)",
    ),
    "jaxkit.dynamics.plateaus": (
        frozenset({"zeros", "duplicate"}),
        "a list of the plateaus found in the curve: a constant curve is one plateau, a flat step adds one",
    ),
    "jaxkit.dynamics.diagonal_jumps": (
        frozenset({"zeros", "duplicate", "singular", "collinear", "negative"}),
        "the path of the saddle-jump algorithm has as many jumps as the data asks for: none when the gradient "
        "vanishes at β = 0 (X = 0 or y = 0: β = 0 is already critical), fewer for a rank-deficient X",
    ),
}
