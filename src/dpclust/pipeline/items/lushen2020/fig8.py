"""Figure 8 of Lu & Shen, "convergence degree": the share of runs of each strategy whose output
before the final Laplace step (line 12) matches Lloyd's from the same initial centroids (`info.match`:
k-means cost within [0.99, 1.01] of Lloyd's, §7.2), per dataset and ε_step, with Clopper-Pearson 95 %
intervals.

Claims (§7.2), decided per dataset on the runs pooled over ε (the paper reports "the percentage of the
matching results … over all six datasets"; its x-axis is MISSING and "the privacy budget does not impact"
the runs significantly; the runs at different ε have independent initial centroids, so the pooled runs
are independent): the Prior matches in ≥ `claims.prior_min_match` of the runs on every dataset, more
often than the Posterior (Thm 3; Newcombe's interval of the difference), and the Posterior in ≤
`claims.posterior_max_match`; each decided by the claims engine (`dpclust.pipeline.verdicts`) over the
datasets, "every" (the paper's "at least", "no more than" and unqualified "outperforms"), and not
evaluable (n of N datasets) while one of the paper's datasets (`claims.paper_datasets`) is missing. Both
strategies are not DP as published; the convergence degree is a non-private diagnostic of the paper's
algorithm, not a privacy comparison."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpclust.pipeline import verdicts
from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.claims import Interval, proportion_ci
from dpclust.pipeline.itemkit import dataset_name, over_datasets, step_options
from dpclust.pipeline.items.lushen2020.common import (
    ALG1,
    POSTERIOR,
    PRIOR,
    dataset_order,
    display_name,
    judged_check,
    runs_table,
    status_rows,
)
from dpclust.pipeline.plotting import panel_grid, save_figure, status_note, style_for
from dpclust.pipeline.verdicts import failing

#: Panel captions of Figure 8 (the strategy's display name is prepended).
PANELS = {POSTERIOR: "(a) {} (past knowledge)", PRIOR: "(b) {} (past and future knowledge)"}
COLUMNS = ["dataset", "algorithm", "eps_step", "n", "matches", "match_rate", "ci_low", "ci_high",
           "below_lloyd", "prenoise_ratio_mean", "status", "reason"]


def aggregate(records, item, ctx=None) -> pd.DataFrame:
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


def render(table, item, stem) -> None:
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


def _z(level: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(0.5 + level / 2))


def _proportion_cell(label: str, matches: int, n: int) -> verdicts.Cell:
    return verdicts.Cell(label, lambda level: proportion_ci(matches, n, level))


def _newcombe_cell(label: str, k1: int, n1: int, k2: int, n2: int) -> verdicts.Cell:
    return verdicts.Cell(label, lambda level: newcombe_diff(k1, n1, k2, n2, z=_z(level)))


def checks(table, item) -> list[Check]:
    """§7.2 per dataset over all ε (see the module docstring); thresholds from `claims`."""
    claims = step_options(item, "claims")
    floor = float(claims["prior_min_match"])
    ceiling = float(claims["posterior_max_match"])
    prior_name, posterior_name = display_name(item, PRIOR), display_name(item, POSTERIOR)
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()]
    cells = table[(table["status"] == "ok") & table["eps_step"].notna()]
    if overall.empty:
        return [Check(f"{prior_name} matches Lloyd in ≥ {floor:.0%} of runs", None, "no available dataset", cells=0,
                      rule="no cell")]
    expected = list(claims.get("paper_datasets") or dict.fromkeys(table["dataset"].dropna()))

    def per_dataset(alg):
        units, details = [], []
        for r in overall[overall["algorithm"] == alg].itertuples():
            units.append(_proportion_cell(r.dataset, int(r.matches), int(r.n)))
            per_eps = cells[(cells["dataset"] == r.dataset) & (cells["algorithm"] == alg)].sort_values("eps_step")
            details.append(f"{dataset_name(item, r.dataset)}: {int(r.matches)}/{int(r.n)} = "
                           f"{Interval(r.match_rate, r.ci_low, r.ci_high)} "
                           "(95 %; per ε: " + ", ".join(f"{fmt(c.eps_step)}: {int(c.matches)}/{int(c.n)}"
                                                        for c in per_eps.itertuples()) + ")")
        return units, "Clopper-Pearson; " + "; ".join(details)

    # §7.2: "Particularly, the prior strategy matches at least 84% (90% in most cases) output centroids of
    # Lloyd's algorithm; while the posterior matches no more than 80% (50 % in most cases)." "At least" and
    # "no more than" bound every dataset: "every".
    units, detail = per_dataset(PRIOR)
    checks = [over_datasets(judged_check(
        f"{prior_name} matches Lloyd's output in ≥ {floor:.0%} of runs on every dataset (§7.2)", units,
        verdicts.Directional(">=", floor), "every", detail=detail,
        why=lambda v: _why(overall, PRIOR, floor, "below", failing(v))),
        [u.label for u in units], expected, item)]
    # §7.2: "From Figure 8, the prior strategy, which uses both past and future knowledge, outperforms the
    # posterior strategy, which only uses the past knowledge, in the convergence performance because of the
    # convergence guarantee of Theorem 3." Unqualified "outperforms": every dataset.
    piv = overall.set_index(["dataset", "algorithm"])
    units, details = [], []
    for dataset in sorted(set(overall["dataset"])):
        if (dataset, PRIOR) not in piv.index or (dataset, POSTERIOR) not in piv.index:
            continue
        a, b = piv.loc[(dataset, PRIOR)], piv.loc[(dataset, POSTERIOR)]
        units.append(_newcombe_cell(dataset, int(a.matches), int(a.n), int(b.matches), int(b.n)))
        details.append(f"{dataset_name(item, dataset)}: {prior_name.lower()} − {posterior_name.lower()} = "
                       f"{newcombe_diff(int(a.matches), int(a.n), int(b.matches), int(b.n))} (95 %)")
    why_pp = claims.get("why_prior_vs_posterior", "")
    checks.append(over_datasets(judged_check(
        f"{prior_name} matches Lloyd more often than {posterior_name} on every dataset (§7.2, Thm 3)", units,
        verdicts.Directional(">", 0.0), "every", detail="Newcombe; " + "; ".join(details),
        why=lambda v: (why_pp or "genuine: not more often on " + ", ".join(failing(v))) if failing(v) else ""),
        [u.label for u in units], expected, item))
    units, detail = per_dataset(POSTERIOR)
    checks.append(over_datasets(judged_check(
        f"{posterior_name} matches Lloyd in no more than {ceiling:.0%} of runs on every dataset (§7.2)", units,
        verdicts.Directional("<=", ceiling), "every", detail=detail,
        why=lambda v: _why(overall, POSTERIOR, ceiling, "above", failing(v))),
        [u.label for u in units], expected, item))
    return checks


def _why(overall, alg, threshold, direction, wrong_datasets) -> str:
    """`genuine: …` with the datasets the engine failed (Holm, or within the null margin), and where the
    non-matching runs ended (below Lloyd's cost: a better local optimum, not a failure)."""
    rows = overall[overall["algorithm"] == alg]
    wrong = rows[rows["dataset"].isin(wrong_datasets)]
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
