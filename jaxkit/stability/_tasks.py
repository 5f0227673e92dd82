"""Tasks: modular addition (grokking) and character-level next-token prediction on offline text.

* :func:`modular_addition`: all pairs ``(a, b)`` with ``0 ≤ a, b < p``, sequences ``[a, b, =]`` (``=`` is token
  ``p``), label ``(a + b) mod p`` predicted at the last position; a random ``train_fraction`` of the ``p²`` pairs
  is the training set, the rest validation (Power et al. 2022 use p = 97; Nanda et al. 2023 p = 113, 30%).
* :func:`python_reference_text`: real English prose that is on every machine offline: the Python language
  reference and library topics shipped with CPython as ``pydoc_data.topics`` (the text behind ``help()``,
  ~465 KB). :func:`char_dataset` turns a text into a character-level next-token data set.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._validate import check_int, check_range


def modular_addition(p: int, train_fraction: float | int, key: jax.Array) -> dict[str, np.ndarray]:
    """Modular-addition split: ``train_x``/``val_x`` int32 ``(n, 3)`` = ``[a, b, p]``, labels ``(a+b) mod p``.

    Vocabulary size is ``p + 1``. The split is a random permutation of the ``p²`` pairs drawn from ``key``.
    """
    check_int("p", p, minimum=2)
    check_range("train_fraction", train_fraction, 0.0, 1.0, closed=False)
    a, b = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
    a, b = a.ravel(), b.ravel()
    x = np.stack([a, b, np.full_like(a, p)], axis=1).astype(np.int32)
    y = ((a + b) % p).astype(np.int32)
    perm = np.asarray(jax.random.permutation(key, p * p))
    n_train = int(round(train_fraction * p * p))
    if n_train < 1 or n_train >= p * p:
        raise ValueError(
            f"train_fraction: {train_fraction} leaves an empty train or validation set for p={p}"
        )
    tr, va = perm[:n_train], perm[n_train:]
    return {"train_x": x[tr], "train_y": y[tr], "val_x": x[va], "val_y": y[va]}


def python_reference_text() -> str:
    """The Python documentation topics shipped with CPython (``pydoc_data.topics``), joined in sorted order."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[k] for k in sorted(topics))


def char_dataset(text: str, *, val_fraction: float | int = 0.1, max_chars: int | None = None) -> dict:
    """Character-level encoding of ``text``: ``train``/``val`` int32 streams (contiguous split), ``vocab``.

    Characters are sorted by code point; the last ``val_fraction`` of the (optionally truncated) text is the
    validation stream.
    """
    if not isinstance(text, str) or len(text) < 100:
        raise ValueError(
            f"text: expected a string of at least 100 characters, received {len(text) if isinstance(text, str) else type(text).__name__}"
        )
    check_range("val_fraction", val_fraction, 0.0, 1.0, closed=False)
    if max_chars is not None:
        check_int("max_chars", max_chars, minimum=100)
        text = text[:max_chars]
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    ids = np.fromiter((index[c] for c in text), dtype=np.int32, count=len(text))
    n_val = int(len(ids) * val_fraction)
    return {"train": ids[:-n_val], "val": ids[-n_val:], "vocab": "".join(vocab)}


def sample_windows(
    stream: jax.Array, key: jax.Array, batch_size: int, context: int
) -> tuple[jax.Array, jax.Array]:
    """Random windows ``x = s[i:i+T]``, ``y = s[i+1:i+T+1]`` from a token stream (jit-friendly)."""
    starts = jax.random.randint(key, (batch_size,), 0, stream.shape[0] - context - 1)
    idx = starts[:, None] + jnp.arange(context)[None, :]
    return stream[idx], stream[idx + 1]


def fixed_windows(stream: Any, n_windows: int, context: int) -> tuple[np.ndarray, np.ndarray]:
    """``n_windows`` evenly spaced, non-random windows (a fixed validation set)."""
    check_int("n_windows", n_windows, minimum=1)
    last = len(stream) - context - 1
    if last < 1:
        raise ValueError(f"stream: expected more than context+1={context + 1} tokens, received {len(stream)}")
    starts = np.linspace(0, last, n_windows).astype(np.int64)
    idx = starts[:, None] + np.arange(context)[None, :]
    return stream[idx], stream[idx + 1]
