"""What several items of Su et al. (2016) share: the NICV table, its panels and heatmaps, and the
helpers of the claim checks.

NICV table (`aggregate_nicv`; Figures 1, 2, 3, 5, 6, 7): one row per (group, dataset, k, method, ε)
with the cell summary of NICV (`dpclust.pipeline.cells`: mean, std, n, min, interval, ...) and the
§5.1 baseline: the minimum NICV of non-private Lloyd (`BASELINE`) over
its runs (the 30 sets), per dataset and k, with `gap` = mean NICV − baseline and `ratio` = mean NICV
/ baseline. `method` is the paper's label of the run group and algorithm, from the item's
`table.labels` (``"group:algorithm"`` or ``"algorithm"`` keys; kept as the paper prints them, so the
tables stay byte-identical whatever `config/names.yaml` says). Rows of data that cannot be obtained
keep their status and reason, so renderers draw "data unavailable" panels and never substitute data.

Figures name algorithms and datasets from the display-name table (`dpclust.pipeline.itemkit.name`,
`dataset_name`); a heatmap panel is a `[group:]algorithm` selector, titled by the algorithm's name
plus the run group's `figure.variants` suffix (e.g. "θ=5"). Checks select rows by algorithm and run
group (never by label) and take every threshold from the item's `claims`.

Deciding claims (`dpclust.pipeline.verdicts`, the rubric of docs/VERDICTS.md): a claim is one
sentence of the paper over its cells (datasets, ε, k, ...), with the paper's quantifier ("every",
"most", "almost all"; each check quotes the sentence it reads it from). A comparison of two methods
in one cell is the Welch interval of the difference of their mean NICVs (`stats_of` gives each
row's (mean, sd, n)) divided by the comparator's mean (`verdicts.relative_cell`): a constant that moves no
decision but makes the rubric's null margin (±1 %; absolute 0.01 around a threshold of 0) 1 % of
the comparator. A linear combination of cell means (growth of a gap from d = 2 to d = 10, a
difference of growths) is a Welch–Satterthwaite interval (`verdicts.linear_ci`, `verdicts.linear_cell`), divided by
the (comparator) method's mean at the growth's low end. A cell made of several comparisons ("below
every other method") is their max or min (`verdicts.extreme_cell`). For runs that share initial sets
(DPLloyd: 30 sphere-packing sets × repetitions, §5.1) the sd and n are those of the per-set means
(`ci_sd`, `ci_n`): runs from one set are not independent; when all runs share ONE set (Figure 3's
'best known centroids') the interval is conditional on that set and uses the runs' own sd and
count. The baseline is a constant (the minimum over its runs), so it cancels or shifts intervals
but adds no width. A claim over every dataset with a planned dataset missing is not evaluable (n
of N datasets: `coverage`, `verdicts.every_dataset`). Our own readings of a sentence (a fraction of cells
where the paper says "always") are separate checks whose claim starts "alternative reading:"
(`share_check`) and never change the paper's verdict.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings

import numpy as np
import pandas as pd

from dpclust.pipeline import declared, verdicts
from dpclust.pipeline.aggregate import KEYS, Check
from dpclust.pipeline.cells import CELL_COLUMNS, cell_frame, cell_summary
from dpclust.pipeline.itemkit import availability, dataset_name, name
from dpclust.pipeline.plotting import (
    legend_entries,
    mark_unavailable,
    note_missing,
    panel_grid,
    panel_status,
    save_figure,
    style_for,
)
from dpclust.pipeline.sensitivity import label

#: The §5.1 baseline: "standard k-means algorithm over the same 30 sets of initial centroids",
#: minimum NICV among its runs.
BASELINE = "su2016.lloyd"
#: Style index of each algorithm (colour and marker stay the same in every figure).
STYLE_ORDER = ["su2016.dplloyd", "su2016.eugkm", "su2016.pgkm", "su2016.gkm", "su2016.gkm3k", "su2016.hybrid",
               "su2016.hybrid_forced", BASELINE]
COLUMNS = [*CELL_COLUMNS, "method", "d", "n_points", "baseline", "gap", "ratio", "wall_mean_s", "wall_median_s",
           "hybrid_applied", "baseline_sizes", "ci_sd", "ci_n", "wall_log_mean", "wall_log_sd", "wall_n",
           "cells_per_dim"]


# ---------------------------------------------------------------------------------------------
# aggregation
# ---------------------------------------------------------------------------------------------
def method_label(labels: dict, group: str, algorithm: str) -> str:
    """The paper's label of (run group, algorithm): `labels["group:algorithm"]`, else
    `labels[algorithm]`, else the algorithm id."""
    return labels.get(f"{group}:{algorithm}") or labels.get(algorithm) or algorithm


def baseline_sizes(records: list[dict], algorithms=(BASELINE,)) -> dict:
    """Sorted cluster sizes of the minimum-NICV run per (algorithm, dataset, k) of the non-private
    Lloyd algorithms `algorithms` (the §5.1 baseline; the many-restarts optimum)."""
    best: dict = {}
    for rec in records:
        if rec.get("algorithm") not in algorithms or rec.get("status") != "ok":
            continue
        for run in rec["runs"]:
            key = (rec["algorithm"], rec["dataset"], rec["k"])
            if key not in best or run["nicv"] < best[key][0]:
                best[key] = (run["nicv"], sorted(run.get("cluster_sizes") or [], reverse=True))
    return {key: " ".join(str(s) for s in sizes) for key, (_, sizes) in best.items()}


def _cluster_stats(ok: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per cell: the sd and number of the per-initial-set means (`ci_sd`, `ci_n`) when runs share
    initial sets (several runs per init_seed, several sets), else the runs' own sd and count."""
    ok = ok.assign(set_key=[f"i{i}" if i == i and i is not None else f"s{s}"
                            for i, s in zip(ok["init_seed"], ok["seed"])])   # no init_seed: its own set
    per_set = ok.groupby(keys + ["set_key"], dropna=False)["nicv"].agg(["mean", "size"]).reset_index()
    out = per_set.groupby(keys, dropna=False).agg(ci_sd=("mean", "std"), ci_n=("mean", "size"),
                                                  max_per_set=("size", "max")).reset_index()
    raw = ok.groupby(keys, dropna=False)["nicv"].agg(raw_sd="std", raw_n="size").reset_index()
    out = out.merge(raw, on=keys, how="left")
    # several runs per set, and several sets: the per-set means are the independent samples. With ONE
    # set (Figure 3's single 'best known centroids', init_sets 1) there is no between-set spread to
    # estimate; the claim is about that fixed set, so the runs' own sd and count are used (conditional
    # on the set) rather than an infinite interval from n = 1
    shared = (out["max_per_set"] > 1) & (out["ci_n"] > 1)
    out["ci_sd"] = out["ci_sd"].where(shared, out["raw_sd"])
    out["ci_n"] = out["ci_n"].where(shared, out["raw_n"])
    return out[keys + ["ci_sd", "ci_n"]]


def _wall_stats(ok: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per cell: mean and sd of log wall seconds over the warm runs (every run but the first of its
    job, which also pays one-off imports; all runs when a job has one run)."""
    t = ok.copy()
    t["first"] = t.groupby(keys + ["job"], dropna=False)["seed"].transform("min") == t["seed"]
    t["jobsize"] = t.groupby(keys + ["job"], dropna=False)["seed"].transform("size")
    warm = t[~t["first"] | (t["jobsize"] == 1)].copy()
    warm["logw"] = np.log(warm["wall_time_s"].astype(float).clip(lower=1e-9))
    return (warm.groupby(keys, dropna=False)["logw"].agg(wall_log_mean="mean", wall_log_sd="std", wall_n="size")
            .reset_index())


def aggregate_nicv(records, item, ctx=None) -> pd.DataFrame:
    """The cell summary of NICV (`cells.cell_summary`) per (group, dataset, algorithm, k, ε), with the
    paper's method label, the §5.1 baseline (min over the Lloyd runs) and each cell's gap and ratio to
    it, the sd and n of its initial sets (`_cluster_stats`), its wall times, the hybrid's split rate
    and EUGkM's grid."""
    options = item.get("table") or {}
    labels = options.get("labels") or {}
    size_algorithms = tuple(options.get("size_algorithms") or (BASELINE,))
    df = cell_frame(records, "nicv", ["hybrid_applied", "cells_per_dim"])
    table = cell_summary(records, "nicv", frame=df)
    if table.empty:
        return pd.DataFrame(columns=COLUMNS)
    table["method"] = [method_label(labels, g, a) for g, a in zip(table["group"], table["algorithm"])]
    # the record (job) of every row, in runs_frame's order: one row per run, one per failed record
    df["job"] = [j for j, rec in enumerate(records)
                 for _ in (rec["runs"] if rec.get("status", "ok") == "ok" else [None])]
    ok = df[df["status"] == "ok"].copy()
    if not ok.empty:
        extra = (ok.groupby(KEYS, dropna=False)
                 .agg(wall_mean_s=("wall_time_s", "mean"), wall_median_s=("wall_time_s", "median"),
                      hybrid_applied=("hybrid_applied", "mean"), cells_per_dim=("cells_per_dim", "mean"))
                 .reset_index())
        extra = extra.merge(_cluster_stats(ok, KEYS), on=KEYS, how="left").merge(_wall_stats(ok, KEYS), on=KEYS,
                                                                                   how="left")
        table = table.merge(extra, on=KEYS, how="left")
    table = table.reindex(columns=COLUMNS)
    base = table[(table["algorithm"] == BASELINE) & (table["status"] == "ok")]
    table["baseline"] = table.merge(base.groupby(["dataset", "k"])["min"].min().rename("b").reset_index(),
                                    on=["dataset", "k"], how="left")["b"].to_numpy()
    table["gap"] = table["mean"] - table["baseline"]
    table["ratio"] = table["mean"] / table["baseline"]
    sizes = baseline_sizes(records, size_algorithms)
    table["baseline_sizes"] = [sizes.get((a, d, k), "")
                               for d, k, a in zip(table["dataset"], table["k"], table["algorithm"])]
    meta = {r["dataset"]: (r.get("d"), r.get("n")) for r in records if r.get("status") == "ok"}
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
    """A panel without data: "not run in this preset", "data unavailable" or "refused" (with why)."""
    if status == "absent":
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "not run in this preset", ha="center", va="center", transform=ax.transAxes,
                fontsize=8, color="0.3")
    else:
        mark_unavailable(ax, title, reason, status)


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
            log_band(ax, line["epsilon"], line["mean"], line["std"], name(item, alg), **style_of(alg, i))
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
        note_missing(ax, table[(table["dataset"] == ds) & table["algorithm"].isin([*lines, BASELINE])], item)
    handles, labels = legend_entries(axes)
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 7), bbox_to_anchor=(0.5, -0.02))
    tight(fig, rect=(0, 0.05, 1, 1))
    save_figure(fig, stem)


def log_band(ax, x, mean, sd, label, **style) -> None:
    """A line of means with a ± sd band on a log y axis (the lower edge clipped at mean/10, where
    mean − sd would be ≤ 0)."""
    x, mean = np.asarray(x, dtype=float), np.asarray(mean, dtype=float)
    sd = np.nan_to_num(np.asarray(sd, dtype=float), nan=0.0)
    line, = ax.plot(x, mean, label=label, **style)
    if len(x) > 1 and np.any(sd > 0):
        ax.fill_between(x, np.maximum(mean - sd, mean / 10), mean + sd, color=line.get_color(), alpha=0.15,
                        linewidth=0)
    elif len(x) == 1 and sd[0] > 0:
        ax.errorbar(x, mean, yerr=[[min(sd[0], 0.9 * mean[0])], [sd[0]]], color=line.get_color(), capsize=2)


def synthetic_grid(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows of the synthetic datasets with their K and D (from the names su_synth_k{K}_d{D})."""
    t = rows.copy()
    t["K"] = t["dataset"].str.extract(r"_k(\d+)_")[0].astype(float)
    t["D"] = t["dataset"].str.extract(r"_d(\d+)$")[0].astype(float)
    return t


def heatmaps(table: pd.DataFrame, item: dict, stem: str) -> None:
    """One k × d heatmap of NICV − baseline per `figure.panels` selector, each with its own colour
    scale (the methods differ by orders of magnitude; a shared scale would hide all but the worst),
    or one scale for all panels with `figure.shared_scale` (methods of one magnitude, compared
    cell by cell: Figure 6)."""
    figure = item.get("figure") or {}
    panels, variants = figure["panels"], figure.get("variants") or {}
    grids = {}
    for selector in panels:
        group, alg = split_selector(selector)
        part = synthetic_grid(rows_of(table, alg, group))
        if not part.empty:
            grid = part.pivot_table(index="K", columns="D", values="gap", aggfunc="mean")
            grids[selector] = (part, grid.reindex(index=range(2, 11), columns=range(2, 11)))
    scale = {}
    if figure.get("shared_scale") and grids:
        values = np.concatenate([g.to_numpy().ravel() for _, g in grids.values()])
        if np.isfinite(values).any():
            scale = {"vmin": float(np.nanmin(values)), "vmax": float(np.nanmax(values))}
    reference = figure.get("same_grid_as")     # mark cells whose EUGkM grid equals this group's
    ref_grid = {}
    if reference:
        for r in rows_of(table, "su2016.eugkm", reference).itertuples(index=False):
            ref_grid[r.dataset] = r.cells_per_dim
    fig, axes = panel_grid(len(panels), ncols=4, panel_size=(3.4, 2.9))
    any_ok = table["status"].eq("ok").any()
    for ax, selector in zip(axes, panels):
        group, alg = split_selector(selector)
        title = variant_name(item, alg, group, variants)
        mine = table[(table["algorithm"] == alg) & ((table["group"] == group) if group else True)]
        if selector not in grids:
            if (mine["status"] == "refused").any():
                mark_panel(ax, title, *panel_status(mine[mine["status"] == "refused"]))
            elif any_ok:
                mark_panel(ax, title, "absent", "")
            else:
                status, reason = panel_status(table)
                mark_unavailable(ax, title, reason, status)
            continue
        part, grid = grids[selector]
        im = ax.imshow(grid.to_numpy(), origin="lower", cmap="viridis", extent=(1.5, 10.5, 1.5, 10.5),
                       aspect="auto", **scale)
        fig.colorbar(im, ax=ax, shrink=0.85, label="NICV − baseline")
        if reference and group and group != reference and alg == "su2016.eugkm":
            dup = [(r.K, r.D) for r in part.itertuples(index=False)
                   if r.dataset in ref_grid and r.cells_per_dim == ref_grid[r.dataset]]
            for K, D in dup:
                ax.text(D, K, "=", ha="center", va="center", fontsize=8, color="white", fontweight="bold")
            if dup:
                title += f" ('=': same grid as {variants.get(reference, reference)})"
        refused = synthetic_grid(mine[mine["status"] == "refused"])
        for K, D in zip(refused["K"], refused["D"]):
            ax.text(D, K, "×", ha="center", va="center", fontsize=8, color="C3", fontweight="bold")
        if len(refused):
            title += " (×: refused)"
        ax.set_title(title, fontsize=9)
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
        return [dataclasses.replace(c, holds=None if c.holds is None else bool(c.holds)) for c in out]
    return wrapper


def cell(table: pd.DataFrame, ds: str, algorithm: str, eps: float, group: str | None = None) -> float:
    """Mean NICV of an algorithm on a dataset at ε (NaN if absent)."""
    part = rows_of(table, algorithm, group)
    part = part[(part["dataset"] == ds) & np.isclose(part["epsilon"].astype(float), eps)]
    return float(part["mean"].mean()) if not part.empty else float("nan")


def available(table: pd.DataFrame, datasets) -> list[str]:
    return [d for d in datasets if availability(table, d)[0] == "ok"]


def eps_values(table: pd.DataFrame) -> list[float]:
    e = table.loc[table["status"] == "ok", "epsilon"].dropna().astype(float)
    return sorted(set(e.round(12)))


def frac(bools) -> tuple[float, int]:
    b = [x for x in bools if x is not None]
    return (sum(b) / len(b) if b else float("nan")), len(b)






# ---------------------------------------------------------------------------------------------
# deciding claims with the engine (dpclust.pipeline.verdicts, docs/VERDICTS.md)
# ---------------------------------------------------------------------------------------------
def row_of(table: pd.DataFrame, ds: str, algorithm: str, eps: float | None = None, group: str | None = None):
    """The available row of an algorithm on a dataset (at ε; in one run group if given), or None."""
    part = rows_of(table, algorithm, group)
    part = part[part["dataset"] == ds]
    if eps is not None:
        part = part[np.isclose(part["epsilon"].astype(float), float(eps))]
    return None if part.empty else part.iloc[0]


def stats_of(row) -> tuple[float, float, int] | None:
    """(mean NICV, sd, n) of a table row for intervals: the per-initial-set sd and count when the
    row's runs share initial sets (`ci_sd`, `ci_n`), else the runs' own."""
    if row is None:
        return None
    sd = row.get("ci_sd") if "ci_sd" in row and row.get("ci_sd") == row.get("ci_sd") else row.get("std")
    n = row.get("ci_n") if "ci_n" in row and row.get("ci_n") == row.get("ci_n") else row.get("n")
    return float(row["mean"]), float(sd) if sd == sd and sd is not None else float("nan"), int(n)


def cell_stats(table, ds, algorithm, eps=None, group=None):
    return stats_of(row_of(table, ds, algorithm, eps, group))




def coverage(table: pd.DataFrame, datasets) -> tuple[list[str], dict[str, str]]:
    """(the claim's datasets this run planned, those of them missing: {dataset: reason}). A
    dataset is missing when it was planned but its data could not be had (data unavailable); one
    the preset does not run is not part of the claim at this preset."""
    planned, missing = [], {}
    for ds in datasets:
        status, reason = availability(table, ds)
        if status == "absent":
            continue
        planned.append(ds)
        if status == "data_unavailable":
            missing[ds] = reason
    return planned, missing


def over_datasets(check: Check, table: pd.DataFrame, item: dict, datasets) -> Check:
    """`verdicts.every_dataset` for a claim over `datasets` (those of the item's panels this run planned):
    not evaluable (n of N) when one of them is missing."""
    panels = (item.get("options") or {}).get("panels") or []
    planned, missing = coverage(table, panels)
    sub = [d for d in planned if d in datasets]
    return verdicts.every_dataset(check, sub, {d: r for d, r in missing.items() if d in sub},
                                  {ds: dataset_name(item, ds) for ds in panels})


def nicv_source(table: pd.DataFrame, item: dict, cell_text: str = "", note=None) -> declared.Source:
    """The cells of the NICV table for the declared claims (`dpclust.pipeline.declared`): the item's
    panels, the ε grid, (mean NICV, sd, n) per (dataset, algorithm, ε) (`cell_stats`)."""
    panels = (item.get("options") or {}).get("panels") or []
    planned, missing = coverage(table, panels)
    extra = {"note": note} if note else {}
    return declared.Source(available=available(table, panels), planned=planned, missing=missing,
                           points=eps_values(table), stats=lambda ds, alg, e: cell_stats(table, ds, alg, e),
                           names={ds: dataset_name(item, ds) for ds in panels}, cell_text=cell_text, **extra)


def sweep_label(setting: str, results) -> str:
    """How a claim's verdict depends on a setting it was decided over (docs/VERDICTS.md "tuned"), from
    (value text, Check) pairs, one per value of the setting that ran: `dpclust.pipeline.sensitivity.label`."""
    return label(setting, [(value, check.result) for value, check in results])


def with_setting(check: Check, label: str, summary: str = "", rule: str = "") -> Check:
    """A check with a `sweep_label` appended to its detail (after `summary`, each value's verdict), its
    `sensitivity` and, when it does not hold, its `why`, and a note on the value it was decided at
    appended to its rule."""
    why = f"{check.why}; {label}" if check.holds is False and check.why else check.why
    text = f"{summary} — {label}" if summary else label
    return dataclasses.replace(check, detail=f"{check.detail}; {text}" if check.detail else text, why=why,
                               sensitivity=f"{check.sensitivity}; {label}" if check.sensitivity else label,
                               rule=f"{check.rule}; {rule}" if rule and check.rule else (rule or check.rule))






def synthetic_name(fixed: str, value: int, varied: int) -> str:
    """The synthetic dataset at `fixed` ("k" or "d") = value and the other parameter = varied."""
    return f"su_synth_k{value}_d{varied}" if fixed == "k" else f"su_synth_k{varied}_d{value}"


def gap_growth(table, algorithm, fixed: str, value: int, lo: int, hi: int, group=None):
    """Growth of an algorithm's gap to the baseline from `lo` to `hi` of the varied parameter (d if
    `fixed` is "k", k if "d") at the fixed value: (mean_hi − base_hi) − (mean_lo − base_lo), as
    (terms, shift) for `linear_ci` (the baselines are constants), or None without both cells.
    The low end's (mean, sd, n) is `terms[1][1]` (the reference of a relative growth)."""
    r_hi, r_lo = (row_of(table, synthetic_name(fixed, value, v), algorithm, None, group) for v in (hi, lo))
    if r_hi is None or r_lo is None:
        return None
    shift = -(float(r_hi["baseline"]) - float(r_lo["baseline"]))
    return [(1.0, stats_of(r_hi)), (-1.0, stats_of(r_lo))], shift
