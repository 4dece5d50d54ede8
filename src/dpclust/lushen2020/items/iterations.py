"""Figures 9 and 10 of Lu & Shen: iterations of the Posterior (Fig. 9) and Prior (Fig. 10)
strategies to convergence. (a) the mean iteration ratio strategy / Lloyd (same initial centroids,
paired per run) against ε_step per dataset; (b) the average iterations over all ε and runs beside
the paper's printed table (`options.paper_table`). The item's `options.strategy` names the strategy.
Checks: Thm 2 / Thm 4's bound (`claims.max_ratio`), our Lloyd counts near the paper's
(`claims.lloyd_tolerance`), and the ratio on the paper's side of 1."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...aggregate import Check, fmt
from ...itemkit import dataset_name, name, step_options
from ...plotting import save_figure, style_for
from .common import LLOYD, PRIOR, dataset_order, runs_table, unavailable

COLUMNS = ["dataset", "eps_step", "n", "iterations_mean", "lloyd_steps_mean", "lloyd_iterations_mean",
           "ratio_mean", "ratio_of_means", "paper_algorithm", "paper_lloyd", "paper_ratio", "status", "reason"]


def aggregate_iterations(records, item, ctx=None) -> pd.DataFrame:
    """Per (dataset, ε_step): mean iterations of the strategy and of Lloyd and the mean paired ratio;
    per dataset over all ε (eps_step empty): the same, the ratio of means, Prior's Lloyd steps
    including the look-ahead, and the paper's Fig. 9(b)/10(b) values."""
    opts = step_options(item, "table")
    alg = opts["strategy"]
    df = runs_table([r for r in records if r["algorithm"] == alg])
    out = [{"dataset": d, "status": "data_unavailable", "reason": r} for d, r in unavailable(df).items()]
    ok = df[df["status"] == "ok"].copy()
    ok["ratio"] = ok["iterations"].astype(float) / ok["lloyd_iterations"].astype(float)
    paper = opts["paper_table"]
    for (dataset, eps), cell in ok.groupby(["dataset", "eps_step"]):
        out.append({"dataset": dataset, "eps_step": eps, "n": len(cell),
                    "iterations_mean": float(cell["iterations"].mean()),
                    "lloyd_iterations_mean": float(cell["lloyd_iterations"].astype(float).mean()),
                    "ratio_mean": float(cell["ratio"].mean()), "status": "ok", "reason": ""})
    for dataset, cell in ok.groupby("dataset"):
        it, ll = float(cell["iterations"].mean()), float(cell["lloyd_iterations"].astype(float).mean())
        out.append({"dataset": dataset, "eps_step": np.nan, "n": len(cell), "iterations_mean": it,
                    "lloyd_steps_mean": float(cell["lloyd_steps"].astype(float).mean()),
                    "lloyd_iterations_mean": ll, "ratio_mean": float(cell["ratio"].mean()),
                    "ratio_of_means": it / ll, "status": "ok", "reason": "all ε",
                    "paper_algorithm": paper["algorithm"].get(dataset), "paper_lloyd": paper["lloyd"].get(dataset),
                    "paper_ratio": paper["ratio"].get(dataset)})
    return pd.DataFrame(out, columns=COLUMNS)


def _table_b(table, item) -> tuple[list[str], list[list[str]]]:
    """Panel (b): our average iterations beside the paper's, one column per dataset of the paper's
    table (in `figure.dataset_order`)."""
    opts = step_options(item, "figure")
    strategy = opts["strategy"]
    label, lloyd = name(item, strategy), name(item, LLOYD)
    paper = opts["paper_table"]
    datasets = dataset_order(paper["lloyd"], opts.get("dataset_order", ()))
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()].set_index("dataset")
    header = [""] + [dataset_name(item, d) for d in datasets]
    rows = []
    spec = [(f"{label} (ours)", "iterations_mean", None), (f"{lloyd} (ours)", "lloyd_iterations_mean", None),
            ("Ratio (ours)", "ratio_of_means", None)]
    if strategy == PRIOR:
        spec.append((f"{label} Lloyd steps incl. look-ahead (ours)", "lloyd_steps_mean", None))
    for row_label, col, key in spec + [(f"{label} (paper)", None, "algorithm"),
                                       (f"{lloyd} (paper)", None, "lloyd"), ("Ratio (paper)", None, "ratio")]:
        cells = [row_label]
        for d in datasets:
            if key is not None:
                cells.append(f"{paper[key][d]:g}")
            elif d in overall.index:
                cells.append(f"{overall.loc[d, col]:.2f}")
            else:
                cells.append("n/a")
        rows.append(cells)
    return header, rows


def render_iterations(table, item, stem) -> None:
    import matplotlib.pyplot as plt

    opts = step_options(item, "figure")
    fig, (ax, axt) = plt.subplots(1, 2, figsize=(11.5, 3.4), gridspec_kw={"width_ratios": [1.0, 1.5]})
    ok = table[(table["status"] == "ok") & table["eps_step"].notna()]
    for i, dataset in enumerate(dataset_order(ok["dataset"], opts.get("dataset_order", ()))):
        r = ok[ok["dataset"] == dataset].sort_values("eps_step")
        ax.plot(r["eps_step"], r["ratio_mean"], label=dataset_name(item, dataset), ms=4, **style_for(dataset, i))
    ax.axhline(1.0, color="0.6", lw=0.8, ls="--")
    bound = float(opts["bound"])
    ax.axhline(bound, color="C3", lw=0.8, ls=":", label=f"bound (×{bound:g})")
    ax.set_xlabel("per-step ε")
    ax.set_ylabel(f"iterations {name(item, opts['strategy'])} / {name(item, LLOYD)}")
    ax.set_title("(a) Iteration ratio")
    ax.legend(fontsize=7)
    unavailable_sets = sorted(table.loc[table["status"] != "ok", "dataset"].unique())
    if unavailable_sets:
        ax.text(0.02, 0.02, "data unavailable: " + ", ".join(dataset_name(item, d) for d in unavailable_sets),
                transform=ax.transAxes, fontsize=7, color="0.3")
    header, rows = _table_b(table, item)
    axt.axis("off")
    tab = axt.table(cellText=rows, colLabels=header, loc="center", cellLoc="center")
    tab.auto_set_font_size(False)
    tab.set_fontsize(8)
    tab.scale(1.0, 1.4)
    tab.auto_set_column_width(list(range(len(header))))
    axt.set_title("(b) Average iterations to convergence (ours vs the paper)")
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def _known(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def check_iterations(table, item) -> list[Check]:
    """Thm 2 (Posterior) / Thm 4 (Prior): at most `max_ratio` × Lloyd's iterations on average per
    dataset; our Lloyd counts within ±`lloyd_tolerance` of the paper's; our ratio on the same side of
    1 as the paper's; for Prior, counting its look-ahead step, more than Lloyd's and within the bound."""
    claims = step_options(item, "claims")
    strategy = claims["strategy"]
    label = name(item, strategy)
    bound = float(claims["max_ratio"])
    figure = "Fig. " + str(item.get("reproduces", "")).rsplit(" ", 1)[-1]
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()]
    if overall.empty:
        return [Check(f"{label} needs at most ×{bound:g} Lloyd's iterations", None, "no available dataset")]
    cells = table[(table["status"] == "ok") & table["eps_step"].notna()]
    checks = [Check(f"{label} needs at most {bound:g}× Lloyd's iterations on average, on every available dataset "
                    "(Thm 2 / Thm 4)", bool((overall["ratio_mean"] <= bound).all()),
                    "; ".join(f"{r.dataset}: {r.ratio_mean:.2f}" for r in overall.itertuples()) +
                    f"; worst (dataset, ε) cell {fmt(float(cells['ratio_mean'].max()))}")]
    tol = float(claims["lloyd_tolerance"])
    diffs, close = [], True
    for r in overall.itertuples():
        if not _known(r.paper_lloyd):
            continue
        rel = (r.lloyd_iterations_mean - r.paper_lloyd) / r.paper_lloyd
        close &= abs(rel) <= tol
        diffs.append(f"{r.dataset}: ours {r.lloyd_iterations_mean:.2f} vs paper {r.paper_lloyd:g} ({rel:+.0%})")
    checks.append(Check(f"our Lloyd iteration counts are within ±{tol:.0%} of the paper's {figure}(b)",
                        close if diffs else None, "; ".join(diffs)))
    known = [r for r in overall.itertuples() if _known(r.paper_ratio)]
    diffs = [f"{r.dataset}: ours {r.ratio_of_means:.2f} vs paper {r.paper_ratio:g}" for r in known]
    side = [(r.ratio_of_means > 1) == (r.paper_ratio > 1) for r in known]
    checks.append(Check(f"{label} iterations vs Lloyd fall on the same side of 1 as the paper's ratio",
                        all(side) if side else None, "; ".join(diffs)))
    if strategy == PRIOR and overall["lloyd_steps_mean"].notna().all():
        steps = overall["lloyd_steps_mean"] / overall["lloyd_iterations_mean"]
        ratios = sorted(claims["paper_table"]["ratio"].values())
        checks.append(Check(f"counting {label}'s look-ahead Lloyd step as an iteration, {label} needs more than "
                            f"Lloyd's iterations and at most {bound:g}× (paper's ratios {ratios[0]:.2f}–{ratios[-1]:.2f})",
                            bool(((steps > 1) & (steps <= bound)).all()),
                            "; ".join(f"{d}: {v:.2f}" for d, v in zip(overall["dataset"], steps))))
    return checks
