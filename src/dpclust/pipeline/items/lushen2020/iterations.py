"""Figures 9 and 10 of Lu & Shen: iterations of the Posterior (Fig. 9) and Prior (Fig. 10) strategies
to convergence. (a) the iteration ratio strategy / Lloyd (same initial centroids, paired per run)
against ε_step per dataset with its 95 % bootstrap band; (b) the average iterations over all ε and runs
beside the paper's printed table (`options.paper_table`). The item's `options.strategy` names the
strategy and `options.count` the iteration count shown:

* ``iterations``: the loop's assignment passes until termination, counted as Lloyd's are (the final
  pass that finds the clusters unchanged included) — the Posterior's count (Fig. 9);
* ``lloyd_steps``: the same plus the Prior's look-ahead Lloyd step of every sampling iteration (Alg. 2
  line 2 computes S^(t+1), "duplicated operations in each iteration required for computing the future
  knowledge", abstract/§1; Thm 4's proof counts that step as one of the Î iterations: "half iterations
  decrease the cost function as Δ̂_t, half … as Δ_{t+1}") — the paper's count for the Prior (Fig. 10),
  whose "slower convergence speed" it attributes to that step. Panel (b) also shows the loop count.

Claims, decided by the claims engine (`dpclust.pipeline.verdicts`) per dataset over all ε on the ratio
of means (count / Lloyd's iterations, runs paired; percentile bootstrap, from the replicates' quantiles
the table stores): Thm 2 / Thm 4's bound (`claims.max_ratio`) and the ratio on the same side of 1 as the
paper's printed ratio, both on every dataset of the paper's table (not evaluable, n of N datasets, while
one is missing) and both counted as the paper counts (`claims.paper_count`, default `options.count`);
where our count (`options.count`) differs, and for every count of `claims.alternative_counts`, the side of
1 is repeated on it as an "alternative reading" ("alternative reading (tuned count …)" for a count that
`claims.tuned` says was chosen by looking at the claim, docs/VERDICTS.md).
Our Lloyd counts within ±`claims.lloyd_tolerance` of the paper's printed ones (Student-t interval of the
relative difference, two one-sided tests) is our bookkeeping: the paper claims nothing about our runs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpclust.pipeline import verdicts
from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.claims import Interval, mean_ci
from dpclust.pipeline.itemkit import dataset_name, over_datasets, step_options
from dpclust.pipeline.items.lushen2020.common import (
    bootstrap_cell,
    dataset_order,
    display_name,
    judged_check,
    lloyd_name,
    percentile_interval,
    quantiles_text,
    runs_table,
    status_rows,
)
from dpclust.pipeline.plotting import pyplot, save_figure, status_note, style_for
from dpclust.pipeline.verdicts import failing

COLUMNS = ["dataset", "eps_step", "n", "count", "count_mean", "iterations_mean", "lloyd_steps_mean",
           "lloyd_iterations_mean", "lloyd_iterations_std", "ratio_of_means", "ratio_low", "ratio_high",
           "loop_ratio_of_means", "sampling_ratio_of_means", "update_ratio_of_means", "paper_algorithm",
           "paper_lloyd", "paper_ratio", "quantiles_iterations", "quantiles_lloyd_steps",
           "quantiles_sampling_iterations", "status", "reason"]
#: The counts a figure may show (`options.count`).
COUNTS = {"iterations": "assignment passes until termination (as Lloyd's)",
          "lloyd_steps": "assignment passes incl. the look-ahead Lloyd step of every iteration"}
#: Every count a claim may be decided on (`claims.paper_count`): the shown ones, and Thm 5's Î.
ALL_COUNTS = {**COUNTS, "sampling_iterations": "the sampling iterations Î (Thm 5's count: each spends ε_step)"}
N_BOOT = 2000


def _ratio_replicates(count: np.ndarray, lloyd: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Bootstrap replicates of Σcount / Σlloyd, the runs resampled in pairs (`idx`: one row per replicate)."""
    return count[idx].sum(axis=1) / lloyd[idx].sum(axis=1)


def aggregate(records, item, ctx=None) -> pd.DataFrame:
    """Per (dataset, ε_step) and per dataset over all ε (eps_step empty): the mean of the shown count,
    of the loop count and of Lloyd's iterations, and the ratio of means with its bootstrap interval;
    the overall rows carry the paper's Fig. 9(b)/10(b) values."""
    opts = step_options(item, "table")
    alg, count = opts["strategy"], opts.get("count", "iterations")
    if count not in COUNTS:
        raise ValueError(f"options.count must be one of {sorted(COUNTS)}, got {count!r}")
    df = runs_table([r for r in records if r["algorithm"] == alg])
    out = [{k: v for k, v in row.items() if k != "algorithm"} for row in status_rows(df)]
    ok = df[df["status"] == "ok"].copy()
    paper = opts["paper_table"]
    rng = np.random.default_rng(int(opts.get("bootstrap_seed", 0)))
    n_boot = int(opts.get("n_boot", N_BOOT))

    def row(dataset, eps, cell, extra):
        c = cell[count].astype(float).to_numpy()
        it = cell["iterations"].astype(float).to_numpy()
        ll = cell["lloyd_iterations"].astype(float).to_numpy()
        sampling = cell["sampling_iterations"].astype(float).to_numpy()
        idx = rng.integers(0, c.size, size=(n_boot, c.size))
        low, high = percentile_interval(_ratio_replicates(c, ll, idx))
        if not np.isnan(eps):
            quantiles = {}
        else:   # the overall rows decide the claims: every count's replicates (the same resamples)
            quantiles = {f"quantiles_{k}": quantiles_text(_ratio_replicates(cell[k].astype(float).to_numpy(), ll, idx))
                         for k in ALL_COUNTS}
        return {**quantiles, "dataset": dataset, "eps_step": eps, "n": len(cell), "count": count,
                "count_mean": float(c.mean()),
                "iterations_mean": float(it.mean()),
                "lloyd_steps_mean": float(cell["lloyd_steps"].astype(float).mean()),
                "lloyd_iterations_mean": float(ll.mean()),
                "lloyd_iterations_std": float(ll.std(ddof=1)) if ll.size > 1 else np.nan,
                "ratio_of_means": float(c.sum() / ll.sum()), "ratio_low": low, "ratio_high": high,
                "loop_ratio_of_means": float(it.sum() / ll.sum()),
                # other counts, for the why: the sampling iterations (Thm 5's Î) against Lloyd's passes, and
                # updates for both (the final pass that finds nothing to change excluded)
                "sampling_ratio_of_means": float(sampling.sum() / ll.sum()),
                "update_ratio_of_means": float((c - 1).sum() / (ll - 1).sum()) if (ll > 1).any() else np.nan,
                "status": "ok", **extra}

    for (dataset, eps), cell in ok.groupby(["dataset", "eps_step"]):
        out.append(row(dataset, eps, cell, {"reason": ""}))
    for dataset, cell in ok.groupby("dataset"):
        out.append(row(dataset, np.nan, cell, {"reason": "all ε", "paper_algorithm": paper["algorithm"].get(dataset),
                                               "paper_lloyd": paper["lloyd"].get(dataset),
                                               "paper_ratio": paper["ratio"].get(dataset)}))
    return pd.DataFrame(out, columns=COLUMNS)


def _table_b(table, item) -> tuple[list[str], list[list[str]]]:
    """Panel (b): our average iterations beside the paper's, one column per dataset of the paper's
    table (in `figure.dataset_order`)."""
    opts = step_options(item, "figure")
    strategy, count = opts["strategy"], opts.get("count", "iterations")
    label, lloyd = display_name(item, strategy), lloyd_name(item)
    paper = opts["paper_table"]
    datasets = dataset_order(paper["lloyd"], opts.get("dataset_order", ()))
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()].set_index("dataset")
    header = [""] + [dataset_name(item, d) for d in datasets]
    spec = [(f"{label} (ours)", "count_mean", None), (f"{lloyd} (ours)", "lloyd_iterations_mean", None),
            ("Ratio (ours)", "ratio_of_means", None)]
    if count != "iterations":
        spec += [(f"{label} loop only (ours)", "iterations_mean", None), ("Ratio loop only (ours)",
                                                                        "loop_ratio_of_means", None)]
    rows = []
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


def render(table, item, stem) -> None:
    plt = pyplot()
    opts = step_options(item, "figure")
    count = opts.get("count", "iterations")
    fig, (ax, axt) = plt.subplots(1, 2, figsize=(12.5, 3.8), gridspec_kw={"width_ratios": [1.0, 1.6]},
                                  layout="constrained")
    ok = table[(table["status"] == "ok") & table["eps_step"].notna()]
    order = dataset_order(ok["dataset"], opts.get("dataset_order", ()))
    for i, dataset in enumerate(order):
        r = ok[ok["dataset"] == dataset].sort_values("eps_step")
        style = style_for(dataset, i)
        ax.plot(r["eps_step"], r["ratio_of_means"], label=dataset_name(item, dataset), ms=4, **style)
        ax.fill_between(r["eps_step"], r["ratio_low"], r["ratio_high"], color=style["color"], alpha=0.12, lw=0)
    ax.axhline(1.0, color="0.6", lw=0.8, ls="--")
    bound = float(opts["bound"])
    ax.axhline(bound, color="C3", lw=0.8, ls=":", label=f"bound (×{bound:g})")
    ax.set_xlabel("per-step ε (the paper's knob)")
    ax.set_ylabel(f"iterations {display_name(item, opts['strategy'])} / {lloyd_name(item)}")
    ax.set_title(f"(a) Iteration ratio; count: {COUNTS[count]}", fontsize=8)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    missing_note = status_note(table, item, sep=":\n")
    if missing_note:
        ax.text(1.02, 0.02, missing_note, transform=ax.transAxes, fontsize=7, color="0.3", va="bottom")
    header, rows = _table_b(table, item)
    axt.axis("off")
    tab = axt.table(cellText=rows, colLabels=header, loc="center", cellLoc="center")
    tab.auto_set_font_size(False)
    tab.set_fontsize(8)
    tab.scale(1.0, 1.4)
    tab.auto_set_column_width(list(range(len(header))))
    axt.set_title("(b) Average iterations to convergence (ours vs the paper)")
    fig.suptitle(item["title"] + f" ({display_name(item, opts['strategy'])}: not DP as published)")
    save_figure(fig, stem)


def _known(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _ratio_cell(r, count: str, shown: str) -> verdicts.Cell:
    """The ratio of means of `count` to Lloyd's iterations on an overall row (`shown`: the table's
    `options.count`), with its bootstrap interval at any level."""
    if count == shown:
        estimate = float(r.ratio_of_means)
    else:
        estimate = {"iterations": float(r.loop_ratio_of_means),
                    "sampling_iterations": float(r.sampling_ratio_of_means),
                    "lloyd_steps": float(r.lloyd_steps_mean) / float(r.lloyd_iterations_mean)}[count]
    return bootstrap_cell(r.dataset, estimate, getattr(r, f"quantiles_{count}", None))


def _inverted(cell: verdicts.Cell) -> verdicts.Cell:
    """1 / ratio (a positive ratio's interval inverted): puts a cell whose paper ratio is on the other side
    of 1 on the claim's side."""

    def inv(x: float) -> float:
        return 1.0 / x if x > 0 else math.inf

    def interval(level: float) -> Interval:
        iv = cell.interval(level)
        return Interval(inv(iv.estimate), inv(iv.high), inv(iv.low))

    return verdicts.Cell(f"{cell.label} (1/ratio)", interval)


def checks(table, item) -> list[Check]:
    """Thm 2 (Posterior) / Thm 4 (Prior): at most `max_ratio` × Lloyd's iterations per dataset; the ratio on
    the same side of 1 as the paper's, counted as the paper counts (`paper_count`) and, where ours differs,
    as we count (alternative reading); our Lloyd counts within ±`lloyd_tolerance` of the paper's
    (bookkeeping)."""
    claims = step_options(item, "claims")
    strategy, count = claims["strategy"], claims.get("count", "iterations")
    paper_count = claims.get("paper_count", count)
    if paper_count not in ALL_COUNTS:
        raise ValueError(f"claims.paper_count must be one of {sorted(ALL_COUNTS)}, got {paper_count!r}")
    label = display_name(item, strategy)
    bound = float(claims["max_ratio"])
    figure = "Fig. " + str(item.get("reproduces", "")).rsplit(" ", 1)[-1]
    overall = table[(table["status"] == "ok") & table["eps_step"].isna()]
    expected = list(claims["paper_table"]["lloyd"])      # the datasets of the paper's table (b)
    paper_what = f"counting {ALL_COUNTS[paper_count]}"
    if overall.empty:
        return [Check(f"{label} needs at most {bound:g}× Lloyd's iterations", None, "no available dataset",
                      cells=0, rule="no cell")]
    rows = {r.dataset: r for r in overall.itertuples()}
    # §7.2: "Figure 9 and Figure 10 show the iteration ratio between Algorithm 1 and Lloyd's algorithm to
    # converge, which confirms the theoretical analysis in Theorem 2 and Theorem 4." A bound the figures
    # confirm holds on every dataset: "every".
    units = [_ratio_cell(r, paper_count, count) for r in rows.values()]

    def why_bound(verdict) -> str:
        above = failing(verdict)
        return (f"genuine: ratio of means above {bound:g}: "
                + "; ".join(f"{u.label} {u.interval(0.95)}" for u in units if u.label in above)) if above else ""

    checks = [over_datasets(judged_check(
        f"{label} needs at most {bound:g}× Lloyd's iterations on average on every dataset ({paper_what}; "
        "Thm 2 / Thm 4)", units, verdicts.Directional("<=", bound), "every", why=why_bound,
        detail="ratio of means, percentile bootstrap (95 %): " + "; ".join(f"{u.label}: {u.interval(0.95)}"
                                                                           for u in units)),
        rows, expected, item)]
    checks.append(_lloyd_counts(rows, claims, figure))
    checks.append(_side_of_one(rows, item, label, paper_count, count, expected, alternative=False))
    # our readings beside it: the count the figure shows when the paper's differs, and any other count the
    # claims name (`alternative_counts`, e.g. one count for Figs 9 and 10 alike)
    others = ([count] if paper_count != count else []) + list(claims.get("alternative_counts") or [])
    for other in dict.fromkeys(c for c in others if c != paper_count):
        if other not in ALL_COUNTS:
            raise ValueError(f"claims.alternative_counts must be among {sorted(ALL_COUNTS)}, got {other!r}")
        tuned = "count" in (claims.get("tuned") or {}) and other in str(claims["tuned"]["count"])
        checks.append(_side_of_one(rows, item, label, other, count, expected,
                                   alternative=f"tuned count {other}" if tuned else True))
    return checks


def _lloyd_counts(rows: dict, claims, figure: str) -> Check:
    """Our bookkeeping (the paper claims nothing about our runs): our Lloyd iteration counts within
    ±`lloyd_tolerance` of the paper's printed ones, by two one-sided tests on the relative difference."""
    tol = float(claims["lloyd_tolerance"])
    units, details = [], []
    for d, r in rows.items():
        if not _known(r.paper_lloyd):
            continue
        m, sd, n, paper = float(r.lloyd_iterations_mean), float(r.lloyd_iterations_std), int(r.n), float(r.paper_lloyd)

        def relative(level, m=m, sd=sd, n=n, paper=paper) -> Interval:
            ci = mean_ci(m, sd, n, level)
            return Interval((ci.estimate - paper) / paper, (ci.low - paper) / paper, (ci.high - paper) / paper)

        units.append(verdicts.Cell(d, relative))
        details.append(f"{d}: ours {m:.2f} vs paper {paper:g} (relative {relative(0.95)}, 95 %; as updates, the "
                       f"final check pass excluded: {m - 1:.2f})")

    def why(verdict) -> str:
        off = [det for det, u in zip(details, units) if u.label in failing(verdict)]
        return ("depends on a lost parameter: the paper's Birch2 / House subsets and its rounding precision "
                "(MISSING); " + "; ".join(off)) if off else ""

    return judged_check(f"our Lloyd iteration counts are within ±{tol:.0%} of the paper's {figure}(b)", units,
                        verdicts.Equivalent(-tol, tol), "every", why=why, detail="; ".join(details),
                        kind="bookkeeping")


def _side_of_one(rows: dict, item, label: str, count: str, shown: str, expected, alternative: bool | str) -> Check:
    """Our ratio (counted as `count`) on the same side of 1 as the paper's printed ratio, on every dataset
    of the paper's table; a dataset whose paper ratio lies on the other side of 1 than the first one's
    enters as 1 / ratio. `alternative`: an alternative reading (a text: what it is, e.g. tuned)."""
    what = f"counting {ALL_COUNTS[count]}"
    known = {d: r for d, r in rows.items() if _known(r.paper_ratio)}
    side = ">" if (next(iter(known.values())).paper_ratio > 1 if known else True) else "<"
    units, details = [], []
    for d, r in known.items():
        cell = _ratio_cell(r, count, shown)
        details.append(f"{d}: ours {cell.interval(0.95)} (95 %) vs paper {r.paper_ratio:g}")
        units.append(cell if (r.paper_ratio > 1) == (side == ">") else _inverted(cell))

    def why(verdict) -> str:
        wrong = [f"{d} {_ratio_cell(known[d], count, shown).interval(0.95)}: updates for both (final check pass "
                 f"excluded) {known[d].update_ratio_of_means:.2f}, loop passes {known[d].loop_ratio_of_means:.2f}, "
                 f"sampling iterations {known[d].sampling_ratio_of_means:.2f}"
                 for d in (u.split(" (1/ratio)")[0] for u in failing(verdict))]
        if not wrong:
            return ""
        return (f"genuine: {what}, our ratio is on the other side of 1 (paper "
                f"{', '.join(f'{r.paper_ratio:g}' for r in known.values())}): " + "; ".join(wrong))

    claim = f"{label}'s iterations vs Lloyd's fall on the same side of 1 as the paper's ratio ({what})"
    head = f"alternative reading ({alternative}): " if isinstance(alternative, str) else "alternative reading: "
    check = judged_check((head if alternative else "") + claim, units,
                         verdicts.Directional(side, 1.0), "every", why=why, detail="; ".join(details),
                         kind="alternative" if alternative else "paper")
    return over_datasets(check, known, expected, item)
