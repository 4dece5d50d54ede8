"""Figure 3 of Su et al. (2016): GkM's error analysis against the block-size exponent e (block
size N^e, ℓ = N^(1−e) blocks): GkM, the noiseless aggregate of the block centroids (SAG) and
Eq. (3)'s noise on the best known centroids (Noise), ε = 1.

Aggregate: `aggregate_nicv` plus the column `exponent` e, derived from the swept `blocks` value
each run record carries (``"n^a"`` → e = 1 − a, in exact decimal arithmetic, so e is 0.1, …, 1.0
exactly). Render: NICV vs e per dataset of `options.panels`. Checks: §5.2's comparison at GUPT's
block size N^0.6 (`claims.gkm_exponent`).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

import numpy as np

from ...aggregate import Check, fmt
from ...itemkit import availability, dataset_name, name
from ...plotting import panel_grid, save_figure, style_for
from .common import aggregate_nicv, available, mark_panel, plain_bools, tight

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


def aggregate_fig3(records, item, ctx=None):
    """Mean NICV per (dataset, block-size exponent e, method: GkM / SAG / Noise)."""
    table = aggregate_nicv(records, item, ctx)
    exponents = {rec.get("group"): block_size_exponent(rec["sweep"]["value"]) for rec in records
                 if (rec.get("sweep") or {}).get("setting") == "blocks"}
    table["exponent"] = [exponents.get(g, np.nan) for g in table["group"]]
    return table


def render_fig3(table, item, stem):
    panels = item["options"]["panels"]
    fig, axes = panel_grid(len(panels), ncols=3)
    for ax, ds in zip(axes, panels):
        title = dataset_name(item, ds)
        status, reason = availability(table, ds)
        if status != "ok":
            mark_panel(ax, title, status, reason)
            continue
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        for i, alg in enumerate(LINES):
            line = part[part["algorithm"] == alg].sort_values("exponent")
            if not line.empty:
                ax.plot(line["exponent"], line["nicv_mean"], label=name(item, alg), **style_for(alg, i))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("block size exponent e (block size N^e)")
        ax.set_ylabel("NICV")
        ax.legend()
    tight(fig)
    save_figure(fig, stem)


@plain_bools
def check_fig3(table, item) -> list[Check]:
    e0 = float(item["claims"]["gkm_exponent"])
    n_gkm, n_sag, n_noise = (name(item, a) for a in LINES)
    out = []
    for ds in available(table, item["options"]["panels"]):
        title = dataset_name(item, ds)
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        at = part[np.isclose(part["exponent"].astype(float), e0)]
        sag = at[at["algorithm"] == SAG]["nicv_mean"].mean()
        noise = at[at["algorithm"] == NOISE]["nicv_mean"].mean()
        out.append(Check(f"{title}: at l = N^{1 - e0:g} (block size N^{e0:g}) the noise error dominates "
                         f"{n_sag} (§5.2)",
                         None if (sag != sag or noise != noise) else noise > sag,
                         f"{n_noise} {fmt(noise)} vs {n_sag} {fmt(sag)}"))
        g = part[part["algorithm"] == GKM].sort_values("exponent")
        if len(g) >= 2 and (g["exponent"] < e0).any():
            small = g[g["exponent"] < e0]["nicv_mean"].min()
            at_e0 = g[np.isclose(g["exponent"], e0)]["nicv_mean"].mean()
            out.append(Check(f"{title}: smaller blocks than N^{e0:g} reduce {n_gkm}'s error (§5.2)",
                             None if at_e0 != at_e0 else small < at_e0,
                             f"best {n_gkm} NICV at e < {e0:g}: {fmt(small)}; at e = {e0:g}: {fmt(at_e0)}"))
    return out or [Check("Figure 3 claims", None, "no dataset available")]
