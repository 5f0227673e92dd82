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
    "jaxkit.diffusion.AbstractSE3Sampler": "no base call from the signature and no factory yet (TypeError: Can't instantiate abstract class AbstractSE3Sampler with abstract methods rot",
    "jaxkit.diffusion.AbstractSchedule": "no base call from the signature and no factory yet (TypeError: Can't instantiate abstract class AbstractSchedule with abstract methods diffu",
    "jaxkit.diffusion.Parametrization": "no base call from the signature and no factory yet (TypeError: Cannot instantiate typing.Literal)",
    "jaxkit.docking.DockingExample": "no base call from the signature and no factory yet (no candidate value for id: <class 'str'>)",
    "jaxkit.docking.DockingInputs": "no base call from the signature and no factory yet (no candidate value for id: <class 'str'>)",
    "jaxkit.docking.DockingResult": "no base call from the signature and no factory yet (no candidate value for poses: list[jaxkit.docking._rank.RankedPose])",
    "jaxkit.docking.PreparedLigand": "no base call from the signature and no factory yet (no candidate value for setting: <class 'str'>)",
    "jaxkit.docking.RankedPose": "no base call from the signature and no factory yet (no candidate value for failed_checks: list[str])",
    "jaxkit.docking.VinardoScorer": "no base call from the signature and no factory yet (no candidate value for receptor_pdbqt: str | pathlib.Path)",
    "jaxkit.docking.assemble_poses": "no base call from the signature and no factory yet (ValueError: x: expected sampled positions (n_samples, >= 13, 3) (the ligand's 13 atoms f",
    "jaxkit.docking.batch_loss": "no base call from the signature and no factory yet (no candidate value for model: collections.abc.Callable[[jaxkit.docking._complex.DockingC",
    "jaxkit.docking.check_no_reference": "no base call from the signature and no factory yet (no candidate value for inputs: <class 'jaxkit.docking._realeval.DockingInputs'>)",
    "jaxkit.docking.dock": "no base call from the signature and no factory yet (no candidate value for protein: str | pathlib.Path)",
    "jaxkit.docking.docking_inputs": "no base call from the signature and no factory yet (no candidate value for example: <class 'jaxkit.docking._datasets.DockingExample'>)",
    "jaxkit.docking.evaluate_complex": "no base call from the signature and no factory yet (no candidate value for example: <class 'jaxkit.docking._datasets.DockingExample'>)",
    "jaxkit.docking.evaluate_methods": "no base call from the signature and no factory yet (no candidate value for example: <class 'jaxkit.docking._datasets.DockingExample'>)",
    "jaxkit.docking.evaluate_variants": "no base call from the signature and no factory yet (no candidate value for example: <class 'jaxkit.docking._datasets.DockingExample'>)",
    "jaxkit.docking.example_complex": "no base call from the signature and no factory yet (no candidate value for ex: <class 'jaxkit.docking._datasets.DockingExample'>)",
    "jaxkit.docking.extract_pocket": "no base call from the signature and no factory yet (no candidate value for protein: <class 'inspect._empty'>)",
    "jaxkit.docking.featurize_examples": "no base call from the signature and no factory yet (no candidate value for examples: list[jaxkit.docking._datasets.DockingExample])",
    "jaxkit.docking.fragment_dummy_positions": "no base call from the signature and no factory yet (ValueError: einstein sum subscripts string contains too many subscripts for operand 0)",
    "jaxkit.docking.index_complex": "no base call from the signature and no factory yet (IndexError: index 4 is out of bounds for axis 0 with size 3)",
    "jaxkit.docking.load_complex": "no base call from the signature and no factory yet (no candidate value for folder: str | pathlib.Path)",
    "jaxkit.docking.load_complex_folder": "no base call from the signature and no factory yet (no candidate value for root: str | pathlib.Path)",
    "jaxkit.docking.load_ligand": "no base call from the signature and no factory yet (no candidate value for path: str | pathlib.Path)",
    "jaxkit.docking.load_model": "no base call from the signature and no factory yet (no candidate value for path: str | pathlib.Path)",
    "jaxkit.docking.load_protein": "no base call from the signature and no factory yet (no candidate value for path: str | pathlib.Path)",
    "jaxkit.docking.make_scorer": "no base call from the signature and no factory yet (no candidate value for protein_pdb: str | pathlib.Path | None)",
    "jaxkit.docking.model_method": "no base call from the signature and no factory yet (no candidate value for model: str | pathlib.Path)",
    "jaxkit.docking.pocket_from_center": "no base call from the signature and no factory yet (no candidate value for protein: <class 'inspect._empty'>)",
    "jaxkit.docking.pocket_pdbqt": "no base call from the signature and no factory yet (no candidate value for path: str | pathlib.Path)",
    "jaxkit.docking.pose_checks": "no base call from the signature and no factory yet (no candidate value for protein_pdb: str | pathlib.Path | None)",
    "jaxkit.docking.posebusters_valid": "no base call from the signature and no factory yet (no candidate value for protein_pdb: <class 'inspect._empty'>)",
    "jaxkit.docking.prepare_receptor": "no base call from the signature and no factory yet (no candidate value for protein_pdb: str | pathlib.Path)",
    "jaxkit.docking.random_placement": "no base call from the signature and no factory yet (ValueError: Incompatible shapes for broadcasting: shapes=[(4,), (4, 3)])",
    "jaxkit.docking.rank_poses": "no base call from the signature and no factory yet (no candidate value for mols: list[rdkit.Chem.rdchem.Mol])",
    "jaxkit.docking.real_set_table": "no base call from the signature and no factory yet (no candidate value for records: collections.abc.Sequence[dict])",
    "jaxkit.docking.reassemble": "no base call from the signature and no factory yet (ValueError: rotations/translations: expected shapes (3, 3, 3) and (3, 3), received (2, 4",
    "jaxkit.docking.resolve_pocket": "no base call from the signature and no factory yet (no candidate value for protein_atoms: <class 'inspect._empty'>)",
    "jaxkit.docking.sample_complex": "no base call from the signature and no factory yet (no candidate value for model: <class 'jaxkit.docking._model.FragmentScoreModel'>)",
    "jaxkit.docking.save_model": "no base call from the signature and no factory yet (no candidate value for path: str | pathlib.Path)",
    "jaxkit.docking.success_rate": "no base call from the signature and no factory yet (no candidate value for rmsds: <class 'inspect._empty'>)",
    "jaxkit.docking.train_model": "no base call from the signature and no factory yet (ValueError: arrays: every leaf needs the same leading (sample) size 48; leaf 5 has shape",
    "jaxkit.docking.vina_crystal_energies": "no base call from the signature and no factory yet (no candidate value for example: <class 'jaxkit.docking._datasets.DockingExample'>)",
    "jaxkit.docking.vina_dock": "no base call from the signature and no factory yet (no candidate value for protein_pdb: str | pathlib.Path)",
    "jaxkit.docking.vina_failure_kinds": "no base call from the signature and no factory yet (no candidate value for records: collections.abc.Sequence[dict])",
    "jaxkit.docking.vina_pose_energy": "no base call from the signature and no factory yet (no candidate value for protein_pdb: str | pathlib.Path)",
    "jaxkit.docking.write_poses_sdf": "no base call from the signature and no factory yet (no candidate value for path: <class 'inspect._empty'>)",
    "jaxkit.dynamics.FlowResult": "no base call from the signature and no factory yet (no candidate value for params: <class 'jaxtyping.PyTree[Any]'>)",
    "jaxkit.dynamics.gradient_flow_batch": "no base call from the signature and no factory yet (TypeError: neg does not accept dtype key<fry>. Accepted dtypes are subtypes of integer, ",
    "jaxkit.geometry.se3.from_matrix": "no base call from the signature and no factory yet (ValueError: T: expected shape (..., 4, 4), received shape (2, 4))",
    "jaxkit.geometry.so3.check_rotation": "no base call from the signature and no factory yet (no candidate value for name: <class 'str'>)",
    "jaxkit.geometry.so3.from_axis_angle": "no base call from the signature and no factory yet (ValueError: axis: expected shape (..., 3), received shape (2, 4))",
    "jaxkit.kernels.spectral_mix.spectral_mix": "no base call from the signature and no factory yet (TypeCheckError: Type-check error whilst checking the return value of jaxkit.kernels._com",
    "jaxkit.kernels.spectral_mix.spectral_mix_planes": "no base call from the signature and no factory yet (ValueError: spectral_mix: xr must have shape (B, I, *modes) with at least one mode axis,",
    "jaxkit.kernels.spectral_mix.spectral_mix_reference": "no base call from the signature and no factory yet (ValueError: Ellipses lengths do not match.)",
    "jaxkit.pde.make_dataset": "no base call from the signature and no factory yet (no candidate value for name: <class 'str'>)",
    "jaxkit.pde.register_dataset": "no base call from the signature and no factory yet (no candidate value for spec: <class 'jaxkit.pde._datasets.DatasetSpec'>)",
    "jaxkit.ssm.Construction": "no base call from the signature and no factory yet (no candidate value for task: <class 'str'>)",
    "jaxkit.ssm.DFA": "no base call from the signature and no factory yet (no candidate value for trans: typing.Any)",
    "jaxkit.ssm.Formula": "no base call from the signature and no factory yet (no candidate value for op: <class 'str'>)",
    "jaxkit.ssm.SSMLayer": "no base call from the signature and no factory yet (no candidate value for variant: <class 'str'>)",
    "jaxkit.ssm.SSMModel": "no base call from the signature and no factory yet (no candidate value for variant: <class 'str'>)",
    "jaxkit.ssm.Task": "no base call from the signature and no factory yet (no candidate value for name: <class 'str'>)",
    "jaxkit.ssm.TaskRegistry": "no base call from the signature and no factory yet (no candidate value for factories: dict[str, collections.abc.Callable[[], jaxkit.ssm._lan",
    "jaxkit.ssm.TrainedProbe": "no base call from the signature and no factory yet (no candidate value for model: jaxkit.ssm._layers.SSMModel | jaxkit.ssm._transformer.Caus",
    "jaxkit.ssm.dense_scan": "no base call from the signature and no factory yet (ValueError: A: expected an array with 3 dimensions, received shape (2, 4))",
    "jaxkit.ssm.dfa_task": "no base call from the signature and no factory yet (no candidate value for name: <class 'str'>)",
    "jaxkit.ssm.formula_task": "no base call from the signature and no factory yet (ValueError: formula: propositions ['a'] are not among the trace propositions ['p0', 'p1'",
    "jaxkit.ssm.in_fragment": "no base call from the signature and no factory yet (no candidate value for fragment: <class 'str'>)",
    "jaxkit.ssm.register_task": "no base call from the signature and no factory yet (no candidate value for name: <class 'str'>)",
    "jaxkit.ssm.select_runs": "no base call from the signature and no factory yet (no candidate value for runs: collections.abc.Sequence[dict])",
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
