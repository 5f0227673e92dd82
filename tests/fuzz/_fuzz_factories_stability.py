"""Fuzz factories for the ``jaxkit.stability`` exports that had no base call from their signature (issue 49): each
returns the keyword arguments of one valid call. Merged into ``_fuzz_factories.FACTORIES`` at its end; helpers of
that module are imported inside the factories (it imports this one)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {}

P = 5  # residues of the tiny modular-addition task; token P is the "=" sign


def _hist(rows: list[tuple[int, list[float]]]) -> list[dict[str, Any]]:
    return [{"step": s, "acc": list(v)} for s, v in rows]


def _runs() -> dict[str, dict]:
    """Two methods of 3 seeds (tests/stability/test_stability_seeds.py): baseline reaches 0.9 at 20, 30, 30."""
    return {
        "baseline": {
            "history": _hist([(10, [0.1, 0.2, 0.3]), (20, [0.95, 0.5, 0.5]), (30, [0.95, 0.9, 0.91])])
        },
        "fast": {"history": _hist([(10, [0.9, 0.1, 0.1]), (20, [0.9, 0.95, 0.1]), (30, [0.9, 0.95, 0.2])])},
    }


def _make(key: Any) -> Any:
    from jaxkit.stability import Transformer

    return Transformer(P + 1, 3, key=key, d_model=8, n_heads=2, d_mlp=16)


@functools.cache
def _model() -> Any:
    import jax

    return _make(jax.random.key(0))


def _tokens(b: int = 2, s: int = 0, *, eq: bool = True) -> Any:
    """``(b, 3)`` modular-addition inputs ``[a, b, =]`` (int32; ``eq=False``: no ``=``, every id below ``P``),
    optionally with a seed axis of ``s``."""
    import jax
    import jax.numpy as jnp

    shape = (s, b, 3) if s else (b, 3)
    toks = jax.random.randint(jax.random.key(1), shape, 0, P).astype(jnp.int32)
    return toks.at[..., 2].set(P) if eq else toks


def _per_seed() -> dict[str, list[int | None]]:
    return {"baseline": [20, 30, 30], "fast": [10, 20, None]}


def _relu_moments() -> dict[str, Any]:
    import numpy as np
    from _fuzz_factories import _normal

    return {"w": _normal(3, 2), "mean": np.zeros(2), "k": np.eye(2), "c": 0.5 * np.eye(2)}


def _regularized_loss() -> dict[str, Any]:
    import jax.numpy as jnp
    from _fuzz_factories import KEY

    toks = _tokens()
    return {
        "model": _model(),
        "tokens": toks,
        "labels": (toks[:, 0] + toks[:, 1]) % P,
        "key": KEY,
        "gamma": 0.5,
        "rho": 0.25,
        "vocab_size": P,
        "positions": -1,
        "noise_mask": jnp.asarray([True, True, False]),
    }


def _train_method() -> dict[str, Any]:
    import jax
    from _fuzz_factories import KEY

    from jaxkit.stability import MethodSpec, init_stack, stacked_batches, stacked_eval

    x = _tokens(4, 2)
    y = (x[..., 0] + x[..., 1]) % P
    return {
        "models": init_stack(_make, jax.random.split(KEY, 2)),
        "spec": MethodSpec("baseline"),
        "data": stacked_batches(x, y, None, 0),
        "n_seeds": 2,
        "n_steps": 2,
        "lr": 1e-2,
        "weight_decay": 0.1,
        "key": KEY,
        "eval_fn": stacked_eval(x, y, positions=-1),
        "eval_every": 1,
    }


def _speed_table() -> dict[str, Any]:
    from jaxkit.stability import compare_steps

    return {"stats": compare_steps(_per_seed(), 40, n_boot=200)}


def _stability_interval() -> dict[str, Any]:
    from _fuzz_factories import _normal

    from jaxkit.stability import AttentionLayer, ReLULayer

    return {
        "layers": [ReLULayer(_normal(3, 2)), AttentionLayer(None, None, _normal(3, 3, seed=1), 4)],
        "rho": 0.5,
    }


def _probs(seed: int) -> Any:
    import jax
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    return jax.nn.softmax(jnp.asarray(_normal(2, 3, seed=seed)))


def _init_stack() -> dict[str, Any]:
    import jax
    from _fuzz_factories import KEY

    return {"make": lambda k: {"w": jax.random.normal(k, (2,))}, "keys": jax.random.split(KEY, 2)}


def _stacked_batches() -> dict[str, Any]:
    from _fuzz_factories import _normal

    return {"xs": _normal(2, 6, 3), "ys": _normal(2, 6, seed=1), "batch_size": 4, "seed": 0}


def _method_optimizer() -> dict[str, Any]:
    from jaxkit.stability import MethodSpec

    return {"spec": MethodSpec("grokfast", grokfast=(0.9, 1.0)), "lr": 1e-3, "weight_decay": 0.1}


def _key_kw(**kw: Any) -> Callable[[], dict[str, Any]]:
    def make() -> dict[str, Any]:
        from _fuzz_factories import KEY

        return {"key": KEY, **{k: v() if callable(v) else v for k, v in kw.items()}}

    return make


FACTORIES.update(
    {
        "jaxkit.stability.MethodSpec": lambda: {"name": "reg", "gamma": 0.5, "rho": 0.25},
        "jaxkit.stability.agreement_regularizer": lambda: {
            "probs_clean": _probs(0),
            "probs_noisy": _probs(1),
        },
        "jaxkit.stability.compare_speed": lambda: {
            "runs": _runs(),
            "metric": "acc",
            "target": 0.9,
            "n_steps": 40,
            "n_boot": 200,
        },
        "jaxkit.stability.compare_steps": lambda: {"per_seed": _per_seed(), "n_steps": 40, "n_boot": 200},
        "jaxkit.stability.embedding_stability": _key_kw(model=_model, tokens=_tokens, rho=0.5),
        "jaxkit.stability.init_stack": _init_stack,
        "jaxkit.stability.make_loss_fn": lambda: {"gamma": 0.5, "rho": 0.25, "vocab_size": P},
        "jaxkit.stability.median_curves": lambda: {"runs": _runs(), "keys": ["acc"]},
        "jaxkit.stability.median_spread": lambda: {"steps": [20, 30, None], "censor": 40},
        "jaxkit.stability.method_optimizer": _method_optimizer,
        "jaxkit.stability.regularized_loss": _regularized_loss,
        "jaxkit.stability.relu_layer_moments": _relu_moments,
        "jaxkit.stability.relu_mlp_stability": lambda: {"weights": [_relu_moments()["w"]], "rho": 0.5},
        "jaxkit.stability.resample_tokens": _key_kw(tokens=lambda: _tokens(eq=False), rho=0.5, vocab_size=P),
        "jaxkit.stability.speed_table": _speed_table,
        "jaxkit.stability.speedup_ci": lambda: {
            "base_steps": [20, 30, 30],
            "steps": [10, 20, 25],
            "censor": 40,
            "n_boot": 200,
        },
        "jaxkit.stability.split_members": lambda: {
            "history": [
                {"step": a["step"], "acc": a["acc"] + b["acc"], "loss": 1.0}
                for a, b in zip(_runs()["baseline"]["history"], _runs()["fast"]["history"])
            ],
            "groups": {"baseline": [0, 1, 2], "fast": [3, 4, 5]},
        },
        "jaxkit.stability.stability_interval": _stability_interval,
        "jaxkit.stability.stacked_batches": _stacked_batches,
        "jaxkit.stability.steps_to_target": lambda: {
            "history": _runs()["baseline"]["history"],
            "metric": "acc",
            "target": 0.9,
        },
        "jaxkit.stability.train_method": _train_method,
    }
)
