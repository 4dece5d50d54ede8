"""Figure 2 (d) of Balcan et al. 2017: k-means objective against ε on MNIST, k = 10.

`figure.plotted` lists the algorithms drawn; one without ε (the non-private reference) is drawn
as a flat line with its ± sd band over the ε grid. `claims` names the roles of §7's claims
(ours, SuLQ, the non-private reference) and the competitiveness threshold. Names come from the
names table.
"""

from __future__ import annotations

import pandas as pd

from ...aggregate import Check, fmt
from ...itemkit import availability, dataset_name, name, step_options
from ...plotting import mark_unavailable, mean_sd_line, panel_grid, save_figure, style_for
from .common import spent_check, summary


def aggregate_fig2d(records, item, ctx=None) -> pd.DataFrame:
    return summary(records)


def render_fig2d(table: pd.DataFrame, item: dict, stem: str) -> None:
    plotted = step_options(item, "figure")["plotted"]
    fig, axes = panel_grid(1, ncols=1, panel_size=(4.2, 3.2))
    ax = axes[0]
    datasets = sorted(table["dataset"].unique())
    ds = datasets[0] if datasets else "mnist70k"
    status, reason = availability(table, ds)
    if status != "ok":
        mark_unavailable(ax, item["title"], reason)
        save_figure(fig, stem)
        return
    eps_grid = sorted(table.loc[table["epsilon"].notna(), "epsilon"].unique())
    for i, alg in enumerate(plotted):
        cell = table[(table["algorithm"] == alg) & (table["status"] == "ok")]
        if cell.empty:
            continue
        if cell["epsilon"].isna().all():  # non-private: one value, flat over the ε grid
            m, s = float(cell["mean"].iloc[0]), float(cell["std"].fillna(0).iloc[0])
            mean_sd_line(ax, eps_grid, [m] * len(eps_grid), [s] * len(eps_grid), label=name(item, alg), band=True,
                         **style_for(alg, i))
        else:
            cell = cell.sort_values("epsilon")
            mean_sd_line(ax, cell["epsilon"], cell["mean"], cell["std"], label=name(item, alg), **style_for(alg, i))
    ax.set_xlabel("ε")
    ax.set_ylabel("k-means objective")
    ax.set_title(f"{item['title']}\n({dataset_name(item, ds)}, k = {int(table['k'].iloc[0])})", fontsize=9)
    ax.legend(loc="best")
    save_figure(fig, stem)


def check_fig2d(table: pd.DataFrame, item: dict) -> list[Check]:
    """§7's claims on Figure 2 (d), with the roles and thresholds of `claims`."""
    claims = step_options(item, "claims")
    ours, sulq, base = claims["ours"], claims["sulq"], claims["nonprivate"]
    n_ours, n_sulq, n_base = name(item, ours), name(item, sulq), name(item, base)
    ok = table[table["status"] == "ok"]
    if ok.empty:
        return [Check("Figure 2(d) claims", None, "data unavailable")]
    o = ok[ok["algorithm"] == ours].set_index("epsilon")["mean"].sort_index()
    s = ok[ok["algorithm"] == sulq].set_index("epsilon")["mean"].sort_index()
    b = ok[ok["algorithm"] == base]["mean"]
    checks = []
    common = o.index.intersection(s.index)
    viol = [f"ε={e:g}: {n_ours} {fmt(o[e])} vs {n_sulq} {fmt(s[e])}" for e in common if not o[e] < s[e]]
    checks.append(Check(f"{n_ours} has a lower mean objective than {n_sulq} at every ε", (not viol) if len(common) else None,
                        f"{len(common)} ε values; " + ("; ".join(viol) if viol else "all hold")))
    cr = float(claims["competitive_ratio"])
    if len(b) and len(o):
        bm = float(b.iloc[0])
        viol = [f"ε={e:g}: {n_ours}/{n_base} = {o[e] / bm:.3g}" for e in o.index if not o[e] <= cr * bm]
        checks.append(Check(f"{n_ours} is competitive with the non-private {n_base} even for small ε "
                            f"(≤ {cr:g}× at every ε)",
                            not viol, "; ".join(viol) if viol else f"max ratio {float((o / bm).max()):.3g}"))
    if len(common) >= 2:
        e_lo, e_hi = common.min(), common.max()
        s_det = s[e_lo] / s[e_hi]
        o_det = o[e_lo] / o[e_hi]
        checks.append(Check(f"{n_sulq} deteriorates quickly as ε decreases (its cost grows more from the largest to "
                            f"the smallest ε than {n_ours}'s does)", bool(s_det > 1 and s_det > o_det),
                            f"cost(ε={e_lo:g})/cost(ε={e_hi:g}): {n_sulq} {s_det:.3g}, {n_ours} {o_det:.3g}"))
    checks.append(spent_check(table, [ours, sulq], float(claims["spent_rel_tol"])))
    return checks
