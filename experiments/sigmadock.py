"""SigmaDock-style docking: fragment reassembly on held-out CCD ligands and redocking on the PoseBusters complexes.

Reproduces (in spirit, at reduced scale) SigmaDock (ICLR 2026) Table 1: top-1 success = RMSD < 2 Å (and
PoseBusters-valid) on PoseBusters; the published 79.9% comes from training on PDBBind, which is not available
offline — here the model trains on CCD ligands in pseudo-pockets (see ``jaxkit.docking._datasets``).
"""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from experiments import Anchor, Experiment, register
from jaxkit import docking as dk
from jaxkit.docking import (
    ccd_examples,
    posebusters_complexes,
    posebusters_data_dir,
    posebusters_valid,
    random_placement,
    success_rate,
    symmetric_rmsd,
    vina_dock,
    with_positions,
    write_poses_sdf,
)
from jaxkit.train import ArrayLoader, fit

PRESETS = {
    "quick": dict(n_train=32, n_test=8, lig_max=40, poc_max=140, f_max=10, width=32, depth=3, steps=300, batch=4,
                  lr=1e-3, n_samples=8, n_steps=20, pb_cutoff=6.0, pb_poc_max=320, random_k=64,
                  vina_exhaustiveness=4, pb_checks=True),
    "paper": dict(n_train=2000, n_test=200, lig_max=40, poc_max=160, f_max=10, width=64, depth=4, steps=50000,
                  batch=16, lr=1e-3, n_samples=40, n_steps=30, pb_cutoff=10.0, pb_poc_max=700, random_k=256,
                  vina_exhaustiveness=8, pb_checks=True),
}


def _pose_mol(ex, arrs, R, T):
    x = np.asarray(dk.to_angstrom(arrs, dk.ligand_positions(arrs, R, T)))[: ex.frag.n_atoms]
    return with_positions(ex.frag.mol, x.astype(np.float64))


def _dock_set(ctx, model, examples, arrs_all, cfg, key, tag):
    ref_rows = []
    run = eqx.filter_jit(lambda m, a, k: dk.dock_complex(m, a, k, n_samples=cfg["n_samples"], n_steps=cfg["n_steps"]))
    for i, ex in enumerate(ctx.progress(examples, desc=f"dock-{tag}")):
        a = jax.tree_util.tree_map(lambda x, i=i: jnp.asarray(x[i]), arrs_all)
        t0 = time.perf_counter()
        try:
            R, T, scores = run(model, a, jax.random.fold_in(key, i))
            jax.block_until_ready(scores)
        except Exception as e:
            raise RuntimeError(f"docking complex {ex.id} ({tag}) failed: {type(e).__name__}: {e}") from e
        dt = time.perf_counter() - t0
        ref = with_positions(ex.frag.mol, ex.reference_positions)
        rmsds = [symmetric_rmsd(_pose_mol(ex, a, R[j], T[j]), ref) for j in range(cfg["n_samples"])]
        top = int(np.argmin(np.asarray(scores)))
        rx, score = random_placement(ex.frag.mol, ex.pocket.positions, ex.pocket.centre, k=cfg["random_k"], seed=i)
        ref_rows.append({
            "id": ex.id, "top1_rmsd": rmsds[top], "best_rmsd": float(min(rmsds)),
            "top1_bond_gap": float(dk.bond_gap(a, R[top], T[top])),
            "random_rmsd": symmetric_rmsd(with_positions(ex.frag.mol, rx), ref), "seconds": dt,
            "top1_pose": _pose_mol(ex, a, R[top], T[top]),
        })
    return ref_rows


def run(ctx):
    cfg = ctx.config
    key = jax.random.key(ctx.seed)
    data = ctx.stage("data", lambda: {
        "train": ccd_examples(cfg["n_train"], split="train", seed=ctx.seed, fragmentation="random"),
        "test": ccd_examples(cfg["n_test"], split="test", seed=ctx.seed),
    })
    shape = dict(lig_max=cfg["lig_max"], poc_max=cfg["poc_max"], f_max=cfg["f_max"])
    train_arrs = dk.stack_complexes(data["train"], **shape)
    test_arrs = dk.stack_complexes(data["test"], **shape)

    def train():
        model = dk.DockingScoreModel(cfg["width"], cfg["depth"], key=jax.random.fold_in(key, 1))
        loader = ArrayLoader(train_arrs, cfg["batch"], key=jax.random.fold_in(key, 2))
        opt = optax.adam(optax.cosine_decay_schedule(cfg["lr"], cfg["steps"], alpha=0.1))
        res = fit(model, opt, dk.batch_loss, loader, n_steps=cfg["steps"], key=jax.random.fold_in(key, 3),
                  log_every=10, checkpoint_dir=ctx.checkpoint_dir("train"), checkpoint_every=50,
                  resume=ctx.resume, progress="sigmadock:train")
        return {"model": eqx.filter(res.model, eqx.is_array), "history": res.history, "wall": res.wall_time}

    trained = ctx.stage("train", train)
    skeleton = dk.DockingScoreModel(cfg["width"], cfg["depth"], key=jax.random.fold_in(key, 1))
    model = eqx.combine(trained["model"], eqx.filter(skeleton, eqx.is_array, inverse=True))

    ccd_rows = ctx.stage("eval_ccd", lambda: _dock_set(ctx, model, data["test"], test_arrs, cfg,
                                                       jax.random.fold_in(key, 4), "ccd"))
    exact_rows = ctx.stage("eval_ccd_exact", lambda: _dock_set(ctx, dk.exact_score_fn(), data["test"][:2],
                                                               test_arrs, cfg, jax.random.fold_in(key, 5), "exact"))

    def redock():
        pb = posebusters_complexes(cutoff=cfg["pb_cutoff"])
        arrs = dk.stack_complexes(pb, lig_max=cfg["lig_max"], poc_max=cfg["pb_poc_max"], f_max=cfg["f_max"])
        rows = _dock_set(ctx, model, pb, arrs, cfg, jax.random.fold_in(key, 6), "posebusters")
        for ex, row in zip(pb, rows):
            ref = with_positions(ex.frag.mol, ex.reference_positions)
            pdb = posebusters_data_dir() / ex.id / f"{ex.id}_protein_one_lig_removed.pdb"
            if cfg["pb_checks"]:
                row["top1_pb_valid"], _ = posebusters_valid(row["top1_pose"], ref, pdb)
            try:
                t0 = time.perf_counter()
                vpose, energy = vina_dock(pdb, ex.frag.mol, ex.pocket.centre,
                                          exhaustiveness=cfg["vina_exhaustiveness"], seed=ctx.seed)
                row["vina_seconds"] = time.perf_counter() - t0
                row["vina_rmsd"] = symmetric_rmsd(vpose, ref)
                row["vina_energy"] = energy
                if cfg["pb_checks"]:
                    row["vina_pb_valid"], _ = posebusters_valid(vpose, ref, pdb)
            except Exception as e:  # vina is an optional baseline; say why it is missing
                row["vina_error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[-1][:300]}"
        return rows

    pb_rows = ctx.stage("eval_posebusters", redock)
    for tag, rows in (("ccd", ccd_rows), ("posebusters", pb_rows)):
        write_poses_sdf(ctx.out_dir / f"top1_poses_{tag}.sdf", [r["top1_pose"] for r in rows], [r["id"] for r in rows],
                        [{"top1_rmsd": f"{r['top1_rmsd']:.3f}"} for r in rows])
    _plots(ctx, trained["history"], ccd_rows, pb_rows)

    def strip(rows):
        return [{k: v for k, v in r.items() if k != "top1_pose"} for r in rows]

    metrics = {
        "train": {"final_loss": float(np.mean([h["loss"] for h in trained["history"][-5:]])),
                  "wall_time_s": trained["wall"], "n_train": len(data["train"])},
        "ccd_reassembly": {
            "n": len(ccd_rows),
            "top1_success_2A": success_rate([r["top1_rmsd"] for r in ccd_rows]),
            "top1_success_1A": success_rate([r["top1_rmsd"] for r in ccd_rows], 1.0),
            "bestN_success_2A": success_rate([r["best_rmsd"] for r in ccd_rows]),
            "random_success_2A": success_rate([r["random_rmsd"] for r in ccd_rows]),
            "median_top1_rmsd": float(np.median([r["top1_rmsd"] for r in ccd_rows])),
            "median_random_rmsd": float(np.median([r["random_rmsd"] for r in ccd_rows])),
            "seconds_per_complex": float(np.mean([r["seconds"] for r in ccd_rows[1:] or ccd_rows])),
            "exact_score_median_rmsd": float(np.median([r["top1_rmsd"] for r in exact_rows])),
            "rows": strip(ccd_rows),
        },
        "posebusters_redock": {
            "n": len(pb_rows),
            "top1_success_2A": success_rate([r["top1_rmsd"] for r in pb_rows]),
            "top1_success_2A_pb_valid": success_rate([r["top1_rmsd"] for r in pb_rows],
                                                     valid=[r.get("top1_pb_valid", False) for r in pb_rows]),
            "bestN_success_2A": success_rate([r["best_rmsd"] for r in pb_rows]),
            "random_success_2A": success_rate([r["random_rmsd"] for r in pb_rows]),
            "vina_success_2A": success_rate([r.get("vina_rmsd", np.inf) for r in pb_rows]),
            "rows": strip(pb_rows),
        },
    }
    ctx.write_summary(_summary(ctx, metrics))
    return metrics


def _plots(ctx, history, ccd_rows, pb_rows):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    axes[0].plot([h["step"] for h in history], [h["loss"] for h in history])
    axes[0].set(xlabel="step", ylabel="DSM loss", title="training")
    for key, label in [("top1_rmsd", "model top-1"), ("best_rmsd", "model best-of-N"), ("random_rmsd", "random")]:
        r = np.sort([row[key] for row in ccd_rows])
        axes[1].step(r, np.arange(1, len(r) + 1) / len(r), where="post", label=label)
    axes[1].axvline(2.0, color="k", ls=":")
    axes[1].set(xlabel="RMSD (Å)", ylabel="fraction ≤", title="held-out CCD reassembly")
    axes[1].legend()
    ctx.save_figure(fig, "sigmadock.png")
    plt.close(fig)


def _summary(ctx, m):
    c, p = m["ccd_reassembly"], m["posebusters_redock"]
    lines = [
        f"# sigmadock ({ctx.preset} preset, seed {ctx.seed})", "",
        "SigmaDock (ICLR 2026) reports 79.9% top-1 success (RMSD < 2 Å and PoseBusters-valid) on PoseBusters "
        "after training on PDBBind. Our model is trained offline on "
        f"{m['train']['n_train']} CCD ligands in pseudo-pockets, so the numbers below are not comparable to that "
        "headline; they measure this pipeline at this scale.", "",
        "| set | metric | ours | random placement | Vina | SigmaDock (paper) |", "|---|---|---|---|---|---|",
        f"| CCD held-out ({c['n']}) | top-1 < 2 Å | {c['top1_success_2A']:.2f} | {c['random_success_2A']:.2f} | – | – |",
        f"| CCD held-out | best-of-N < 2 Å | {c['bestN_success_2A']:.2f} | – | – | – |",
        f"| CCD held-out | median top-1 RMSD (Å) | {c['median_top1_rmsd']:.2f} | {c['median_random_rmsd']:.2f} | – | – |",
        f"| PoseBusters ({p['n']}) | top-1 < 2 Å | {p['top1_success_2A']:.2f} | {p['random_success_2A']:.2f} | "
        f"{p['vina_success_2A']:.2f} | – |",
        f"| PoseBusters | top-1 < 2 Å & PB-valid | {p['top1_success_2A_pb_valid']:.2f} | – | – | 0.799 |", "",
        f"Exact-score sampler (sanity check of the diffusion, no learning): median RMSD "
        f"{c['exact_score_median_rmsd']:.2f} Å. Sampling time per complex: {c['seconds_per_complex']:.2f} s "
        f"(CPU). Final training loss {m['train']['final_loss']:.3f}.", "",
        "Per-complex PoseBusters rows:", "",
    ]
    for r in p["rows"]:
        lines.append(f"- {r['id']}: top-1 {r['top1_rmsd']:.2f} Å (PB-valid {r.get('top1_pb_valid')}), best-of-N "
                     f"{r['best_rmsd']:.2f} Å, random {r['random_rmsd']:.2f} Å, Vina "
                     f"{r.get('vina_rmsd', float('nan')):.2f} Å {r.get('vina_error', '')}")
    return "\n".join(lines) + "\n"


register(Experiment(
    name="sigmadock",
    reproduces="SigmaDock (ICLR 2026) Table 1 (PoseBusters top-1 success), reduced offline setting",
    presets=PRESETS,
    run=run,
    anchors=(Anchor("posebusters_redock/top1_success_2A_pb_valid", 0.799, "SigmaDock, ICLR 2026 (PDBBind-trained)"),),
))
