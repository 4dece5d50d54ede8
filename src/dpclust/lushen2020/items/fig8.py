"""Figure 8 of Lu & Shen, "convergence degree": the share of runs of each strategy whose output
before the final Laplace step (line 12) matches Lloyd's from the same initial centroids (`info.match`:
k-means cost within [0.99, 1.01] of Lloyd's, §7.2), per dataset and ε_step. Checks: §7.2's "the
prior strategy matches at least 84% … while the posterior matches no more than 80%" (`claims`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...aggregate import Check, fmt
from ...itemkit import dataset_name, name, step_options
from ...plotting import panel_grid, save_figure, style_for
from .common import ALG1, POSTERIOR, PRIOR, dataset_order, runs_table, unavailable

#: Panel captions of Figure 8 (the strategy's display name is prepended).
PANELS = {POSTERIOR: "(a) {} (past knowledge)", PRIOR: "(b) {} (past and future knowledge)"}


def aggregate_fig8(records, item, ctx=None) -> pd.DataFrame:
    """Match rate and mean pre-noise cost ratio per (dataset, strategy, ε_step), then per (dataset,
    strategy) over all ε (eps_step empty, reason 'all ε')."""
    df = runs_table([r for r in records if r["algorithm"] in ALG1])
    out = [{"dataset": d, "status": "data_unavailable", "reason": r} for d, r in unavailable(df).items()]
    ok = df[df["status"] == "ok"]
    for (dataset, alg, eps), cell in ok.groupby(["dataset", "algorithm", "eps_step"]):
        out.append({"dataset": dataset, "algorithm": alg, "eps_step": eps, "n": len(cell),
                    "match_rate": float(cell["match"].astype(float).mean()),
                    "prenoise_ratio_mean": float(cell["prenoise_ratio"].astype(float).mean()),
                    "status": "ok", "reason": ""})
    for (dataset, alg), cell in ok.groupby(["dataset", "algorithm"]):
        out.append({"dataset": dataset, "algorithm": alg, "eps_step": np.nan, "n": len(cell),
                    "match_rate": float(cell["match"].astype(float).mean()),
                    "prenoise_ratio_mean": float(cell["prenoise_ratio"].astype(float).mean()),
                    "status": "ok", "reason": "all ε"})
    return pd.DataFrame(out, columns=["dataset", "algorithm", "eps_step", "n", "match_rate",
                                      "prenoise_ratio_mean", "status", "reason"])


def render_fig8(table, item, stem) -> None:
    """(a) Posterior, (b) Prior: match rate (%) against ε_step, one line per dataset."""
    opts = step_options(item, "figure")
    fig, axes = panel_grid(2, ncols=2, panel_size=(4.2, 3.0), sharey=True)
    ok = table[(table["status"] == "ok") & table["eps_step"].notna()]
    unavailable_sets = sorted(table.loc[table["status"] != "ok", "dataset"].unique())
    for ax, alg in zip(axes, ALG1):
        for i, dataset in enumerate(dataset_order(ok["dataset"], opts.get("dataset_order", ()))):
            r = ok[(ok["dataset"] == dataset) & (ok["algorithm"] == alg)].sort_values("eps_step")
            ax.plot(r["eps_step"], 100 * r["match_rate"], label=dataset_name(item, dataset), ms=4,
                    **style_for(dataset, i))
        ax.set_ylim(0, 105)
        ax.set_title(PANELS[alg].format(name(item, alg)))
        ax.set_xlabel("per-step ε")
        ax.set_ylabel("matches Lloyd (%)")
        if unavailable_sets:
            ax.text(0.02, 0.02, "data unavailable: " + ", ".join(dataset_name(item, d) for d in unavailable_sets),
                    transform=ax.transAxes, fontsize=7, color="0.3")
    axes[0].legend(loc="best", fontsize=7)
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def check_fig8(table, item) -> list[Check]:
    """§7.2: Prior matches in ≥ `prior_min_match` of the runs of every (dataset, ε) cell, more often
    than Posterior on every dataset (Thm 3), and Posterior in ≤ `posterior_max_match` per dataset."""
    claims = step_options(item, "claims")
    floor = float(claims["prior_min_match"])
    ceiling = float(claims["posterior_max_match"])
    prior_name, posterior_name = name(item, PRIOR), name(item, POSTERIOR)
    ok = table[(table["status"] == "ok") & table["eps_step"].notna()]
    if ok.empty:
        return [Check(f"{prior_name} matches Lloyd in ≥ {floor:.0%} of runs", None, "no available dataset")]
    prior = ok[ok["algorithm"] == PRIOR]
    low = prior[prior["match_rate"] < floor]
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()]
    per_dataset = "; ".join(f"{r.dataset}: {r.match_rate:.2f}" for r in overall[overall["algorithm"] == PRIOR].itertuples())
    checks = [Check(f"{prior_name} matches Lloyd's output in ≥ {floor:.0%} of runs in every (dataset, ε) cell (§7.2)",
                    low.empty if not prior.empty else None,
                    f"per dataset over all ε: {per_dataset}; min {fmt(float(prior['match_rate'].min()))} over {len(prior)} cells" +
                    ("; below: " + "; ".join(f"{r.dataset} ε={fmt(r.eps_step)}: {r.match_rate:.2f}" for r in low.itertuples())
                     if not low.empty else ""))]
    piv = overall.pivot_table(index="dataset", columns="algorithm", values="match_rate")
    if set(ALG1) <= set(piv.columns) and len(piv):
        better = piv[PRIOR] > piv[POSTERIOR]
        checks.append(Check(f"{prior_name} matches Lloyd more often than {posterior_name} on every available dataset "
                            "(§7.2, Thm 3)", bool(better.all()),
                            "; ".join(f"{d}: {prior_name.lower()} {piv.loc[d, PRIOR]:.2f} vs {posterior_name.lower()} "
                                      f"{piv.loc[d, POSTERIOR]:.2f}" for d in piv.index)))
        checks.append(Check(f"{posterior_name} matches Lloyd in no more than {ceiling:.0%} of runs (§7.2)",
                            bool((piv[POSTERIOR] <= ceiling).all()),
                            "; ".join(f"{d}: {piv.loc[d, POSTERIOR]:.2f}" for d in piv.index)))
    return checks
