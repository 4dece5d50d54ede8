"""Figure 2 (d) of Balcan et al. 2017: k-means objective against ε on MNIST, k = 10.

`figure.plotted` lists the algorithms drawn; one without ε (the non-private reference) is drawn
as a flat line with its ± sd band over the ε grid; a variant whose run records say "not DP as
published" (the authors' calibration of Algorithm 4) is drawn dashed and labelled so, against its
NOMINAL ε (no guarantee). `claims` names the roles of §7's claims (ours, SuLQ, the non-private
reference; `authors` only as evidence in a `why`) and the thresholds. Names come from the names
table.

Claims are decided by the claims engine (`dpclust.pipeline.verdicts`, rubric docs/VERDICTS.md): per ε a
Welch interval of (ours − SuLQ) / SuLQ's mean and a delta-method interval of ours/k-means++ (a
degenerate cell never holds); "SuLQ deteriorates faster" is the ratio of the two methods'
deteriorations, (SuLQ(ε_min)/SuLQ(ε_max)) / (ours(ε_min)/ours(ε_max)) > 1 (delta method,
`log_linear_ci`). Verdicts that fail where the DP-calibrated algorithm collapses share the cause tag
`CAUSE_CALIBRATION`.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from dpclust.pipeline import declared, verdicts
from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.itemkit import availability, dataset_name, labelled_name, name, require_dp, step_options
from dpclust.pipeline.items.balcan2017.common import (
    CAUSE_CALIBRATION,
    cells,
    claim_source,
    collapsed,
    evidence,
    log_linear_cell,
    log_linear_ci,
    spent_check,
    summary,
    triple,
)
from dpclust.pipeline.items.balcan2017.fig2 import variant_style
from dpclust.pipeline.plotting import mark_unavailable, mean_sd_line, panel_grid, save_figure


def aggregate(records, item, ctx=None) -> pd.DataFrame:
    return summary(records)


def render(table: pd.DataFrame, item: dict, stem: str) -> None:
    plotted = step_options(item, "figure")["plotted"]
    fig, axes = panel_grid(1, ncols=1, panel_size=(4.6, 3.4))
    ax = axes[0]
    datasets = sorted(table["dataset"].unique())
    ds = datasets[0] if datasets else "mnist70k"
    status, reason = availability(table, ds)
    if status != "ok":
        mark_unavailable(ax, item["title"], reason, status)
        save_figure(fig, stem)
        return
    eps_grid = sorted(table.loc[table["epsilon"].notna(), "epsilon"].unique())
    for i, alg in enumerate(plotted):
        cell = table[(table["algorithm"] == alg) & (table["status"] == "ok")]
        if cell.empty:
            continue
        label = labelled_name(item, table, alg)
        if cell["epsilon"].isna().all():  # non-private: one value, flat over the ε grid
            m, s = float(cell["mean"].iloc[0]), float(cell["std"].fillna(0).iloc[0])
            mean_sd_line(ax, eps_grid, [m] * len(eps_grid), [s] * len(eps_grid), label=label, band=True,
                         **variant_style(table, alg, i))
        else:
            cell = cell.sort_values("epsilon")
            mean_sd_line(ax, cell["epsilon"], cell["mean"], cell["std"], label=label, **variant_style(table, alg, i))
    ax.set_xlabel("ε (nominal ε for a variant that is not DP)")
    ax.set_ylabel("k-means objective")
    ran = f"{dataset_name(item, ds)}, k = {int(table['k'].iloc[0])}"
    # what ran, under the title, unless the title (the paper's) already says it
    ax.set_title(item["title"] if ran in item["title"] else f"{item['title']}\n({ran})", fontsize=9)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, fontsize=8, frameon=False)
    save_figure(fig, stem)


def _evidence(table: pd.DataFrame, item: dict, ds: str, eps_values) -> str:
    claims = step_options(item, "claims")
    shown = [a for a in (claims["ours"], claims["sulq"], claims.get("authors")) if a]
    return " | ".join(f"ε={e:g}: " + evidence(table, item, ds, "epsilon", e, shown) for e in eps_values)


def _cause(table: pd.DataFrame, item: dict, ds: str, eps_values) -> str:
    """The shared cause tag when the DP-calibrated algorithm collapsed at a failing ε."""
    ours = step_options(item, "claims")["ours"]
    o = cells(table, ds, ours, "epsilon")
    return (f"{CAUSE_CALIBRATION} (with DP-calibrated noise {name(item, ours)} keeps ≤ k/2 non-empty clusters there); "
            if any(e in o and collapsed(o[e]) for e in eps_values) else "")


def _dataset(table: pd.DataFrame) -> str:
    return str(table.loc[table["status"] == "ok", "dataset"].iloc[0])


def _sulq_deteriorates(table: pd.DataFrame, item: dict) -> list[Check]:
    """§7: SuLQ k-means "deteriorates quickly as ε decreases" — one cell: (SuLQ's deterioration) / (ours'),
    cost(ε_min)/cost(ε_max) each, one-sided > 1 with the 1 % null margin (delta method, `log_linear_ci`)."""
    claims = step_options(item, "claims")
    ours, sulq = claims["ours"], claims["sulq"]
    n_ours, n_sulq = name(item, ours), name(item, sulq)
    ds = _dataset(table)
    o, s = cells(table, ds, ours, "epsilon"), cells(table, ds, sulq, "epsilon")
    common = sorted(set(o) & set(s))
    claim = (f"{n_sulq} deteriorates quickly as ε decreases (its cost grows more from the largest to the smallest "
             f"ε than {n_ours}'s does)")
    refused = require_dp(table, item, [ours, sulq], claim)
    if refused:
        return [refused]
    if len(common) < 2:
        return [Check(claim, None, "needs at least two ε values", cells=0, rule="no cell")]
    lo, hi = common[0], common[-1]
    terms = [(1.0, *triple(s[lo])), (-1.0, *triple(s[hi])), (-1.0, *triple(o[lo])), (1.0, *triple(o[hi]))]
    s_det = log_linear_ci([(1.0, *triple(s[lo])), (-1.0, *triple(s[hi]))])
    o_det = log_linear_ci([(1.0, *triple(o[lo])), (-1.0, *triple(o[hi]))])
    # the cell reads the two methods at the two ε only: a replication look runs those (dpclust.pipeline.replication)
    cell = dataclasses.replace(log_linear_cell(f"ε {lo:g} vs {hi:g}", terms),
                               key=declared.run_key(ds, {"epsilon": [lo, hi]}, sulq, [ours]))
    return [verdicts.check(
        claim, [cell], verdicts.Directional(">", 1.0), "every",
        why=_cause(table, item, ds, [lo]) + f"genuine: {n_ours} deteriorates at least as fast as {n_sulq} ({n_ours} "
        f"{o_det}, {n_sulq} {s_det}); " + _evidence(table, item, ds, [lo, hi]),
        detail=(f"(SuLQ deterioration)/(ours' deterioration); cost(ε={lo:g})/cost(ε={hi:g}): "
                f"{n_sulq} {s_det}, {n_ours} {o_det}"))]


#: the claim of Figure 2 (d) that no declaration expresses (config/papers/balcan2017.yaml, claims.declared)
HOOKS = {"sulq_deteriorates": _sulq_deteriorates}


def checks(table: pd.DataFrame, item: dict) -> list[Check]:
    """§7's claims on Figure 2 (d) as declared (config/papers/balcan2017.yaml, fig2d `claims.declared`),
    decided by the claims engine over the cells ε, then our bookkeeping of the ε spent. Verdicts that
    fail where the DP-calibrated algorithm collapses share the cause tag `CAUSE_CALIBRATION`."""
    claims = step_options(item, "claims")
    if table[table["status"] == "ok"].empty:
        return [Check("Figure 2(d) claims", None, "data unavailable", cells=0, rule="no cell")]
    ds = _dataset(table)
    src = claim_source(table, item, "epsilon", [ds], lambda _, e: f"ε={e:g}",
                       lambda failing, text: _cause(table, item, ds, [f.point for f in failing])
                       + f"genuine: {text}; " + _evidence(table, item, ds, [f.point for f in failing]))
    out = declared.decide_all(table, item, src, HOOKS)
    return out + [spent_check(table, [claims["ours"], claims["sulq"]], float(claims["spent_rel_tol"]))]
