"""Figure 7 of Su et al. (2016): running time of one DPLloyd run and one EUGkM run per dataset at
ε = `options.epsilon`, from the runs of Figure 1 (wall-clock seconds: not byte-reproducible).

Aggregate: `aggregate_nicv` (items/common.py; it carries, per cell, the mean and sd of log wall
seconds over the warm runs — every run but the first of its job, which also pays one-off imports).
Render: bars of the geometric mean per dataset of `options.panels`, with × / ÷ one geometric sd.
Check: §6.4's "the runtime of DPLloyd is much lower than that of EUGkM", one claim over the
datasets (unqualified: every dataset), decided by the claims engine on each dataset's Welch interval
of the difference of mean log wall times (a ratio of geometric means < 1; the rubric's null margin,
absolute 0.01 around 0, is 1 % of the ratio).

What the times depend on: the machine and its load (other processes share the cores), the BLAS,
and the implementations — DPLloyd is 5 noisy Lloyd steps over the N points; EUGkM is one Laplace
draw per grid cell plus a weighted Lloyd over every cell of Eq. 4's grid from 30 initial sets
(`lloyd_max_iter` steps each when it does not settle), so its cost grows with m^d (49 cells on S1
at ε = 0.1, 15,625 on Adult-num), not with N. The interval is over our runs on one machine: another
machine or implementation can order the two differently where the interval is narrow.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np

from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.itemkit import availability, dataset_name, name
from dpclust.pipeline.items.su2016.common import (
    aggregate_nicv,
    available,
    coverage,
    plain_bools,
    row_of,
    tight,
)
from dpclust.pipeline.plotting import STATUS_TEXT, pyplot, save_figure
from dpclust.pipeline.verdicts import FAILS, Directional, claim_check, every_dataset, judge, linear_cell, no_cell

__all__ = ["aggregate", "checks", "render"]

aggregate = aggregate_nicv   # the NICV table the su2016 items share (common.py)

DPLLOYD, EUGKM = "su2016.dplloyd", "su2016.eugkm"
BARS = (DPLLOYD, EUGKM)


def _log_stats(row):
    if row is None or not row["wall_n"] == row["wall_n"]:
        return None
    return float(row["wall_log_mean"]), float(row["wall_log_sd"]), int(row["wall_n"])


def render(table, item, stem):
    plt = pyplot()
    options = item["options"]
    eps = float(options["epsilon"])
    panels = options["panels"]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    x = np.arange(len(panels))
    any_bar = False
    for i, alg in enumerate(BARS):
        stats = [_log_stats(row_of(table, ds, alg, eps)) for ds in panels]
        gm = np.array([math.exp(s[0]) if s else np.nan for s in stats])
        gsd = np.array([math.exp(s[1]) if s and s[1] == s[1] else 1.0 for s in stats])
        ok = np.isfinite(gm)
        any_bar |= bool(ok.any())
        ax.bar(x[ok] + (i - 0.5) * 0.38, gm[ok], width=0.38, label=name(item, alg), color=f"C{i}",
               yerr=[gm[ok] - gm[ok] / gsd[ok], gm[ok] * gsd[ok] - gm[ok]], capsize=2, error_kw={"elinewidth": 0.8})
    for j, ds in enumerate(panels):
        status = availability(table, ds)[0]
        if status != "ok":   # what the panel lacks: data that cannot be had, a refusal, a dataset not run here
            ax.text(j, 0.5, textwrap.fill(STATUS_TEXT.get(status, status), 12), ha="center", va="center",
                    fontsize=7, color="0.3", transform=ax.get_xaxis_transform())
    ax.set_xticks(x, [dataset_name(item, p) for p in panels])
    if any_bar:
        ax.set_yscale("log")
    ax.set_ylabel("seconds per run (log)")
    ax.set_title(f"Running time per run, ε = {eps:g} (geometric mean × / ÷ geometric sd)")
    ax.legend(fontsize=8, loc="upper left")
    tight(fig)
    save_figure(fig, stem)


@plain_bools
def checks(table, item) -> list[Check]:
    options = item["options"]
    eps = float(options["epsilon"])
    whys = (item.get("claims") or {}).get("why") or {}
    n_dpl, n_eug = name(item, DPLLOYD), name(item, EUGKM)
    panels = options["panels"]
    planned, missing = coverage(table, panels)
    names = {ds: dataset_name(item, ds) for ds in panels}
    cells, absent, of = [], [], {}
    for ds in available(table, panels):
        a, b = _log_stats(row_of(table, ds, DPLLOYD, eps)), _log_stats(row_of(table, ds, EUGKM, eps))
        if a is None or b is None:
            absent.append(dataset_name(item, ds))
            continue
        grid = row_of(table, ds, EUGKM, eps)["cells_per_dim"]
        ratio = math.exp(a[0] - b[0])
        cells.append(linear_cell(f"{dataset_name(item, ds)} (ratio {fmt(ratio)} over {a[2]} / {b[2]} warm runs: "
                                f"{n_dpl} {fmt(math.exp(a[0]))} s, {n_eug} {fmt(math.exp(b[0]))} s per run; EUGkM grid "
                                f"m = {fmt(grid)} per dimension)", [(1.0, a), (-1.0, b)]))
        of[cells[-1].label] = ds
    claim = f"{n_dpl} runs faster than {n_eug} at ε = {eps:g} (§6.4)"
    if not cells:
        return [every_dataset(no_cell(claim, f"no run at ε = {eps:g}"), planned, missing, names)]
    # §6.4 "the runtime of DPLloyd is much lower than that of EUGkM" — unqualified: every dataset
    detail = (f"cells: difference of mean log seconds {n_dpl} − {n_eug} (exp: the ratio of geometric mean wall "
              "times); machine- and load-dependent (see caption)"
              + (f"; no run at ε = {eps:g}: {', '.join(absent)}" if absent else ""))
    test = Directional("<", 0.0)
    failing = [of[c.label] for c in judge(cells, test).cells if c.state == FAILS]
    why = "; ".join(f"{dataset_name(item, ds)}: {whys[ds]}" for ds in failing if whys.get(ds))
    check = claim_check(claim, cells, test, "every", why=why, detail=detail)
    return [every_dataset(check, planned, missing, names)]
