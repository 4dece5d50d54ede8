"""Figure 3 of Su et al. (2016): GkM's error analysis against the block-size exponent e (block
size N^e, ℓ = N^(1−e) blocks): GkM, the noiseless aggregate of the block centroids (SAG) and
Eq. (3)'s noise on the best known centroids (Noise), ε = 1.

Aggregate: `aggregate_nicv` plus the column `exponent` e, derived from the swept `blocks` value
each run record carries (``"n^a"`` → e = 1 − a, in exact decimal arithmetic, so e is 0.1, …, 1.0
exactly), the number of blocks ℓ the runs used (`blocks`: ℓ is clamped to ⌊N/k⌋ so every block
holds k points) and `same_as`: the smallest e with the same ℓ on that dataset (e.g. on S1,
N = 5,000, k = 15, e = 0.1, 0.2 and 0.3 all give ℓ = 333: one configuration, drawn once and
labelled). Render: NICV vs e (mean ± sd) per dataset of `options.panels`. Checks: §5.2's three
sentences from GUPT's block size N^0.6 (`claims.gkm_exponent`), each one claim over the datasets
(every dataset: the sentences are unqualified), decided by the claims engine on Welch intervals
relative to the reference (SAG; GkM at N^0.6). "Smaller blocks reduce the error" holds on a
dataset when some smaller block size does (the smallest of the relative differences, with
Bonferroni's correction over the smaller sizes on its holding side: `common.extreme_cell`). "As the
block size decreases the error of GkM keeps decreasing, until when the block size gets close to k"
holds when every step of the grid from N^0.6 to the next smaller block size does, down to a block
size of `claims.close_to_k`·k (one cell a step, naming its two groups for the replication looks).
"""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal, InvalidOperation

import numpy as np
import pandas as pd

from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.declared import run_key
from dpclust.pipeline.itemkit import availability, dataset_name, name
from dpclust.pipeline.items.su2016.common import (
    aggregate_nicv,
    available,
    coverage,
    mark_panel,
    plain_bools,
    stats_of,
    tight,
)
from dpclust.pipeline.plotting import mean_sd_line, panel_grid, save_figure, style_for
from dpclust.pipeline.verdicts import Directional, claim_check, every_dataset, extreme_cell, no_cell, relative_cell

GKM, SAG, NOISE = "su2016.gkm", "su2016.gkm_sag", "su2016.gkm_noise"
LINES = (GKM, SAG, NOISE)
_POWER = re.compile(r"^n\^(?P<a>[0-9.]+)$")


def block_size_exponent(blocks) -> float:
    """e of ℓ = N^(1−e) blocks from the `blocks` setting ``"n^a"`` (NaN for other forms)."""
    m = _POWER.match(str(blocks).replace(" ", ""))
    if not m:
        return float("nan")
    try:
        return float(Decimal(1) - Decimal(m.group("a")))
    except InvalidOperation:
        return float("nan")


def aggregate(records, item, ctx=None):
    """Mean NICV per (dataset, block-size exponent e, method: GkM / SAG / Noise), with the number of
    blocks ℓ of each cell and the smallest e that gives the same ℓ (`same_as`)."""
    table = aggregate_nicv(records, item, ctx)
    exponents = {rec.get("group"): block_size_exponent(rec["sweep"]["value"]) for rec in records
                 if (rec.get("sweep") or {}).get("setting") == "blocks"}
    blocks = {}
    for rec in records:
        if rec.get("status") == "ok" and rec.get("runs"):
            ell = [run.get("info", {}).get("blocks") for run in rec["runs"]]
            ell = [b for b in ell if b is not None]
            if ell:
                blocks[(rec.get("group"), rec["dataset"], rec["algorithm"])] = float(np.mean(ell))
    table["exponent"] = [exponents.get(g, np.nan) for g in table["group"]]
    table["blocks"] = [blocks.get((g, d, a), np.nan)
                       for g, d, a in zip(table["group"], table["dataset"], table["algorithm"])]
    same = []
    for r in table.itertuples(index=False):
        peers = table[(table["dataset"] == r.dataset) & (table["algorithm"] == r.algorithm)
                      & (table["blocks"] == r.blocks) & table["exponent"].notna()]
        first = peers["exponent"].min() if len(peers) else np.nan
        same.append(first if (first == first and r.exponent == r.exponent and first < r.exponent) else np.nan)
    table["same_as"] = same
    return table


def render(table, item, stem):
    panels = item["options"]["panels"]
    fig, axes = panel_grid(len(panels), ncols=3)
    for ax, ds in zip(axes, panels):
        title = dataset_name(item, ds)
        status, reason = availability(table, ds)
        if status != "ok":
            mark_panel(ax, title, status, reason)
            continue
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        notes = []
        for i, alg in enumerate(LINES):
            line = part[(part["algorithm"] == alg)].sort_values("exponent")
            if line.empty:
                continue
            dup = line["same_as"].notna()
            mean_sd_line(ax, line["exponent"], line["mean"], line["std"], label=name(item, alg),
                         band=True, **style_for(alg, i))
            if dup.any() and not notes:
                es = ", ".join(f"{e:g}"
                               for e in line.loc[dup | line["exponent"].isin(line.loc[dup, "same_as"]), "exponent"])
                ell = int(line.loc[dup, "blocks"].iloc[0])
                notes.append(f"e = {es}: one ℓ = {ell} (clamped to N/k)")   # the caption says more
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("block size exponent e (block size N^e)")
        ax.set_ylabel("NICV")
        for note in notes:
            ax.text(0.02, 0.02, note, transform=ax.transAxes, fontsize=6.5, color="0.25", va="bottom")
        ax.legend(fontsize=7, loc="best")   # the lines rise to the upper right at e = 1
    tight(fig)
    save_figure(fig, stem)


@plain_bools
def checks(table, item) -> list[Check]:
    e0 = float(item["claims"]["gkm_exponent"])
    whys = item["claims"].get("why") or {}
    n_gkm, n_sag, n_noise = (name(item, a) for a in LINES)
    panels = item["options"]["panels"]
    planned, missing = coverage(table, panels)
    names = {ds: dataset_name(item, ds) for ds in panels}
    avail = available(table, panels)
    if not avail:
        return [no_cell("Figure 3 claims", "no dataset available")]
    close_to_k = float(item["claims"]["close_to_k"])
    noise_cells, block_cells, step_cells, notes = [], [], [], []
    for ds in avail:
        title = dataset_name(item, ds)
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        at = part[np.isclose(part["exponent"].astype(float), e0)]
        sag, noise = at[at["algorithm"] == SAG], at[at["algorithm"] == NOISE]
        if sag.empty or noise.empty:
            notes.append(f"{title}: no {n_noise}/{n_sag} run at e = {e0:g}")
        else:
            # each cell names its runs (its dataset and methods): a replication look runs those alone
            noise_cells.append(replace(relative_cell(f"{title} ({n_noise} {fmt(noise.iloc[0]['mean'])}, "
                                                     f"{n_sag} {fmt(sag.iloc[0]['mean'])})",
                                                     stats_of(noise.iloc[0]), stats_of(sag.iloc[0])),
                                       key=run_key(ds, {}, NOISE, [SAG])))
        g = part[(part["algorithm"] == GKM) & part["same_as"].isna()].sort_values("exponent")
        ref = g[np.isclose(g["exponent"], e0)]
        smaller = g[g["exponent"] < e0 - 1e-9]
        if ref.empty or smaller.empty:
            notes.append(f"{title}: no {n_gkm} run at e = {e0:g} or below")
            continue
        comps = [relative_cell(f"e={r['exponent']:g} (ℓ = {fmt(r['blocks'])})", stats_of(r), stats_of(ref.iloc[0]))
                 for _, r in smaller.iterrows()]
        parts = ", ".join(f"{c.label} {c.estimate:+.3g}" for c in comps)
        block_cells.append(replace(extreme_cell(f"{title} (min over {parts})", comps, largest=False),
                                   key=run_key(ds, {}, GKM, [])))
        step_cells += _steps(pd.concat([ref, smaller]), title, ds, close_to_k)
    note = "; ".join(notes)
    out = [claim_check(f"At l = N^{1 - e0:g} (block size N^{e0:g}) the noise error dominates {n_sag} (§5.2)",
                       noise_cells, Directional(">", 0.0), "every", why=whys.get("noise_dominates", ""),
                       detail=f"cells: ({n_noise} − {n_sag})/{n_sag}, mean NICV" + (f"; {note}" if note else "")),
           claim_check(f"Smaller blocks than N^{e0:g} reduce {n_gkm}'s error (§5.2)", block_cells,
                       Directional("<", 0.0), "every", why=whys.get("smaller_blocks", ""),
                       detail=f"cells: ({n_gkm} at a smaller block size − at e = {e0:g})/at e = {e0:g}, the "
                              "smallest over the smaller sizes" + (f"; {note}" if note else "")),
           claim_check(f"As the block size decreases from N^{e0:g} until it gets close to k (≥ {close_to_k:g}k), "
                       f"{n_gkm}'s error keeps decreasing (§5.2)", step_cells, Directional("<", 0.0), "every",
                       why=whys.get("keeps_decreasing", ""),
                       detail=f"cells: ({n_gkm} at a block size − at the next larger one)/at the next larger "
                              f"one, each step of the grid from N^{e0:g} down to a block size of "
                              f"{close_to_k:g}k" + (f"; {note}" if note else ""))]
    return [every_dataset(c, planned, missing, names) for c in out]


def _steps(gkm, title: str, dataset: str, close_to_k: float) -> list:
    """§5.2's "as the block size decreases the error of GkM keeps decreasing, until when the block
    size gets close to k": one cell per step from a block size (N/ℓ) of the grid to the next smaller
    one, the smaller at least `close_to_k`·k, each naming the two groups it reads."""
    rows = gkm.sort_values("exponent", ascending=False).to_dict("records")
    cells = []
    for big, small in zip(rows, rows[1:]):
        size = small["n_points"] / small["blocks"]
        if not size >= close_to_k * small["k"]:
            break
        cells.append(replace(relative_cell(f"{title} e={small['exponent']:g} vs {big['exponent']:g} "
                                           f"(block size {fmt(size)} vs {fmt(big['n_points'] / big['blocks'])})",
                                           stats_of(small), stats_of(big)),
                             key=run_key(dataset, {}, GKM, [], groups=[big["group"], small["group"]])))
    return cells
