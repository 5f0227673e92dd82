r"""Conformer matching: one chemically valid molecule from a sampled rigid-fragment pose.

The fragments of a sampled pose need not meet at their cut bonds (bond gaps of 0.5-2 Å). Conformer matching
(Jing et al., "Torsional Diffusion for Molecular Conformer Generation", NeurIPS 2022; Corso et al., "DiffDock",
ICLR 2023, Sec. 3 "conformer matching") replaces the pose by the ligand's own conformer (an RDKit ETKDG conformer:
its bond lengths, angles, rings and stereochemistry) with its rotatable torsions $\theta \in [0, 2\pi)^m$ and a
rigid motion $(R, t) \in SE(3)$ chosen to be closest to the sampled atom positions $y_a$:

$$ \min_{\theta}\; \min_{R, t}\; \sqrt{\tfrac{1}{n} \sum_a \lVert R\, x_a(\theta) + t - y_a \rVert^2 }, $$

where $x_a(\theta)$ is the conformer with each torsion $k$ rotated by $\theta_k$ about its bond (the atoms on one
side of the bond turn; Rodrigues' formula, the same move as RDKit's ``rdMolTransforms.SetDihedralRad``). The
inner minimum is the Kabsch solution, in closed form from the singular values $s_1 \ge s_2 \ge s_3$ of the
cross-covariance $H = \bar X^\top \bar Y$ of the centered positions:
$n\,\mathrm{RMSD}^2 = \lVert \bar X \rVert^2 + \lVert \bar Y \rVert^2 - 2 (s_1 + s_2 + \operatorname{sign}(\det H)\, s_3)$.
The outer minimum over $\theta$ is found by a greedy scan of each torsion on a grid (``scan_points``, ``sweeps``
passes; DiffDock optimizes torsions one at a time too), from the unchanged conformer and from ``restarts`` random
torsion sets, and the best start is refined by BFGS (``scipy.optimize.minimize``, analytic gradient).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rdkit import Chem
from scipy.optimize import minimize

from jaxkit._validate import check_finite, seed_rng

from ._evaluate import with_positions
from ._fragments import conformer_positions, fragment_labels, torsional_bonds


@dataclass(frozen=True)
class ConformerMatch:
    """Result of :func:`match_conformer`.

    Attributes:
        mol: copy of the input molecule with one conformer: the matched pose.
        positions: ``(n_atoms, 3)`` matched coordinates (Å).
        rmsd: RMSD (Å) between the matched pose and the target positions (no symmetry; atom order).
        torsions: ``(m, 4)`` atom quadruples ``(i, j, k, l)`` of the rotatable torsions (bond ``j-k``).
        dihedrals: ``(m,)`` the matched pose's dihedral angles (rad) of those quadruples.
    """

    mol: Chem.Mol
    positions: np.ndarray
    rmsd: float
    torsions: np.ndarray
    dihedrals: np.ndarray

    def __post_init__(self):
        for name in ("positions", "rmsd", "torsions", "dihedrals"):
            check_finite(name, getattr(self, name))


def rotatable_torsions(mol: Chem.Mol) -> tuple[np.ndarray, list[np.ndarray]]:
    """Torsion quadruples ``(m, 4)`` of the non-ring single bonds RDKit lists as torsions
    (:func:`torsional_bonds`) and, per torsion, the atoms on the ``k``/``l`` side of its bond (those that turn)."""
    quads, sides = [], []
    for b in torsional_bonds(mol):
        bond = mol.GetBondWithIdx(b)
        j, k = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        ni = [a.GetIdx() for a in mol.GetAtomWithIdx(j).GetNeighbors() if a.GetIdx() != k]
        nl = [a.GetIdx() for a in mol.GetAtomWithIdx(k).GetNeighbors() if a.GetIdx() != j]
        if not ni or not nl:
            continue
        labels = fragment_labels(mol, [b])
        quads.append((min(ni), j, k, min(nl)))
        sides.append(np.flatnonzero(labels == labels[k]))
    return np.asarray(quads, dtype=np.int64).reshape(-1, 4), sides


def _rotate(x: np.ndarray, j, k, side: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Copies of ``x`` ``(n, 3)`` with ``side`` turned by each of ``angles`` ``(g,)`` about the bond axis j→k."""
    u = x[k] - x[j]
    u = u / np.linalg.norm(u)
    p = x[side] - x[k]
    c, s = np.cos(angles)[:, None, None], np.sin(angles)[:, None, None]
    rot = p * c + np.cross(u, p) * s + np.outer(p @ u, u) * (1.0 - c)  # Rodrigues
    out = np.repeat(x[None], len(angles), axis=0)
    out[:, side] = rot + x[k]
    return out


def _apply(x: np.ndarray, quads: np.ndarray, sides: list[np.ndarray], theta: np.ndarray) -> np.ndarray:
    for (_, j, k, _), side, a in zip(quads, sides, theta):
        x = _rotate(x, j, k, side, np.array([a]))[0]
    return x


def _kabsch_rmsd(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Batched minimal RMSD over proper rigid motions: ``x`` ``(..., n, 3)`` against ``y`` ``(n, 3)``."""
    xc = x - x.mean(-2, keepdims=True)
    yc = y - y.mean(0)
    h = np.swapaxes(xc, -1, -2) @ yc
    s = np.linalg.svd(h, compute_uv=False)
    s[..., -1] *= np.sign(np.linalg.det(h))
    n2 = (xc**2).sum((-1, -2)) + (yc**2).sum() - 2.0 * s.sum(-1)
    return np.asarray(np.sqrt(np.maximum(n2, 0.0) / y.shape[0]))


def _kabsch_fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x`` moved by the proper rigid motion that minimizes its RMSD to ``y`` (rows: ``(x - x̄) r + ȳ``), and ``r``."""
    mx, my = x.mean(0), y.mean(0)
    u, _, vt = np.linalg.svd((x - mx).T @ (y - my))
    d = np.sign(np.linalg.det(u @ vt))
    r = u @ np.diag([1.0, 1.0, d]) @ vt
    return (x - mx) @ r + my, r


def _objective(theta, x0, y, quads, sides):
    """Squared Kabsch RMSD and its gradient in the torsions. By the envelope theorem the optimal rigid motion is
    held fixed; turning torsion $k$ moves atom $a$ of its side by $u_k \\times (x_a - x_k)$ per radian."""
    x = _apply(x0, quads, sides, theta)
    fit, r = _kabsch_fit(x, y)
    res = fit - y
    n = y.shape[0]
    grad = np.empty(len(theta))
    for t, ((_, j, k, _), side) in enumerate(zip(quads, sides)):
        u = (x[k] - x[j]) / np.linalg.norm(x[k] - x[j])
        grad[t] = 2.0 / n * np.sum(res[side] * (np.cross(u, x[side] - x[k]) @ r))
    return float(np.sum(res**2) / n), grad


def _greedy(x, y, quads, sides, theta, grid, sweeps):
    x = _apply(x, quads, sides, theta)
    theta = theta.copy()
    for _ in range(sweeps):
        for t, ((_, j, k, _), side) in enumerate(zip(quads, sides)):
            cand = _rotate(x, j, k, side, grid)
            best = int(np.argmin(_kabsch_rmsd(cand, y)))
            x, theta[t] = cand[best], theta[t] + grid[best]
    return theta, float(_kabsch_rmsd(x, y))


def _dihedrals(x: np.ndarray, quads: np.ndarray) -> np.ndarray:
    b0, b1, b2 = (
        x[quads[:, 0]] - x[quads[:, 1]],
        x[quads[:, 2]] - x[quads[:, 1]],
        x[quads[:, 3]] - x[quads[:, 2]],
    )
    b1n = b1 / np.linalg.norm(b1, axis=-1, keepdims=True)
    v = b0 - (b0 * b1n).sum(-1, keepdims=True) * b1n
    w = b2 - (b2 * b1n).sum(-1, keepdims=True) * b1n
    return np.arctan2((np.cross(b1n, v) * w).sum(-1), (v * w).sum(-1))


def _check_int(name: str, value, lo: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < lo:
        raise ValueError(f"{name}: expected an integer >= {lo}, received {value!r}")


def match_conformer(
    mol: Chem.Mol,
    target: object,
    *,
    conf_id: int = -1,
    restarts: int = 2,
    scan_points: int = 36,
    sweeps: int = 2,
    seed: int = 0,
) -> ConformerMatch:
    """Conformer matching (see the module docstring): ``mol``'s conformer ``conf_id`` with its rotatable torsions
    and a rigid motion fitted to ``target`` ``(n_atoms, 3)`` (Å, same atom order) by minimal RMSD.

    Bond lengths, bond angles, rings and chirality are those of the conformer. ``restarts`` random torsion starts
    (``seed``) join the start from the unchanged conformer."""
    if not isinstance(mol, Chem.Mol):
        raise TypeError(f"mol: expected an rdkit.Chem.Mol, received {type(mol).__name__}")
    x0 = conformer_positions(mol, conf_id)
    y = np.asarray(target, dtype=np.float64)
    if y.shape != x0.shape:
        raise ValueError(f"target: expected shape {x0.shape} (the molecule's atoms), received {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("target: expected finite coordinates, received NaN or inf")
    _check_int("restarts", restarts, 0)
    _check_int("scan_points", scan_points, 1)
    _check_int("sweeps", sweeps, 0)
    quads, sides = rotatable_torsions(mol)
    m = len(quads)
    if m:
        rng = seed_rng(seed)
        grid = 2.0 * np.pi * np.arange(scan_points) / scan_points
        starts = [np.zeros(m)] + [rng.uniform(0.0, 2.0 * np.pi, m) for _ in range(restarts)]
        theta, _ = min((_greedy(x0, y, quads, sides, s, grid, sweeps) for s in starts), key=lambda r: r[1])
        res = minimize(_objective, theta, args=(x0, y, quads, sides), jac=True, method="BFGS")
        theta = res.x if res.fun <= _objective(theta, x0, y, quads, sides)[0] else theta
        x = _apply(x0, quads, sides, theta)
    else:
        x = x0
    x = _kabsch_fit(x, y)[0]
    rmsd = float(np.sqrt(np.mean(np.sum((x - y) ** 2, -1))))
    return ConformerMatch(with_positions(mol, x), x, rmsd, quads, _dihedrals(x, quads) if m else np.zeros(0))
