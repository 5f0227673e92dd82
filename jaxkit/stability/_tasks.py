r"""Tasks: modular addition (grokking), noisy k-sparse parity, and character-level next-token prediction.

* :func:`modular_addition`: all pairs ``(a, b)`` with ``0 ≤ a, b < p``, sequences ``[a, b, =]`` (``=`` is token
  ``p``), label ``(a + b) mod p`` predicted at the last position; a random ``train_fraction`` of the ``p²`` pairs
  is the training set, the rest validation (Power et al. 2022 use p = 97; Nanda et al. 2023 p = 113, 30%).
* :func:`python_reference_text`: real English prose that is on every machine offline: the Python language
  reference and library topics shipped with CPython as ``pydoc_data.topics`` (the text behind ``help()``,
  ~465 KB). :func:`char_dataset` turns a text into a character-level next-token data set.
* :func:`sparse_parity`: noisy $k$-sparse parity (Barak et al. 2022): $x \in \{0,1\}^n$ uniform, label the XOR
  of $k$ secret coordinates, training labels flipped with probability ``label_noise`` (validation labels clean).
* :func:`load_wikitext2`: WikiText-2 raw text (Merity et al. 2016) from a folder, as character ids.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._typing import ArrayInput
from jaxkit._validate import seed_rng

from .._validate import check_finite, check_int, check_key, check_ndim, check_range, check_size

MAX_BYTES = 2**30
_BYTES_PER_PAIR = 48  # int32 sequences (12) and labels (4), the int64 pair grid (16) and the permutation (16)


def _size(n: float | int) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n / 2**10:.1f} KiB"


def modular_addition(
    p: int, train_fraction: float | int, key: jax.Array, *, max_bytes: int = MAX_BYTES
) -> dict[str, np.ndarray]:
    """Modular-addition split: ``train_x``/``val_x`` int32 ``(n, 3)`` = ``[a, b, p]``, labels ``(a+b) mod p``.

    Vocabulary size is ``p + 1``. The split is a random permutation of the ``p²`` pairs drawn from ``key``.
    Building it takes about 48 bytes per pair; a ``p`` that needs more than ``max_bytes`` (default 1 GiB,
    i.e. p up to about 4700) is refused up front with the memory it would need.
    """
    check_int("p", p, minimum=2)
    check_range("train_fraction", train_fraction, 0.0, 1.0, closed=False)
    check_key("key", key)
    check_int("max_bytes", max_bytes, minimum=1)
    need = _BYTES_PER_PAIR * float(p) ** 2
    if need > max_bytes:
        raise ValueError(
            f"p: p = {p} gives {float(p) ** 2:.3g} pairs, about {_size(need)} to build, above max_bytes = "
            f"{_size(max_bytes)}; pass a larger max_bytes to allow it"
        )
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


def char_dataset(
    text: str, *, val_fraction: float | int = 0.1, max_chars: int | None = None
) -> dict[str, object]:
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


def _window_args(stream: ArrayInput, n_windows: int, context: int) -> np.ndarray:
    """Checks shared by the window builders: a finite 1-D ``stream`` longer than ``context + 1``, counts >= 1,
    and the windows (inputs, targets and their indices) under the size cap. Returns the stream as an array."""
    check_int("n_windows", n_windows, minimum=1)
    check_int("context", context, minimum=1)
    s = np.asarray(stream)
    check_ndim("stream", s, 1, what="a token stream")
    check_finite("stream", s)
    if len(s) - context - 1 < 1:
        raise ValueError(f"stream: expected more than context+1={context + 1} tokens, received {len(s)}")
    check_size("n_windows, context", n_windows * context * (2 * s.dtype.itemsize + 16))
    return s


def fixed_windows(stream: ArrayInput, n_windows: int, context: int) -> tuple[np.ndarray, np.ndarray]:
    """``n_windows`` evenly spaced, non-random windows (a fixed validation set); ``n_windows`` must not exceed the
    ``len(stream) - context`` distinct windows the stream holds (``ValueError`` otherwise, rather than repeats)."""
    s = _window_args(stream, n_windows, context)
    last = len(s) - context - 1
    if n_windows > last + 1:
        raise ValueError(
            f"n_windows: a stream of {len(s)} tokens holds {last + 1} distinct windows of context={context} "
            f"(plus the next token), received n_windows={n_windows}; pass at most {last + 1} or a longer stream"
        )
    starts = np.linspace(0, last, n_windows).astype(np.int64)
    idx = starts[:, None] + np.arange(context)[None, :]
    return s[idx], s[idx + 1]


def sparse_parity(
    n_bits: int, k: int, n_train: int, n_val: int, *, label_noise: float | int, key: jax.Array
) -> dict[str, np.ndarray]:
    """Noisy $k$-sparse parity as token sequences ``[x_1, …, x_n, 2]`` (bits are tokens 0/1, ``2`` the query
    token; vocabulary 3), label ``⊕_{j∈S} x_j`` read at the last position.

    The secret set ``S`` (``k`` of the ``n_bits`` coordinates) and the data are drawn from ``key``; training
    labels are flipped independently with probability ``label_noise``, validation labels are clean. Returns
    ``train_x``/``val_x`` int32 ``(n, n_bits+1)``, ``train_y``/``val_y`` int32 ``(n,)`` and ``secret``.
    """
    check_int("n_bits", n_bits, minimum=1)
    check_int("k", k, minimum=1)
    if k > n_bits:
        raise ValueError(f"k: expected at most n_bits={n_bits} relevant coordinates, received {k}")
    check_int("n_train", n_train, minimum=1)
    check_int("n_val", n_val, minimum=1)
    # the int64 draws, their int32 copy and the token matrix: about 16 bytes per (example, bit)
    check_size("n_bits, n_train, n_val", 16 * (n_train + n_val) * (n_bits + 1))
    check_range("label_noise", label_noise, 0.0, 0.5, closed=True)
    check_key("key", key)
    rng = np.random.default_rng(np.asarray(jax.random.key_data(key)).ravel().tolist())
    secret = np.sort(rng.choice(n_bits, k, replace=False))
    x = rng.integers(0, 2, (n_train + n_val, n_bits)).astype(np.int32)
    y = (x[:, secret].sum(1) % 2).astype(np.int32)
    flip = rng.random(n_train) < label_noise
    y_train = np.where(flip, 1 - y[:n_train], y[:n_train]).astype(np.int32)
    tokens = np.concatenate([x, np.full((len(x), 1), 2, np.int32)], axis=1)
    return {
        "train_x": tokens[:n_train],
        "train_y": y_train,
        "val_x": tokens[n_train:],
        "val_y": y[n_train:],
        "secret": secret,
    }


_WIKITEXT_FILES = {"train": "valid.txt", "eval": "test.txt"}
#: The copy of WikiText-2's ``valid.txt`` / ``test.txt`` shipped with jaxkit (CC BY-SA 3.0; README and LICENCE beside).
WIKITEXT2_DIR = Path(__file__).resolve().parent / "data" / "wikitext-2"


def load_wikitext2(
    path: str | Path | None = None, *, max_train_chars: int | None = None, max_eval_chars: int | None = None
) -> dict[str, object]:
    """WikiText-2 raw text from ``path`` as character ids: train on ``valid.txt``, evaluate on ``test.txt``.

    ``path=None`` reads the copy shipped with jaxkit (``WIKITEXT2_DIR``: the validation and test splits of
    Merity et al. 2016, CC BY-SA 3.0). Only these two splits ship, so the validation split is the training
    stream; pass a folder holding another ``valid.txt`` / ``test.txt`` pair to use your own. The vocabulary is the characters of the training stream in code-point order plus a
    final ``<unk>`` id for characters it lacks. Raises ``FileNotFoundError`` naming the missing file.
    Returns ``{"train", "eval"}`` int32 streams, ``"vocab"`` (str, without ``<unk>``) and ``"vocab_size"``.
    """
    folder = WIKITEXT2_DIR if path is None else Path(path)
    texts = {}
    for split, name in _WIKITEXT_FILES.items():
        f = folder / name
        if not f.is_file():
            raise FileNotFoundError(
                f"path: WikiText-2 file {f} not found (expected {', '.join(_WIKITEXT_FILES.values())} in {folder})"
            )
        texts[split] = f.read_text(encoding="utf-8")
    for name, cap in (("max_train_chars", max_train_chars), ("max_eval_chars", max_eval_chars)):
        if cap is not None:
            check_int(name, cap, minimum=2)
    if max_train_chars is not None:
        texts["train"] = texts["train"][:max_train_chars]
    if max_eval_chars is not None:
        texts["eval"] = texts["eval"][:max_eval_chars]
    vocab = "".join(sorted(set(texts["train"])))
    index = {c: i for i, c in enumerate(vocab)}
    unk = len(vocab)
    enc = lambda t: np.fromiter((index.get(c, unk) for c in t), dtype=np.int32, count=len(t))
    return {"train": enc(texts["train"]), "eval": enc(texts["eval"]), "vocab": vocab, "vocab_size": unk + 1}


def stream_windows(
    stream: ArrayInput, n_windows: int, context: int, *, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """``n_windows`` random windows ``x = s[i:i+T]``, ``y = s[i+1:i+T+1]`` (NumPy, reproducible from ``seed``)."""
    s = _window_args(stream, n_windows, context)
    last = len(s) - context - 1
    starts = seed_rng(seed).integers(0, last, n_windows)
    idx = starts[:, None] + np.arange(context)[None, :]
    return s[idx], s[idx + 1]
