"""What several items of Su et al. (2016) share: the NICV table, its panels and heatmaps, and the
helpers of the claim checks.

NICV table (`aggregate_nicv`; Figures 1, 2, 3, 5, 6, 7): one row per (group, dataset, k, method, ε)
with NICV statistics and the §5.1 baseline: the minimum NICV of non-private Lloyd (`BASELINE`) over
its runs (the 30 sets), per dataset and k, with `gap` = mean NICV − baseline and `ratio` = mean NICV
/ baseline. `method` is the paper's label of the run group and algorithm, from the item's
`table.labels` (``"group:algorithm"`` or ``"algorithm"`` keys; kept as the paper prints them, so the
tables stay byte-identical whatever `config/names.yaml` says). Rows of data that cannot be obtained
keep their status and reason, so renderers draw "data unavailable" panels and never substitute data.

Figures name algorithms and datasets from the display-name table (`dpclust.itemkit.name`,
`dataset_name`); a heatmap panel is a `[group:]algorithm` selector, titled by the algorithm's name
plus the run group's `figure.variants` suffix (e.g. "θ=5"). Checks select rows by algorithm and run
group (never by label) and take every threshold from the item's `claims`.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd

from ...aggregate import Check, runs_frame
from ...itemkit import availability, dataset_name, name
from ...plotting import mark_unavailable, panel_grid, save_figure, style_for

#: The §5.1 baseline: "standard k-means algorithm over the same 30 sets of initial centroids",
#: minimum NICV among its runs.
BASELINE = "su2016.lloyd"
#: Style index of each algorithm (colour and marker stay the same in every figure).
STYLE_ORDER = ["su2016.dplloyd", "su2016.eugkm", "su2016.pgkm", "su2016.gkm", "su2016.gkm3k", "su2016.hybrid",
               "su2016.hybrid_forced", BASELINE]
COLUMNS = ["group", "dataset", "k", "d", "n_points", "method", "algorithm", "epsilon", "nicv_mean",
           "nicv_std", "nicv_min", "n_runs", "baseline", "gap", "ratio", "wall_mean_s", "wall_median_s", "hybrid_applied",
           "baseline_sizes", "status", "reason"]


# ---------------------------------------------------------------------------------------------
# aggregation
# ---------------------------------------------------------------------------------------------
def method_label(labels: dict, group: str, algorithm: str) -> str:
    """The paper's label of (run group, algorithm): `labels["group:algorithm"]`, else
    `labels[algorithm]`, else the algorithm id."""
    return labels.get(f"{group}:{algorithm}") or labels.get(algorithm) or algorithm


def baseline_sizes(records: list[dict]) -> dict:
    """Sorted cluster sizes of the minimum-NICV baseline run per (dataset, k)."""
    best: dict = {}
    for rec in records:
        if rec.get("algorithm") != BASELINE or rec.get("status") != "ok":
            continue
        for run in rec["runs"]:
            key = (rec["dataset"], rec["k"])
            if key not in best or run["nicv"] < best[key][0]:
                best[key] = (run["nicv"], sorted(run.get("cluster_sizes") or [], reverse=True))
    return {key: " ".join(str(s) for s in sizes) for key, (_, sizes) in best.items()}


def aggregate_nicv(records, item, ctx=None) -> pd.DataFrame:
    """NICV per (group, dataset, k, method, ε) with the §5.1 baseline (min over the Lloyd runs)."""
    labels = (item.get("table") or {}).get("labels") or {}
    df = runs_frame(records, info_keys=["hybrid_applied"])
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    meta = {(r["dataset"]): (r.get("d"), r.get("n")) for r in records if r.get("status") == "ok"}
    df["method"] = [method_label(labels, g, a) for g, a in zip(df["group"], df["algorithm"])]
    rows = []
    bad = df[df["status"] != "ok"].drop_duplicates(subset=["dataset", "k", "method", "epsilon"])
    for r in bad.itertuples(index=False):
        rows.append({"group": r.group, "dataset": r.dataset, "k": r.k, "method": r.method,
                     "algorithm": r.algorithm, "epsilon": r.epsilon, "status": r.status, "reason": r.reason})
    ok = df[df["status"] == "ok"].copy()
    if not ok.empty:
        ok["eps_key"] = ok["epsilon"].fillna(-1.0)
        ok["hybrid_applied"] = ok["hybrid_applied"].astype(float)
        grouped = ok.groupby(["group", "dataset", "k", "method", "algorithm", "eps_key"], dropna=False)
        stats = grouped.agg(nicv_mean=("nicv", "mean"), nicv_std=("nicv", "std"), nicv_min=("nicv", "min"),
                            n_runs=("nicv", "size"), wall_mean_s=("wall_time_s", "mean"),
                            wall_median_s=("wall_time_s", "median"),
                            hybrid_applied=("hybrid_applied", "mean")).reset_index()
        stats["epsilon"] = stats["eps_key"].where(stats["eps_key"] >= 0, np.nan)
        stats["status"], stats["reason"] = "ok", ""
        rows.extend(stats.drop(columns="eps_key").to_dict("records"))
    table = pd.DataFrame(rows).reindex(columns=COLUMNS)
    base = table[(table["algorithm"] == BASELINE) & (table["status"] == "ok")]
    base = base.groupby(["dataset", "k"])["nicv_min"].min().rename("baseline_value").reset_index()
    table = table.merge(base, on=["dataset", "k"], how="left")
    table["baseline"] = table["baseline_value"]
    table = table.drop(columns="baseline_value")
    table["gap"] = table["nicv_mean"] - table["baseline"]
    table["ratio"] = table["nicv_mean"] / table["baseline"]
    sizes = baseline_sizes(records)
    table["baseline_sizes"] = [sizes.get((d, k), "") if a == BASELINE else ""
                               for d, k, a in zip(table["dataset"], table["k"], table["algorithm"])]
    table["d"] = [meta.get(d, (None, None))[0] for d in table["dataset"]]
    table["n_points"] = [meta.get(d, (None, None))[1] for d in table["dataset"]]
    table = table.sort_values(["dataset", "k", "method", "group", "epsilon"], na_position="first")
    return table.reset_index(drop=True)[COLUMNS]


# ---------------------------------------------------------------------------------------------
# selectors: "[group:]algorithm"
# ---------------------------------------------------------------------------------------------
def split_selector(selector: str) -> tuple[str | None, str]:
    """("group", "algorithm") of "group:algorithm"; (None, "algorithm") of "algorithm"."""
    group, _, algorithm = str(selector).rpartition(":")
    return (group or None), algorithm


def rows_of(table: pd.DataFrame, algorithm: str, group: str | None = None) -> pd.DataFrame:
    """The available rows of an algorithm (in one run group, if given)."""
    mask = (table["status"] == "ok") & (table["algorithm"] == algorithm)
    if group is not None:
        mask &= table["group"] == group
    return table[mask]


def variant_name(item: dict, algorithm: str, group: str | None, variants: dict) -> str:
    """Display name of an algorithm, with the suffix of its run group's variant (e.g. "EUGkM θ=5")."""
    suffix = variants.get(group) if group is not None else None
    return f"{name(item, algorithm)} {suffix}" if suffix else name(item, algorithm)


# ---------------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------------
def mark_panel(ax, title: str, status: str, reason: str) -> None:
    """A panel without data: "not run in this preset" or "data unavailable" (with why)."""
    if status == "absent":
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "not run in this preset", ha="center", va="center", transform=ax.transAxes,
                fontsize=8, color="0.3")
    else:
        mark_unavailable(ax, title, reason)


def tight(fig, **kw) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig.tight_layout(**kw)


def style_of(algorithm: str, fallback: int) -> dict:
    return style_for(algorithm, STYLE_ORDER.index(algorithm) if algorithm in STYLE_ORDER else fallback)


def nicv_panels(table: pd.DataFrame, item: dict, stem: str, lines: list[str]) -> None:
    """One log-log panel of NICV vs ε per dataset of `options.panels`: a line per algorithm of
    `lines` and the baseline dashed."""
    panels = (item.get("options") or {}).get("panels") or sorted(table["dataset"].unique())
    fig, axes = panel_grid(len(panels), ncols=3)
    for ax, ds in zip(axes, panels):
        title = dataset_name(item, ds)
        status, reason = availability(table, ds)
        if status != "ok":
            mark_panel(ax, title, status, reason)
            continue
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        for i, alg in enumerate(lines):
            line = part[part["algorithm"] == alg].sort_values("epsilon")
            if line.empty:
                continue
            ax.plot(line["epsilon"], line["nicv_mean"], label=name(item, alg), **style_of(alg, i))
        base = part["baseline"].dropna()
        if not base.empty:
            paper_label = part.loc[part["algorithm"] == BASELINE, "method"]
            ax.axhline(float(base.iloc[0]), color="k", linestyle="--", linewidth=1,
                       label=paper_label.iloc[0] if len(paper_label) else name(item, BASELINE))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{title} (k={int(part['k'].iloc[0])})")
        ax.set_xlabel("ε")
        ax.set_ylabel("NICV")
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 7), bbox_to_anchor=(0.5, -0.02))
    tight(fig, rect=(0, 0.05, 1, 1))
    save_figure(fig, stem)


def synthetic_grid(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows of the synthetic datasets with their K and D (from the names su_synth_k{K}_d{D})."""
    t = rows.copy()
    t["K"] = t["dataset"].str.extract(r"_k(\d+)_")[0].astype(float)
    t["D"] = t["dataset"].str.extract(r"_d(\d+)$")[0].astype(float)
    return t


def heatmaps(table: pd.DataFrame, item: dict, stem: str) -> None:
    """One k × d heatmap of NICV − baseline per `figure.panels` selector, each with its own colour
    scale (the methods differ by orders of magnitude; a shared scale would hide all but the worst)."""
    figure = item.get("figure") or {}
    panels, variants = figure["panels"], figure.get("variants") or {}
    fig, axes = panel_grid(len(panels), ncols=4, panel_size=(3.4, 2.9))
    any_ok = table["status"].eq("ok").any()
    for ax, selector in zip(axes, panels):
        group, alg = split_selector(selector)
        title = variant_name(item, alg, group, variants)
        part = synthetic_grid(rows_of(table, alg, group))
        if part.empty:
            if any_ok:
                mark_panel(ax, title, "absent", "")
            else:
                reason = str(table["reason"].dropna().iloc[0]) if table["reason"].notna().any() else ""
                mark_unavailable(ax, title, reason)
            continue
        grid = part.pivot_table(index="K", columns="D", values="gap", aggfunc="mean")
        grid = grid.reindex(index=range(2, 11), columns=range(2, 11))
        im = ax.imshow(grid.to_numpy(), origin="lower", cmap="viridis", extent=(1.5, 10.5, 1.5, 10.5),
                       aspect="auto")
        fig.colorbar(im, ax=ax, shrink=0.85, label="NICV − baseline")
        ax.set_title(title)
        ax.set_xlabel("d")
        ax.set_ylabel("k")
    save_figure(fig, stem)


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
def plain_bools(fn):
    """Checks must carry holds ∈ {True, False, None} (numpy booleans are converted)."""

    @functools.wraps(fn)
    def wrapper(table, item):
        out = fn(table, item)
        return [Check(c.claim, None if c.holds is None else bool(c.holds), c.detail) for c in out]
    return wrapper


def cell(table: pd.DataFrame, ds: str, algorithm: str, eps: float, group: str | None = None) -> float:
    """Mean NICV of an algorithm on a dataset at ε (NaN if absent)."""
    part = rows_of(table, algorithm, group)
    part = part[(part["dataset"] == ds) & np.isclose(part["epsilon"].astype(float), eps)]
    return float(part["nicv_mean"].mean()) if not part.empty else float("nan")


def available(table: pd.DataFrame, datasets) -> list[str]:
    return [d for d in datasets if availability(table, d)[0] == "ok"]


def eps_values(table: pd.DataFrame) -> list[float]:
    e = table.loc[table["status"] == "ok", "epsilon"].dropna().astype(float)
    return sorted(set(e.round(12)))


def frac(bools) -> tuple[float, int]:
    b = [x for x in bools if x is not None]
    return (sum(b) / len(b) if b else float("nan")), len(b)


def gap_grid(table: pd.DataFrame, algorithm: str, group: str | None = None) -> pd.DataFrame:
    """Mean NICV − baseline per synthetic (K, D) of an algorithm (in one run group, if given)."""
    t = synthetic_grid(rows_of(table, algorithm, group))
    return t.groupby(["K", "D"])["gap"].mean().reset_index()


def trend(g: pd.DataFrame, var: str) -> float:
    """Spearman correlation between `var` (K or D) and the gap to the baseline."""
    if len(g) < 3 or g[var].nunique() < 2:
        return float("nan")
    return float(g[var].rank().corr(g["gap"].rank()))
