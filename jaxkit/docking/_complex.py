r"""A docking complex as fixed-size arrays: the ligand's rigid fragments (from an RDKit conformer), the pocket, and
(for training and evaluation only) the fragments' reference poses.

No leakage. :func:`ligand_fragments` cuts the ligand into rigid fragments whose local geometry comes from an
RDKit ETKDG conformer generated from the chemistry alone (``conformer="rdkit"``, the inference setting), or from
the reference pose itself (``conformer="oracle"``: SigmaDock's "oracle conformer" ablation). The reference pose
enters :func:`build_complex` only through ``reference=`` to give the training targets ``(R0, T0)`` (per-fragment
Kabsch fit of the conformer's fragment onto the reference atoms); at inference it is absent and ``R0, T0`` are
identity/zero placeholders that no sampler reads.

Coordinates are centered on the pocket center and divided by ``LENGTH_SCALE`` = 2.7 Å (SigmaDock). Fragment $f$
has local coordinates $x^{loc}$ (centered on its centroid, principal axes) and a pose $(R_f, T_f)$:
$x = R_f x^{loc} + T_f$, so $T_f$ is the fragment centroid. Each cut bond $(i, j)$ gives two dummy atoms: one
rigidly attached to $i$'s fragment standing for $j$ and vice versa; in an assembled pose they coincide with their
partners.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float
from rdkit import Chem

from .._validate import check_finite, check_int, check_positive, finite_checked
from ._datasets import DockingExample, embed_conformer
from ._fragments import Fragmentation, conformer_positions, fragment_ligand, local_coordinates
from ._structures import Pocket

LENGTH_SCALE = 2.7
ELEMENTS = ("C", "N", "O", "S", "P", "F", "Cl", "Br", "I", "B")
POCKET_ELEMENTS = ("C", "N", "O", "S")
N_ATOM_FEATURES = len(ELEMENTS) + 1 + 1 + 1 + 4 + 4 + 1 + 3 + 1  # see _atom_features
N_POCKET_FEATURES = len(POCKET_ELEMENTS) + 1
N_PAIR_FEATURES = 7  # bond, same fragment, cut bond, topological distance 1 / 2 / 3 / >= 4

ArrayT = Array | np.ndarray


class ComplexSizes(eqx.Module):
    """Padding sizes: ligand atoms, pocket atoms, fragments, dummy atoms."""

    ligand: int = eqx.field(static=True, default=48)
    pocket: int = eqx.field(static=True, default=160)
    fragments: int = eqx.field(static=True, default=10)
    dummies: int = eqx.field(static=True, default=18)

    def __check_init__(self):
        for name in ("ligand", "pocket", "fragments"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("dummies", self.dummies, minimum=0)


class DockingComplex(eqx.Module):
    """One padded complex (a pytree of arrays; stack along a leading axis for batches).

    Ligand (``L`` slots): ``local`` fragment-frame coordinates (scaled), ``fragment`` index, ``atom_mask``,
    ``atom_features``, ``pair_features (L, L, 7)``. Pocket (``M`` slots): ``pocket`` scaled centered coordinates,
    ``pocket_features``, ``pocket_mask``. Fragments (``F``): ``fragment_mask``, reference pose ``R0, T0``
    (targets; placeholders at inference). Dummies (``D``): ``dummy_local`` (fragment frame, scaled),
    ``dummy_fragment``, ``dummy_partner`` (ligand atom it stands for), ``dummy_mask``. ``center`` (Å).
    """

    local: ArrayT
    fragment: ArrayT
    atom_mask: ArrayT
    atom_features: ArrayT
    pair_features: ArrayT
    pocket: ArrayT
    pocket_features: ArrayT
    pocket_mask: ArrayT
    fragment_mask: ArrayT
    R0: ArrayT
    T0: ArrayT
    dummy_local: ArrayT
    dummy_fragment: ArrayT
    dummy_partner: ArrayT
    dummy_mask: ArrayT
    center: ArrayT

    def __check_init__(self):
        # concrete arrays only: check_finite is a no-op on the tracers of a complex built under jax.jit. R0 (the
        # reference target) is left unchecked: tests poison it with NaN to show it never reaches a model
        for f in dataclasses.fields(self):
            if f.name != "R0":
                check_finite(f.name, getattr(self, f.name))

    @property
    def n_fragments(self) -> int:
        return int(self.fragment_mask.shape[-1])


@dataclass(frozen=True)
class PreparedLigand:
    """A fragmented ligand ready for :func:`build_complex`: ``frag.mol`` carries the conformer whose fragment
    geometry is used (conformer 0); ``setting`` is ``"rdkit"`` or ``"oracle"``."""

    frag: Fragmentation
    setting: str


def ligand_fragments(
    mol: Chem.Mol,
    *,
    conformer: Literal["rdkit", "oracle"] = "rdkit",
    seed: int = 0,
    choice: Literal["canonical", "random"] = "canonical",
    rng: np.random.Generator | None = None,
) -> PreparedLigand:
    """Fragment a ligand; fragment geometry from a fresh ETKDG conformer (``"rdkit"``: chemistry only) or from the
    molecule's own conformer (``"oracle"``). Atom order is that of ``Chem.RemoveAllHs(mol)`` in both settings."""
    if conformer not in ("rdkit", "oracle"):
        raise ValueError(f"conformer: expected 'rdkit' or 'oracle', received {conformer!r}")
    check_int("seed", seed, minimum=0)
    if conformer == "rdkit":
        emb = embed_conformer(mol, seed)
        if emb is None:
            raise ValueError(
                f"mol: RDKit could not embed a conformer of {Chem.MolToSmiles(Chem.RemoveAllHs(mol))}"
            )
        source = emb
    else:
        if mol.GetNumConformers() == 0:
            raise ValueError("mol: conformer='oracle' needs a molecule with a 3D pose, received one without")
        source = Chem.RemoveAllHs(mol)
    frag = fragment_ligand(source, choice=choice, rng=rng)
    return PreparedLigand(frag, conformer)


def _topological(mol: Chem.Mol) -> np.ndarray:
    return np.asarray(Chem.GetDistanceMatrix(mol), dtype=np.float64)


def _atom_features(mol: Chem.Mol, anchors: set[int]) -> np.ndarray:
    hyb = {Chem.HybridizationType.SP: 0, Chem.HybridizationType.SP2: 1, Chem.HybridizationType.SP3: 2}
    rows = []
    for a in mol.GetAtoms():
        f = np.zeros(N_ATOM_FEATURES, np.float32)
        sym = a.GetSymbol()
        f[ELEMENTS.index(sym) if sym in ELEMENTS else len(ELEMENTS)] = 1.0
        k = len(ELEMENTS) + 1
        f[k] = float(a.GetIsAromatic())
        f[k + 1] = float(a.GetFormalCharge())
        f[k + 2 + min(a.GetDegree(), 4) - 1 if a.GetDegree() > 0 else k + 2] = 1.0
        f[k + 6 + min(a.GetTotalNumHs(), 3)] = 1.0
        f[k + 10] = float(a.IsInRing())
        if a.GetHybridization() in hyb:
            f[k + 11 + hyb[a.GetHybridization()]] = 1.0
        f[k + 14] = float(a.GetIdx() in anchors)
        rows.append(f)
    return np.stack(rows)


def _kabsch(local: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(R, T)`` minimizing ``|R local + T - target|`` (Kabsch)."""
    tc, lc = target.mean(0), local.mean(0)
    H = (local - lc).T @ (target - tc)
    U, _, Vt = np.linalg.svd(H)
    d = np.sign(np.linalg.det(Vt.T @ U.T))
    R = Vt.T @ np.diag([1.0, 1.0, d]) @ U.T
    return R, tc - R @ lc


def build_complex(
    lig: PreparedLigand,
    pocket: Pocket,
    *,
    sizes: ComplexSizes = ComplexSizes(),
    reference: np.ndarray | None = None,
    name: str = "complex",
) -> DockingComplex:
    """Padded arrays of one complex (NumPy; stack several with :func:`stack_complexes`).

    ``reference (n_atoms, 3)`` Å, in ``lig.frag.mol``'s atom order, gives the target poses ``R0, T0``; ``None`` at
    inference. Raises ``ValueError`` naming ``name`` when the complex does not fit ``sizes``.
    """
    frag = lig.frag
    n, nf, nd, m = frag.n_atoms, frag.n_fragments, len(frag.dummies), pocket.n_atoms
    if n > sizes.ligand or m > sizes.pocket or nf > sizes.fragments or nd > sizes.dummies:
        raise ValueError(
            f"complex {name}: {n} ligand atoms / {m} pocket atoms / {nf} fragments / {nd} dummies exceed the "
            f"padding ({sizes.ligand}, {sizes.pocket}, {sizes.fragments}, {sizes.dummies})"
        )
    x = conformer_positions(frag.mol)
    local, dummy_local = local_coordinates(frag, x)
    center = np.asarray(pocket.center, np.float64)
    L, M, F, D = sizes.ligand, sizes.pocket, sizes.fragments, sizes.dummies
    anchors = {int(i) for i in frag.dummies[:, 1]} if nd else set()
    feats = np.zeros((L, N_ATOM_FEATURES), np.float32)
    feats[:n] = _atom_features(frag.mol, anchors)
    pair = np.zeros((L, L, N_PAIR_FEATURES), np.float32)
    topo = _topological(frag.mol)
    pair[:n, :n, 0] = topo == 1
    same = frag.atom_fragment[:, None] == frag.atom_fragment[None, :]
    pair[:n, :n, 1] = same
    for b in frag.cut_bonds:
        bond = frag.mol.GetBondWithIdx(int(b))
        i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        pair[i, j, 2] = pair[j, i, 2] = 1.0
    for k, d in enumerate((1, 2, 3)):
        pair[:n, :n, 3 + k] = topo == d
    pair[:n, :n, 6] = topo >= 4
    np.einsum("iik->ik", pair)[:] = 0.0  # no self pairs
    frag_idx = np.zeros(L, np.int32)
    frag_idx[:n] = frag.atom_fragment
    atom_mask = np.zeros(L, np.float32)
    atom_mask[:n] = 1.0
    loc = np.zeros((L, 3), np.float32)
    loc[:n] = local / LENGTH_SCALE
    poc = np.zeros((M, 3), np.float32)
    poc[:m] = (pocket.positions - center) / LENGTH_SCALE
    pfeat = np.zeros((M, N_POCKET_FEATURES), np.float32)
    for j, el in enumerate(pocket.elements):
        sym = str(el).capitalize()
        pfeat[j, POCKET_ELEMENTS.index(sym) if sym in POCKET_ELEMENTS else len(POCKET_ELEMENTS)] = 1.0
    pmask = np.zeros(M, np.float32)
    pmask[:m] = 1.0
    fmask = np.zeros(F, np.float32)
    fmask[:nf] = 1.0
    R0 = np.tile(np.eye(3, dtype=np.float32), (F, 1, 1))
    T0 = np.zeros((F, 3), np.float32)
    if reference is not None:
        ref = np.asarray(reference, np.float64)
        if ref.shape != (n, 3):
            raise ValueError(f"reference: expected shape ({n}, 3) for complex {name}, received {ref.shape}")
        for f in range(nf):  # fit on the fragment's atoms and dummies (2-atom fragments need the dummies)
            atoms = frag.fragment_atoms(f)
            mine = np.flatnonzero(frag.dummies[:, 0] == f) if nd else np.zeros(0, int)
            src = np.concatenate([local[atoms], dummy_local[mine]])
            dst = np.concatenate([ref[atoms], ref[frag.dummies[mine, 2]]])
            R, T = _kabsch(src, dst)
            R0[f], T0[f] = R, (T - center) / LENGTH_SCALE
    dl = np.zeros((D, 3), np.float32)
    df = np.zeros(D, np.int32)
    dp = np.zeros(D, np.int32)
    dm = np.zeros(D, np.float32)
    if nd:
        dl[:nd] = dummy_local / LENGTH_SCALE
        df[:nd], dp[:nd], dm[:nd] = frag.dummies[:, 0], frag.dummies[:, 2], 1.0
    return DockingComplex(
        local=loc,
        fragment=frag_idx,
        atom_mask=atom_mask,
        atom_features=feats,
        pair_features=pair,
        pocket=poc,
        pocket_features=pfeat,
        pocket_mask=pmask,
        fragment_mask=fmask,
        R0=R0,
        T0=T0,
        dummy_local=dl,
        dummy_fragment=df,
        dummy_partner=dp,
        dummy_mask=dm,
        center=center.astype(np.float32),
    )


def example_complex(
    ex: DockingExample,
    *,
    conformer: Literal["rdkit", "oracle"] = "rdkit",
    sizes: ComplexSizes = ComplexSizes(),
    seed: int = 0,
    choice: Literal["canonical", "random"] = "canonical",
    rng: np.random.Generator | None = None,
) -> tuple[DockingComplex, PreparedLigand]:
    """Featurize a :class:`DockingExample` with its reference pose as the target (training / evaluation)."""
    lig = ligand_fragments(ex.mol, conformer=conformer, seed=seed, choice=choice, rng=rng)
    return build_complex(lig, ex.pocket, sizes=sizes, reference=ex.reference_positions, name=ex.id), lig


def stack_complexes(complexes: list[DockingComplex]) -> DockingComplex:
    """Stack complexes of equal padding along a new leading axis (NumPy)."""
    if not complexes:
        raise ValueError("complexes: expected at least one complex, received an empty list")
    return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *complexes)


def index_complex(batch: DockingComplex, i: int) -> DockingComplex:
    """Complex ``i`` of a stacked batch (as JAX arrays)."""
    return jax.tree_util.tree_map(lambda x: jnp.asarray(x[i]), batch)


def _ligand_positions(c: DockingComplex, R: Array, T: Array) -> Array:
    # unchecked: the model and the samplers call this in their inner loops
    return jnp.einsum("nij,nj->ni", R[c.fragment], c.local) + T[c.fragment]


def _dummy_positions(c: DockingComplex, R: Array, T: Array) -> Array:
    # unchecked, as _ligand_positions
    return jnp.einsum("dij,dj->di", R[c.dummy_fragment], c.dummy_local) + T[c.dummy_fragment]


def _to_angstrom(c: DockingComplex, x_scaled: Array) -> Array:
    return x_scaled * LENGTH_SCALE + c.center


def ligand_positions(
    c: DockingComplex, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"]
) -> Float[Array, "l 3"]:
    """Scaled ligand atom positions of the pose ``(R, T)`` (padding atoms sit at fragment 0's center)."""
    return _ligand_positions(c, finite_checked("R", R), finite_checked("T", T))


def dummy_positions(
    c: DockingComplex, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"]
) -> Float[Array, "d 3"]:
    """Scaled dummy-atom positions of the pose ``(R, T)``."""
    return _dummy_positions(c, finite_checked("R", R), finite_checked("T", T))


def to_angstrom(c: DockingComplex, x_scaled: Float[Array, "n 3"]) -> Float[Array, "n 3"]:
    """Scaled, centered positions ``x_scaled`` back in Å (``x_scaled * LENGTH_SCALE + c.center``)."""
    return _to_angstrom(c, finite_checked("x_scaled", x_scaled))


def bond_gap(c: DockingComplex, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"]) -> Float[Array, ""]:
    """RMS distance (Å) between each dummy atom and the partner atom it stands for: 0 for an assembled pose."""
    return _bond_gap(c, finite_checked("R", R), finite_checked("T", T))


def _bond_gap(c: DockingComplex, R: Array, T: Array) -> Array:
    # unchecked, as _ligand_positions (the samplers' gap of every pose)
    gap2 = jnp.sum((_dummy_positions(c, R, T) - _ligand_positions(c, R, T)[c.dummy_partner]) ** 2, -1)
    return jnp.sqrt(jnp.sum(gap2 * c.dummy_mask) / jnp.maximum(c.dummy_mask.sum(), 1.0)) * LENGTH_SCALE


def pose_rmsd(c: DockingComplex, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"]) -> Float[Array, ""]:
    """Plain (atom-order) RMSD in Å to the target pose ``(R0, T0)``; the symmetry-aware number against the
    reference molecule is :func:`jaxkit.docking.symmetric_rmsd`."""
    x = _ligand_positions(c, finite_checked("R", R), finite_checked("T", T))
    ref = _ligand_positions(c, jnp.asarray(c.R0), jnp.asarray(c.T0))
    m = c.atom_mask
    return jnp.sqrt(jnp.sum(jnp.sum((x - ref) ** 2, -1) * m) / m.sum()) * LENGTH_SCALE


def relax_pose(
    mol: Chem.Mol, *, max_displacement: float = 0.3, force_constant: float = 100.0, max_iters: int = 300
) -> Chem.Mol:
    """MMFF94 relaxation of a sampled pose with heavy atoms restrained to it (flat-bottom, ``max_displacement`` Å):
    repairs the bond lengths and angles at the cut bonds (the sampled fragments come from an RDKit conformer and
    need not meet exactly) while keeping the pose. Hydrogens are placed for the force field and removed again.
    Returns the input unchanged if MMFF cannot type the molecule. Uses no reference pose."""
    from rdkit.Chem import AllChem

    check_positive("max_displacement", max_displacement, strict=False)
    check_positive("force_constant", force_constant, strict=False)
    check_int("max_iters", max_iters, minimum=1)
    molh = Chem.AddHs(mol, addCoords=True)
    props = AllChem.MMFFGetMoleculeProperties(molh)
    if props is None:
        return Chem.Mol(mol)
    ff = AllChem.MMFFGetMoleculeForceField(molh, props)
    for a in molh.GetAtoms():
        if a.GetAtomicNum() > 1:
            ff.MMFFAddPositionConstraint(a.GetIdx(), max_displacement, force_constant)
    ff.Minimize(maxIts=max_iters)
    return Chem.RemoveAllHs(molh)
