"""Figure 8 of Lu & Shen, "convergence degree": the share of runs of each strategy whose output
before the final Laplace step (line 12) matches Lloyd's from the same initial centroids (`info.match`:
k-means cost within [0.99, 1.01] of Lloyd's, §7.2), per dataset and ε_step, with Clopper-Pearson 95 %
intervals.

Claims (§7.2), decided per dataset on the runs pooled over ε (the paper reports "the percentage of the
matching results … over all six datasets"; its x-axis is MISSING and "the privacy budget does not impact"
the runs significantly; the runs at different ε have independent initial centroids, so the pooled runs
are independent): the Prior matches in ≥ `claims.prior_min_match` of the runs on every dataset, more
often than the Posterior (Thm 3; Newcombe's interval of the difference), and the Posterior in ≤
`claims.posterior_max_match`. Both strategies are not DP as published; the convergence degree is a
non-private diagnostic of the paper's algorithm, not a privacy comparison."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.claims import Interval, decide, every, proportion_ci
from dpclust.pipeline.itemkit import dataset_name, step_options
from dpclust.pipeline.items.lushen2020.common import (
    ALG1,
    POSTERIOR,
    PRIOR,
    dataset_order,
    display_name,
    runs_table,
    status_rows,
)
from dpclust.pipeline.plotting import panel_grid, save_figure, status_note, style_for

#: Panel captions of Figure 8 (the strategy's display name is prepended).
PANELS = {POSTERIOR: "(a) {} (past knowledge)", PRIOR: "(b) {} (past and future knowledge)"}
COLUMNS = ["dataset", "algorithm", "eps_step", "n", "matches", "match_rate", "ci_low", "ci_high",
           "below_lloyd", "prenoise_ratio_mean", "status", "reason"]


def aggregate_fig8(records, item, ctx=None) -> pd.DataFrame:
    """Matches, runs, match rate with its Clopper-Pearson interval, the non-matching runs whose pre-noise
    cost is below Lloyd's (`below_lloyd`) and the mean pre-noise cost ratio per (dataset, strategy,
    ε_step), then per (dataset, strategy) over all ε (eps_step empty, reason 'all ε')."""
    df = runs_table([r for r in records if r["algorithm"] in ALG1])
    out = status_rows(df)
    ok = df[df["status"] == "ok"]

    def row(dataset, alg, eps, cell, reason):
        matched = cell["match"].astype(bool)
        matches = int(matched.sum())
        ci = proportion_ci(matches, len(cell))
        below = int((cell.loc[~matched, "prenoise_ratio"].astype(float) < 1.0).sum())
        return {"dataset": dataset, "algorithm": alg, "eps_step": eps, "n": len(cell), "matches": matches,
                "match_rate": ci.estimate, "ci_low": ci.low, "ci_high": ci.high, "below_lloyd": below,
                "prenoise_ratio_mean": float(cell["prenoise_ratio"].astype(float).mean()), "status": "ok",
                "reason": reason}

    for (dataset, alg, eps), cell in ok.groupby(["dataset", "algorithm", "eps_step"]):
        out.append(row(dataset, alg, eps, cell, ""))
    for (dataset, alg), cell in ok.groupby(["dataset", "algorithm"]):
        out.append(row(dataset, alg, np.nan, cell, "all ε"))
    return pd.DataFrame(out, columns=COLUMNS)


def render_fig8(table, item, stem) -> None:
    """(a) Posterior, (b) Prior: match rate (%) against ε_step, one line per dataset, with the
    Clopper-Pearson 95 % interval as error bars."""
    opts = step_options(item, "figure")
    fig, axes = panel_grid(2, ncols=2, panel_size=(4.2, 3.2), sharey=True)
    ok = table[(table["status"] == "ok") & table["eps_step"].notna()]
    missing_note = status_note(table, item)
    for ax, alg in zip(axes, ALG1):
        order = dataset_order(ok["dataset"], opts.get("dataset_order", ()))
        for i, dataset in enumerate(order):
            r = ok[(ok["dataset"] == dataset) & (ok["algorithm"] == alg)].sort_values("eps_step")
            if r.empty:
                continue
            x = r["eps_step"].to_numpy() * (1 + 0.015 * (i - (len(order) - 1) / 2))   # dodge overlapping bars
            y = 100 * r["match_rate"].to_numpy()
            err = [y - 100 * r["ci_low"].to_numpy(), 100 * r["ci_high"].to_numpy() - y]
            ax.errorbar(x, y, yerr=err, label=dataset_name(item, dataset), ms=4, capsize=2, elinewidth=0.8,
                        **style_for(dataset, i))
        ax.set_ylim(0, 105)
        ax.set_title(PANELS[alg].format(display_name(item, alg)) + "\n(not DP as published)", fontsize=9)
        ax.set_xlabel("per-step ε (the paper's knob)")
        ax.set_ylabel("runs matching Lloyd (%)")
        if missing_note:
            ax.text(0.02, 0.02, missing_note, transform=ax.transAxes, fontsize=7, color="0.3")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=max(1, len(labels)), fontsize=7, frameon=False)
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def newcombe_diff(k1: int, n1: int, k2: int, n2: int, z: float = 1.959963984540054) -> Interval:
    """Newcombe's (1998, method 10) interval of p1 − p2 from the two Wilson score intervals."""

    def wilson(k, n):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return centre - half, centre + half

    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1)
    l2, u2 = wilson(k2, n2)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return Interval(d, low, high)


def check_fig8(table, item) -> list[Check]:
    """§7.2 per dataset over all ε (see the module docstring); thresholds from `claims`."""
    claims = step_options(item, "claims")
    floor = float(claims["prior_min_match"])
    ceiling = float(claims["posterior_max_match"])
    prior_name, posterior_name = display_name(item, PRIOR), display_name(item, POSTERIOR)
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()]
    cells = table[(table["status"] == "ok") & table["eps_step"].notna()]
    if overall.empty:
        return [Check(f"{prior_name} matches Lloyd in ≥ {floor:.0%} of runs", None, "no available dataset")]

    def per_dataset(alg, threshold, side):
        decisions, details = [], []
        for r in overall[overall["algorithm"] == alg].itertuples():
            ci = Interval(r.match_rate, r.ci_low, r.ci_high)
            decisions.append((r.dataset, decide("", ci, threshold, side).holds))
            per_eps = cells[(cells["dataset"] == r.dataset) & (cells["algorithm"] == alg)].sort_values("eps_step")
            details.append(f"{r.dataset}: {int(r.matches)}/{int(r.n)} = {ci} (per ε: " +
                           ", ".join(f"{fmt(c.eps_step)}: {int(c.matches)}/{int(c.n)}"
                                     for c in per_eps.itertuples()) + ")")
        return decisions, "; ".join(details)

    decisions, detail = per_dataset(PRIOR, floor, ">=")
    checks = [every(f"{prior_name} matches Lloyd's output in ≥ {floor:.0%} of runs on every available dataset "
                    "(§7.2; Clopper-Pearson 95 %)", decisions, detail=detail,
                    why=_why(overall, PRIOR, floor, "below", claims))]
    piv = overall.set_index(["dataset", "algorithm"])
    decisions, details = [], []
    for dataset in sorted(set(overall["dataset"])):
        if (dataset, PRIOR) not in piv.index or (dataset, POSTERIOR) not in piv.index:
            continue
        a, b = piv.loc[(dataset, PRIOR)], piv.loc[(dataset, POSTERIOR)]
        ci = newcombe_diff(int(a.matches), int(a.n), int(b.matches), int(b.n))
        decisions.append((dataset, decide("", ci, 0.0, ">").holds))
        details.append(f"{dataset}: {prior_name.lower()} − {posterior_name.lower()} = {ci}")
    checks.append(every(f"{prior_name} matches Lloyd more often than {posterior_name} on every available dataset "
                        "(§7.2, Thm 3; Newcombe 95 %)", decisions, detail="; ".join(details),
                        why=claims.get("why_prior_vs_posterior", "")))
    decisions, detail = per_dataset(POSTERIOR, ceiling, "<=")
    checks.append(every(f"{posterior_name} matches Lloyd in no more than {ceiling:.0%} of runs on every available "
                        "dataset (§7.2; Clopper-Pearson 95 %)", decisions, detail=detail,
                        why=_why(overall, POSTERIOR, ceiling, "above", claims)))
    return checks


def _why(overall, alg, threshold, direction, claims) -> str:
    """`genuine: …` with the datasets whose whole interval lies on the wrong side of the threshold, and
    where the non-matching runs ended (below Lloyd's cost: a better local optimum, not a failure)."""
    rows = overall[overall["algorithm"] == alg]
    wrong = rows[rows["ci_high"] < threshold] if direction == "below" else rows[rows["ci_low"] > threshold]
    if wrong.empty:
        return ""
    evidence = "; ".join(f"{r.dataset} {int(r.matches)}/{int(r.n)} (95 % CI {r.ci_low:.2f}–{r.ci_high:.2f}); "
                         f"{int(r.below_lloyd)} of its {int(r.n - r.matches)} non-matching runs end below Lloyd's cost"
                         for r in wrong.itertuples())
    text = f"genuine: {direction} {threshold:.0%}: {evidence}"
    if direction == "below" and (wrong["below_lloyd"] >= 0.9 * (wrong["n"] - wrong["matches"])).all():
        text += (". From those random data-record starts Lloyd stops in a poorer local optimum that the "
                 "strategy's sampled centroids leave for a better one: it misses the match by doing better")
    elif direction == "above":
        text += ". The strategy converges to Lloyd's solution more often than the paper reports"
    return text
