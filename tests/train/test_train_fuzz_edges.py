"""Edges the fuzz suite (tests/fuzz, issue 49) found in jaxkit.train's public entry points: each is now refused
with a ValueError naming the argument (not another argument, nor a failure inside the user's loss function)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import (
    ArrayLoader,
    CheckpointError,
    FitResult,
    ensemble_member,
    ensemble_size,
    fit,
    fit_ensemble,
    full_batch,
    read_checked_bytes,
    write_checked_bytes,
)

KEY = jax.random.key(0)


def _loss(model, batch, key):
    return jnp.mean((batch - model) ** 2)


def test_loader_with_no_samples_names_arrays_not_batch_size():
    with pytest.raises(ValueError, match=r"^arrays: expected at least one sample"):
        ArrayLoader(np.zeros((0, 2), np.float32), 2, key=KEY)


def test_empty_stacked_model_names_its_argument():
    empty = jnp.zeros((0, 2))
    with pytest.raises(ValueError, match=r"^stacked: expected at least one member"):
        ensemble_size(empty)
    with pytest.raises(ValueError, match=r"^stacked: expected at least one member"):
        ensemble_member(empty, 0)
    with pytest.raises(ValueError, match=r"^ensemble: expected at least one member"):
        ensemble_member(empty, 0, name="ensemble")
    assert ensemble_size(jnp.zeros((3, 2))) == 3


def _fit_ensemble(models):
    data = full_batch(np.ones((4, 2), np.float32))
    return fit_ensemble(
        models, optax.sgd(0.1), _loss, data, n_steps=1, keys=jax.random.split(KEY, 2), progress=False
    )


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_fit_ensemble_non_finite_models_names_models(bad):
    models = jnp.zeros((2, 2)).at[1, 0].set(bad)
    with pytest.raises(ValueError, match=r"^models: expected finite parameters"):
        _fit_ensemble(models)


def test_fit_ensemble_without_members_names_models():
    with pytest.raises(ValueError, match=r"^models: expected at least one member"):
        _fit_ensemble(jnp.zeros((0, 2)))


def test_fit_of_a_model_without_entries_names_model():
    data = full_batch(np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match=r"^model: expected at least one parameter entry"):
        fit(jnp.zeros((0,)), optax.sgd(0.1), _loss, data, n_steps=1, key=KEY, progress=False)


@pytest.mark.parametrize("step", [-1, True])
def test_fit_result_step_names_step(step):
    with pytest.raises(ValueError, match=r"^step: expected an integer >= 0"):
        FitResult(model=jnp.zeros(2), opt_state=(), step=step)


@pytest.mark.parametrize("wall_time", [math.nan, math.inf, -math.inf, -1.0])
def test_fit_result_wall_time_names_wall_time(wall_time):
    with pytest.raises(ValueError, match=r"^wall_time: expected a finite number of seconds >= 0"):
        FitResult(model=jnp.zeros(2), opt_state=(), step=0, wall_time=wall_time)


def test_fit_result_keeps_valid_records():
    r = FitResult(model=jnp.zeros(2), opt_state=(), step=3, wall_time=0.0)
    assert r.step == 3 and r.wall_time == 0.0


def test_checked_file_of_another_kind_names_kind(tmp_path):
    path = tmp_path / "blob.jkx"
    write_checked_bytes(path, b"payload", kind="stage")
    with pytest.raises(ValueError, match=r"^kind: expected a 'manifest' file, received .*'stage' file"):
        read_checked_bytes(path, kind="manifest")
    with pytest.raises(CheckpointError, match="not a 'manifest' file"):  # still a CheckpointError
        read_checked_bytes(path, kind="manifest")
    assert read_checked_bytes(path, kind="stage") == (b"payload", {})
