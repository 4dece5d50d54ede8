"""What Figures 2 and 3 of Cohen-Addad et al. 2022 share: the normalised k-median cost table, its
figure (one column per dataset, one row per private ε, plus a row of cost ratios to a named baseline
across ε), and the claim helpers that decide ratios of mean costs with intervals.

Normalisation (STATED §6 "normalized by the best clustering objective"): at each (dataset, k) every
cell's mean k-median cost is divided by the *best objective found*, the lowest cost of any single run
of any method at that (dataset, k), over every ε, the non-private methods included (kmed++ and the
converged reference `cohenaddad2022.kmedian_ref`, see `dpclust.cohenaddad2022.reference`). The best
method therefore has a ratio slightly above 1, and the ratios of different ε rows share one scale.

Claims are decided by the claims engine (`dpclust.pipeline.verdicts`, rubric docs/VERDICTS.md): one
verdict per sentence of the paper, over its cells (method × dataset × ε × k), each cell a ratio of
mean costs with its delta-method interval (`claims.ratio_ci`) at any level. The paper's ε is lost in
the extracted text, so a sentence's cells range over our ε grid; the detail tabulates the verdict per
ε ("holds at ε ∈ {1, 2}; fails at ε ∈ {0.1, 0.25}"), and a sentence that holds at some ε and fails
at others says "depends on a lost parameter: ε". The table carries each cell's non-empty clusters
(`nonempty`, `nonempty_min`, from the runs' cluster sizes) for the rubric's degenerate guard.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpclust.pipeline import declared, verdicts
from dpclust.pipeline.aggregate import KEYS, Check
from dpclust.pipeline.cells import CELL_COLUMNS, cell_frame, cell_summary
from dpclust.pipeline.claims import Interval, ratio_ci
from dpclust.pipeline.itemkit import (
    DP_OR_UNDECLARED,
    availability,
    dataset_name,
    labelled_name,
    runs_note,
    short_reason,
    table_guarantee,
)
from dpclust.pipeline.itemkit import name as _registry_name
from dpclust.pipeline.plotting import mark_unavailable, mean_sd_line, panel_grid, save_figure, style_for

COLUMNS = [*CELL_COLUMNS, "best", "ratio", "ratio_sd", "eps_exact"]


def name(item, algorithm: str) -> str:
    """Display name: config/names.yaml, else the item's `options.display_names` (for names not yet in
    the shared table), else the id."""
    found = _registry_name(item, algorithm)
    if found != algorithm:
        return found
    return ((item.get("options") or {}).get("display_names") or {}).get(algorithm, algorithm)


# ---------------------------------------------------------------------------------------------
# table
# ---------------------------------------------------------------------------------------------
def aggregate_normalised(records, item, ctx) -> pd.DataFrame:
    """The cell summary of the k-median cost (`cells.cell_summary`) per (dataset, algorithm, k, ε)
    with `best` = the lowest single-run cost of any method at (dataset, k), `ratio` = mean / best and
    `ratio_sd` = std / best, and `eps_exact`: every run of the cell spent its ε within the relative
    tolerance `table.spent_rel_tol`."""
    rel_tol = float(item["table"]["spent_rel_tol"])
    t = cell_summary(records, "cost_kmedian")
    best = t[t["status"] == "ok"].groupby(["dataset", "k"])["min"].min().rename("best").reset_index()
    t = t.merge(best, on=["dataset", "k"], how="left")
    t["ratio"] = t["mean"] / t["best"]
    t["ratio_sd"] = t["std"] / t["best"]
    runs = cell_frame(records, "cost_kmedian")
    private = runs[(runs["status"] == "ok") & runs["epsilon"].notna()]
    exact = (private.assign(eps_exact=np.isclose(private["epsilon_spent"], private["epsilon"], rtol=rel_tol))
             .groupby(KEYS, dropna=False)["eps_exact"].all().reset_index())
    t = t.merge(exact, on=KEYS, how="left")
    return t.sort_values(["dataset", "algorithm", "k", "epsilon"], na_position="first").reset_index(drop=True)[COLUMNS]


# ---------------------------------------------------------------------------------------------
# cells and intervals
# ---------------------------------------------------------------------------------------------
def _ok(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["status"] == "ok"] if not table.empty else table


def private_epsilons(table: pd.DataFrame, dataset: str | None = None) -> list[float]:
    """The ε values of the private cells (of `dataset`), sorted."""
    t = _ok(table)
    if dataset is not None:
        t = t[t["dataset"] == dataset]
    return sorted(float(e) for e in t["epsilon"].dropna().unique())


def cell(table: pd.DataFrame, dataset: str, algorithm: str, k, epsilon) -> tuple[float, float, int] | None:
    """(mean, sd, n) of one cell; `epsilon` None for a non-private method (its cells have no ε)."""
    t = _ok(table)
    t = t[(t["dataset"] == dataset) & (t["algorithm"] == algorithm) & (t["k"] == k)]
    t = t[t["epsilon"].isna()] if epsilon is None else t[np.isclose(t["epsilon"].astype(float), float(epsilon))]
    if t.empty:
        return None
    row = t.iloc[0]
    sd = float(row["std"]) if pd.notna(row["std"]) else float("nan")
    return float(row["mean"]), sd, int(row["n"])


def is_private(table: pd.DataFrame, algorithm: str) -> bool:
    t = _ok(table)
    return bool(t.loc[t["algorithm"] == algorithm, "epsilon"].notna().any())


def ks(table: pd.DataFrame, dataset: str, algorithm: str) -> list:
    t = _ok(table)
    return sorted(t.loc[(t["dataset"] == dataset) & (t["algorithm"] == algorithm), "k"].unique())


def ratio_interval(table: pd.DataFrame, dataset: str, a: str, b: str, k, epsilon) -> Interval | None:
    """95 % interval of mean cost of `a` / mean cost of `b` at (dataset, k), both at `epsilon` (a
    non-private `b` is read without ε); None when a cell is missing."""
    A = cell(table, dataset, a, k, epsilon)
    B = cell(table, dataset, b, k, epsilon if is_private(table, b) else None)
    if A is None or B is None:
        return None
    return ratio_ci(A, B)


def best_nonprivate(table: pd.DataFrame, dataset: str, k, nonprivate: list[str]) -> tuple[str, float] | None:
    """(algorithm, mean) of the non-private method with the lowest mean cost at (dataset, k)."""
    found = [(alg, c[0]) for alg in nonprivate if (c := cell(table, dataset, alg, k, None)) is not None]
    return min(found, key=lambda x: x[1]) if found else None




def why_not_evaluable(table: pd.DataFrame, dataset: str) -> str:
    """Why a claim on `dataset` cannot be evaluated: not run, data unavailable, or no common runs."""
    status, reason = availability(table, dataset)
    if status == "absent":
        return "not run in this preset"
    if status == "data_unavailable":
        return f"data unavailable ({short_reason(reason)})"
    if status == "refused":
        return f"refused ({reason})"
    return "no common k"


def reasons_text(item, missing: dict[str, str]) -> str:
    """"<dataset>: <why>; ..." of the datasets a claim cannot be evaluated on (`available_datasets`)."""
    return "; ".join(f"{dataset_name(item, ds)}: {why}" for ds, why in missing.items())


# ---------------------------------------------------------------------------------------------
# deciding a sentence over its cells (the claims engine)
# ---------------------------------------------------------------------------------------------
def _fmt_eps(eps: float) -> str:
    return f"{eps:g}"


def _eps_set(values) -> str:
    return "{" + ", ".join(_fmt_eps(e) for e in values) + "}"


def nonempty_low(table: pd.DataFrame, dataset: str, algorithm: str, k, epsilon) -> float | None:
    """The fewest non-empty clusters of any run of the cell (None when the table records none)."""
    if "nonempty_min" not in table:
        return None
    t = _ok(table)
    t = t[(t["dataset"] == dataset) & (t["algorithm"] == algorithm) & (t["k"] == k)]
    t = t[t["epsilon"].isna()] if epsilon is None else t[np.isclose(t["epsilon"].astype(float), float(epsilon))]
    v = t["nonempty_min"].dropna() if not t.empty else []
    return float(v.iloc[0]) if len(v) else None


def guard_degenerate(cell: verdicts.Cell, low: float | None, k) -> verdicts.Cell:
    """The rubric's degenerate guard (`verdicts.degenerate_cell`) when the cell's fewest non-empty clusters
    `low` (in any run) is below k/2; the cell itself otherwise."""
    return verdicts.degenerate_cell(cell, low, k) if verdicts.degenerate(low, k) else cell


@dataclass(frozen=True)
class Entry:
    """One cell of a sentence: where it is (dataset, method, ε, k) and its engine cell."""

    dataset: str
    who: str
    eps: float | None
    k: object
    cell: verdicts.Cell


def per_epsilon(entries: Sequence[Entry], states: Sequence[str]) -> tuple[list, list, list]:
    """(ε where every cell holds, ε where a cell fails, the other ε), from the cells' states."""
    by: dict = {}
    for e, st in zip(entries, states):
        by.setdefault(e.eps, []).append(st)
    held = [eps for eps, sts in sorted(by.items()) if all(st == verdicts.HOLDS for st in sts)]
    failed = [eps for eps, sts in sorted(by.items()) if any(st == verdicts.FAILS for st in sts)]
    other = [eps for eps in sorted(by) if eps not in held and eps not in failed]
    return held, failed, other


def epsilon_table(held, failed, other) -> str:
    """'holds at ε ∈ {1, 2}; fails at ε ∈ {0.1, 0.25}; undecided at ε ∈ {0.5}' (per ε of the grid)."""
    parts = [f"{word} at ε ∈ {_eps_set(values)}"
             for word, values in (("holds", held), ("fails", failed), ("undecided", other)) if values]
    return "per ε: " + "; ".join(parts) if parts else ""


def sentence_check(claim: str, entries: Sequence[Entry], test, quantifier: str, detail: str = "",
                   why: str = "", wanted: Sequence[str] = (), missing: Mapping[str, str] | None = None,
                   absent_reason: str = "", item=None) -> Check:
    """One verdict for one sentence of the paper over its cells (`entries`), by the engine. The detail
    tabulates the verdict per ε; a sentence that does not hold says why: "depends on a lost parameter:
    ε" when it holds at some ε of the grid and fails at others, else "genuine" with the failing cells'
    intervals (`why` is prepended). With datasets of the sentence missing (`missing` of `wanted`) it is
    not evaluable (n of N datasets), the verdict on the available ones in the detail (docs/VERDICTS.md)."""
    if not entries:
        return Check(claim, None, absent_reason or "no cell available", cells=0, rule="no cell")
    with verdicts.deciding(claim):   # the cells earlier replication looks settled keep their verdicts
        return _sentence_check(claim, entries, test, quantifier, detail, why, wanted, missing, item)


def _sentence_check(claim, entries, test, quantifier, detail, why, wanted, missing, item) -> Check:
    cs = [e.cell for e in entries]
    v = verdicts.judge(cs, test, quantifier)
    st = [c.state for c in v.cells]
    held, failed, other = per_epsilon(entries, st)
    eps_known = any(e.eps is not None for e in entries)
    table = epsilon_table(held, failed, other) if eps_known else ""
    groups = list(dict.fromkeys((e.dataset, e.who) for e in entries))
    if eps_known and len(groups) > 1:   # the same table per (dataset, method) of the sentence
        parts = []
        for ds, who in groups:
            sub = [(e, x) for e, x in zip(entries, st) if (e.dataset, e.who) == (ds, who)]
            label = f"{dataset_name(item, ds)} {name(item, who)}" if item is not None else f"{ds}/{who}"
            parts.append(f"{label} " + epsilon_table(*per_epsilon([e for e, _ in sub], [x for _, x in sub]))
                         .removeprefix("per ε: "))
        table += " (" + " | ".join(parts) + ")"
    fails = [f"{c.label}: {c.interval}" for c in v.cells if c.state == verdicts.FAILS]
    evidence = "; ".join(fails[:8]) + (" …" if len(fails) > 8 else "")
    if eps_known and held and failed:
        reason = (f"depends on a lost parameter: ε (holds at ε ∈ {_eps_set(held)}, not at ε ∈ {_eps_set(failed)}; "
                  f"the paper's ε is lost in the extracted text); failing cells: {evidence}")
    elif eps_known and len(failed) == len({e.eps for e in entries}):
        reason = f"genuine at every ε tried ({', '.join(_fmt_eps(x) for x in sorted(failed))}): {evidence}"
    elif eps_known:
        reason = (f"genuine at ε ∈ {_eps_set(failed)} (no ε of the grid holds; the others are undecided): "
                  f"{evidence}")
    else:
        reason = f"genuine: {evidence}"
    chk = verdicts.check(claim, cs, test, quantifier, why=(why + "; " if why else "") + reason)
    chk.detail = "; ".join(x for x in (table, detail, "cells: " + chk.detail) if x)   # the per-ε table first
    names = {ds: dataset_name(item, ds) for ds in wanted} if item is not None else None
    return verdicts.every_dataset(chk, wanted, missing or {}, names)


def claim_source(table: pd.DataFrame, item) -> declared.Source:
    """The table's cells for the declared sentences (`dpclust.pipeline.declared`): dataset × (ε, k), a
    non-private method read without ε; every dataset a sentence names is planned (one not run, or
    without data, is missing: `why_not_evaluable`); a sentence naming a method that is not DP is
    refused (`refused_roles`); its verdict is written as `sentence_check` writes it (the per-ε table)."""
    claims = item["claims"]
    named = []
    for key in ("beat_datasets", "factor_datasets", "close_dataset", "strongest_dataset", "comparable_dataset"):
        value = claims.get(key)
        named += [] if value is None else [value] if isinstance(value, str) else list(value)
    named = list(dict.fromkeys(named))
    ok, missing = available_datasets(table, item, named)
    t = _ok(table)
    points = sorted({(float(e), k) for e, k in zip(t["epsilon"], t["k"]) if pd.notna(e)})

    def stats(ds, alg, point):
        eps, k = point
        return cell(table, ds, alg, k, eps if is_private(table, alg) else None)

    def refuse(compare, against, claim):
        why = refused_roles(table, item, (*compare, *against))
        return Check(claim, None, why, cells=0, rule="refused: claims compare DP methods only") if why else None

    def sentence(claim, cells, where, test, quantifier, why="", detail=""):
        entries = [Entry(ds, alg, point[0], point[1], c) for (ds, alg, point), c in zip(where, cells)]
        return sentence_check(claim, entries, test, quantifier, detail=detail, why=why, item=item)

    return declared.Source(available=ok, planned=named, missing=missing, points=points, stats=stats,
                           names={ds: dataset_name(item, ds) for ds in named}, cell_text="",
                           cell_label=lambda ds, p: f"ε={_fmt_eps(p[0])} k={p[1]}", refuse=refuse, sentence=sentence,
                           axis=("epsilon", "k"))


def available_datasets(table: pd.DataFrame, item, datasets: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """(the datasets with successful runs, {each other dataset: why it cannot be evaluated})."""
    ok = [ds for ds in datasets if availability(table, ds)[0] == "ok"]
    return ok, {ds: why_not_evaluable(table, ds) for ds in datasets if ds not in ok}


def refused_roles(table: pd.DataFrame, item, roles: Sequence[str]) -> str:
    """'' unless a role's records declare it not DP: then why the sentence cannot compare it."""
    not_dp = [alg for alg in roles if table_guarantee(table, alg) not in DP_OR_UNDECLARED]
    if not not_dp:
        return ""
    return (f"{', '.join(name(item, x) for x in not_dp)}: {table_guarantee(table, not_dp[0])}, "
            "not compared with private methods")


def ratio_entries(table: pd.DataFrame, item, datasets: Sequence[str], pairs: Sequence[tuple[str, str]],
                  guard: bool = False) -> tuple[list[Entry], list[str]]:
    """The cells mean cost of a / mean cost of b for every (a, b) of `pairs`, dataset, private ε of a
    and k (b read at the same ε, or without ε if non-private); with `guard`, a cell where a or b is
    degenerate never holds. Returns the entries and the degenerate cells' labels."""
    out, degenerate = [], []
    for ds in datasets:
        for a, b in pairs:
            for eps in private_epsilons(table[table["algorithm"] == a], ds):
                for k in ks(table, ds, a):
                    A = cell(table, ds, a, k, eps)
                    B = cell(table, ds, b, k, eps if is_private(table, b) else None)
                    if A is None or B is None:
                        continue
                    label = f"{dataset_name(item, ds)} {name(item, a)}/{name(item, b)} ε={_fmt_eps(eps)} k={k}"
                    c = verdicts.ratio_cell(label, A, B)
                    if guard:
                        for alg, e in ((a, eps), (b, eps if is_private(table, b) else None)):
                            guarded = guard_degenerate(c, nonempty_low(table, ds, alg, k, e), k)
                            if guarded is not c:
                                degenerate.append(c.label)
                                c = guarded
                                break
                    out.append(Entry(ds, a, eps, k, c))
    return out, degenerate


def degenerate_text(table: pd.DataFrame, degenerate: Sequence[str]) -> str:
    """The detail's sentence on the degenerate guard."""
    if "nonempty_min" not in table or table["nonempty_min"].dropna().empty:
        return "degenerate guard not applied: the table records no non-empty clusters (re-aggregate the runs)"
    if not degenerate:
        return "no degenerate cell (every run keeps at least k/2 non-empty clusters)"
    return ("degenerate (fewer than k/2 non-empty clusters in some run, docs/VERDICTS.md: never holds — not evaluable "
            "as a comparison — but fails where even its interval's far end is past the threshold): "
            + ", ".join(degenerate[:6]) + (" …" if len(degenerate) > 6 else ""))


def spent_cells(table: pd.DataFrame) -> Check:
    """Every private (dataset, method, k, ε) cell spent exactly its ε (column `eps_exact`): one exact
    cell per row (1 = exact), every cell (bookkeeping: our own check, never a paper's claim)."""
    claim = "each private run spends exactly its epsilon setting"
    rows = table[table["eps_exact"].notna()] if "eps_exact" in table else table.iloc[0:0]
    cells = [(f"{r.dataset}/{r.algorithm}/k={r.k}/ε={_fmt_eps(float(r.epsilon))}", 0.0 if bool(r.eps_exact) else 1.0)
             for r in rows.itertuples()]
    return verdicts.exact_spend(claim, cells, 0.0, detail=f"{len(rows)} (dataset, method, k, ε) cells; 0 = every run "
                                "spent its ε (the aggregate's tolerance), 1 = some run did not"
                                if cells else "0 (dataset, method, k, ε) cells")


# ---------------------------------------------------------------------------------------------
# figure
# ---------------------------------------------------------------------------------------------
def _planned(item, key: str) -> list[str]:
    """Datasets or algorithms of the runs planned under the preset (render spec `runs`), in order."""
    out: list[str] = []
    for group in (item.get("runs") or {}).values():
        for value in group[key]:
            if value not in out:
                out.append(value)
    return out


def _plain_ticks(axis) -> None:
    """Plain numbers (0.5, 1, 2) on a log axis instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.1g}"[0] in "235" else ""))


def render_normalised(table: pd.DataFrame, item, stem) -> None:
    """Columns: the planned datasets. Rows: one per private ε (mean cost / best objective found vs k,
    ± sd bars; non-private methods dashed, the same in every row), then, if `figure.versus` names a
    baseline, a row of `figure.versus_methods`' mean cost / the baseline's vs ε with 95 % intervals
    (one line per k; 1 = as good as the baseline). Unavailable datasets are "data unavailable"."""
    fig_opts = item["figure"]
    datasets = _planned(item, "datasets") or sorted(table["dataset"].dropna().unique())
    ok = _ok(table)
    eps_rows = private_epsilons(table) or [None]
    versus = fig_opts.get("versus")
    vs_methods = [m for m in fig_opts.get("versus_methods") or [] if m in set(ok["algorithm"])]
    show_versus = bool(versus and vs_methods and versus in set(ok["algorithm"]) and len(eps_rows) >= 1
                       and eps_rows != [None])
    nrows = len(eps_rows) + int(show_versus)
    ncols = len(datasets)
    fig, axes = panel_grid(nrows * ncols, ncols=ncols, panel_size=(4.4, 2.9))
    grid = [axes[r * ncols:(r + 1) * ncols] for r in range(nrows)]
    ran = set(ok["algorithm"])
    order = list(fig_opts["methods"])
    algs = [a for a in order if a in ran] + sorted(ran - set(order))
    styles = {a: style_for(a, i) for i, a in enumerate(algs)}
    handles: dict[str, object] = {}
    for r, eps in enumerate(eps_rows):
        for c, ds in enumerate(datasets):
            ax = grid[r][c]
            title = f"({'abcdefgh'[c]}) {dataset_name(item, ds)}" + (f", ε = {eps:g}" if eps is not None else "")
            sub = ok[ok["dataset"] == ds]
            if sub.empty:
                status, reason = availability(table, ds)
                mark_unavailable(ax, title, reason, status)
                continue
            for alg in algs:
                s = sub[sub["algorithm"] == alg]
                private = s["epsilon"].notna().any()
                s = s[np.isclose(s["epsilon"].astype(float), eps)] if (private and eps is not None) else s
                s = s.sort_values("k")
                if s.empty:
                    continue
                style = dict(styles[alg], markersize=4)
                if not private:
                    style.update(linestyle="--", markerfacecolor="none")
                mean_sd_line(ax, s["k"], s["ratio"], s["ratio_sd"], label=labelled_name(item, table, alg), **style)
            ax.set_title(title)
            ax.set_xlabel("k")
            ax.set_ylabel("k-median cost / best found")
            ax.set_yscale("log")
            _plain_ticks(ax.yaxis)
            ax.grid(alpha=0.3)
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
    if show_versus:
        r = len(eps_rows)
        for c, ds in enumerate(datasets):
            ax = grid[r][c]
            title = f"({'abcdefgh'[c]}) {dataset_name(item, ds)}: cost / {name(item, versus)}"
            if ok[ok["dataset"] == ds].empty:
                status, reason = availability(table, ds)
                mark_unavailable(ax, title, reason, status)
                continue
            ax.axhline(1.0, color="0.4", linewidth=0.8)
            eps_all = private_epsilons(table, ds)
            for j, alg in enumerate(vs_methods):
                k_list = ks(table, ds, alg)
                for m, k in enumerate(k_list):
                    pts = [(e, ratio_interval(table, ds, alg, versus, k, e)) for e in eps_all]
                    pts = [(e, iv) for e, iv in pts
                           if iv is not None and math.isfinite(iv.low) and math.isfinite(iv.high)]
                    if not pts:
                        continue
                    x = np.array([e for e, _ in pts]) * (1 + 0.04 * (m - (len(k_list) - 1) / 2) + 0.12 * j)
                    y = np.array([iv.estimate for _, iv in pts])
                    err = np.array([[iv.estimate - iv.low for _, iv in pts], [iv.high - iv.estimate for _, iv in pts]])
                    ax.errorbar(x, y, yerr=err, capsize=2, elinewidth=0.8, markersize=4, linewidth=0.9,
                                linestyle=["-", ":", "-.", "--"][m % 4], color=styles[alg]["color"],
                                marker=styles[alg]["marker"])
            ax.set_xscale("log")
            ax.set_xticks(eps_all)
            _plain_ticks(ax.xaxis)
            ax.set_title(title, fontsize=9)
            k_all = ks(table, ds, vs_methods[0])
            ax.set_xlabel("ε (log scale); one line per k: " + (
                ", ".join(f"{ls} k = {k}" for ls, k in zip(["solid", "dotted", "dash-dot", "dashed"], k_all))
                if len(k_all) <= 4 else f"k ∈ {{{', '.join(map(str, k_all))}}}"), fontsize=8)
            ax.set_ylabel("mean cost ratio (95 % CI)")
            ax.grid(alpha=0.3)
    if handles:
        labels = [lab for lab in (labelled_name(item, table, a) for a in algs) if lab in handles]
        fig.legend([handles[lab] for lab in labels], labels, loc="outside lower center", ncol=min(3, len(labels)))
    note = runs_note(item)
    if note:
        fig.suptitle(note + "; bars: ± 1 sd", fontsize=7, color="0.3")
    save_figure(fig, stem)
