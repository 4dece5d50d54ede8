"""What Figures 2 and 3 of Cohen-Addad et al. 2022 share: the normalised k-median cost table, its
figure (one column per dataset, one row per private ε, plus a row of cost ratios to a named baseline
across ε), and the claim helpers that decide ratios of mean costs with intervals.

Normalisation (STATED §6 "normalized by the best clustering objective"): at each (dataset, k) every
cell's mean k-median cost is divided by the *best objective found*, the lowest cost of any single run
of any method at that (dataset, k), over every ε, the non-private methods included (kmed++ and the
converged reference `cohenaddad2022.kmedian_ref`, see `dpclust.cohenaddad2022.reference`). The best
method therefore has a ratio slightly above 1, and the ratios of different ε rows share one scale.

Claims are decided on ratios of mean costs with `dpclust.pipeline.claims.ratio_ci` (95 %, delta method on the
log ratio), per ε, and over k with `every`. The paper's ε is lost in the extracted text, so a claim
is checked at every ε of the grid: when its verdict differs across the grid, the cells that do not
hold say "depends on a lost parameter: ε".
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from dpclust.pipeline.aggregate import Check, runs_frame, tidy
from dpclust.pipeline.claims import Interval, every, ratio_ci, side_of
from dpclust.pipeline.itemkit import availability, dataset_name, runs_note, short_reason
from dpclust.pipeline.itemkit import name as _registry_name
from dpclust.pipeline.plotting import mark_unavailable, mean_sd_line, panel_grid, save_figure, style_for

COLUMNS = ["dataset", "algorithm", "k", "epsilon", "mean", "std", "n", "min", "best", "ratio", "ratio_sd",
           "guarantee", "eps_exact", "status", "reason"]


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
def _guarantees(records) -> dict:
    """algorithm -> guarantee kind from the run records (ε-DP / non-private / not DP as published);
    records without one: 'ε-DP' for runs with an ε, 'non-private' without."""
    out = {}
    for rec in records:
        g = (rec.get("guarantee") or {}).get("kind")
        out.setdefault(rec.get("algorithm"), g or ("non-private" if rec.get("epsilon") is None else "ε-DP"))
    return out


def aggregate_normalised(records, item, ctx) -> pd.DataFrame:
    """Tidy k-median cost per (dataset, algorithm, k, ε) with `best` = the lowest single-run cost of
    any method at (dataset, k), `ratio` = mean / best and `ratio_sd` = sd / best, the algorithm's
    declared `guarantee`, and `eps_exact`: every run of the cell spent its ε within the relative
    tolerance `table.spent_rel_tol`."""
    rel_tol = float(item["table"]["spent_rel_tol"])
    table = tidy(records, item, ctx)
    t = table[table["metric"] == "cost_kmedian"].copy() if not table.empty else table
    unavailable = (table[table["status"] != "ok"].drop_duplicates(subset=["dataset", "algorithm"])
                   if not table.empty else table)
    df = runs_frame(records)
    ok_runs = df[df["status"] == "ok"] if not df.empty else df
    if not t.empty and not ok_runs.empty:
        best = (ok_runs.assign(cost=pd.to_numeric(ok_runs["cost_kmedian"], errors="coerce"))
                .groupby(["dataset", "k"])["cost"].min().rename("best").reset_index())
        t = t.merge(best, on=["dataset", "k"], how="left")
        t["ratio"] = t["mean"] / t["best"]
        t["ratio_sd"] = t["std"] / t["best"]
    if not ok_runs.empty and "epsilon_spent" in ok_runs:
        priv = ok_runs[ok_runs["epsilon"].notna()]
        if not priv.empty and not t.empty:
            exact = (priv.assign(exact=np.isclose(priv["epsilon_spent"].astype(float), priv["epsilon"].astype(float),
                                                  rtol=rel_tol))
                     .groupby(["dataset", "algorithm", "k", "epsilon"])["exact"].all().reset_index())
            t = t.merge(exact, on=["dataset", "algorithm", "k", "epsilon"], how="left")
    if "exact" not in t:
        t["exact"] = pd.NA
    t = t.rename(columns={"exact": "eps_exact"})
    guarantees = _guarantees(records)
    t["guarantee"] = t["algorithm"].map(guarantees)
    t = t.reindex(columns=COLUMNS)
    if not unavailable.empty:
        extra = unavailable[~unavailable.set_index(["dataset", "algorithm"]).index.isin(
            t.set_index(["dataset", "algorithm"]).index)].copy()
        extra["guarantee"] = extra["algorithm"].map(guarantees)
        t = pd.concat([t, extra.reindex(columns=COLUMNS)], ignore_index=True)
    return t.sort_values(["dataset", "algorithm", "k", "epsilon"], na_position="first").reset_index(drop=True)


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


def guarantee(table: pd.DataFrame, algorithm: str) -> str:
    """The declared guarantee kind of `algorithm` in the table ('' if unknown)."""
    kinds = table.loc[table["algorithm"] == algorithm, "guarantee"].dropna() if "guarantee" in table else []
    return str(kinds.iloc[0]) if len(kinds) else ""


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


def ratio_to_constant(table: pd.DataFrame, dataset: str, a: str, k, epsilon, constant: float) -> Interval | None:
    """95 % interval of mean cost of `a` / a fixed reference cost (the best non-private solution found,
    treated as a constant: `ratio_ci` with a zero-variance denominator)."""
    A = cell(table, dataset, a, k, epsilon)
    if A is None:
        return None
    return ratio_ci(A, (constant, 0.0, A[2]))


def why_not_evaluable(table: pd.DataFrame, item, dataset: str) -> str:
    """Why a claim on `dataset` cannot be evaluated: not run, data unavailable, or no common runs."""
    status, reason = availability(table, dataset)
    label = dataset_name(item, dataset)
    if status == "absent":
        return f"{label}: not run in this preset"
    if status == "data_unavailable":
        return f"{label}: data unavailable ({short_reason(reason)})"
    if status == "refused":
        return f"{label}: refused ({reason})"
    return f"{label}: no common k"


# ---------------------------------------------------------------------------------------------
# deciding claims per ε
# ---------------------------------------------------------------------------------------------
def _band_decision(iv: Interval, lo: float | None, hi: float | None) -> bool | None:
    """Inside [lo, hi] (either side may be None): True if the whole interval is inside, False if it
    lies wholly outside one side, else None."""
    parts = []
    if lo is not None:
        parts.append(side_of(iv, lo, ">="))
    if hi is not None:
        parts.append(side_of(iv, hi, "<="))
    if any(p is False for p in parts):
        return False
    return None if any(p is None for p in parts) else True


def _without_eps(claim: str) -> str:
    """The claim template without its ε (a claim that could not be evaluated at any ε)."""
    return claim.replace(" at ε = {eps}", "").format(eps="")


def _fmt_eps(eps: float) -> str:
    return f"{eps:g}"


def claim_per_epsilon(table: pd.DataFrame, item, dataset: str, algorithm: str, claim: str,
                      interval_at: Callable[[object, float], Interval | None], lo: float | None, hi: float | None,
                      quantity: str) -> list[Check]:
    """One check per private ε of `algorithm` on `dataset`: the cell interval from `interval_at(k, ε)`
    must lie in [lo, hi] at every k (`every`). The check reports the least favourable cell's ratio,
    interval and threshold. Across ε: where some ε hold and others do not, the failing ones get
    "depends on a lost parameter: ε"; where no ε holds, "genuine: <the failing cells' intervals>".
    `claim` contains "{eps}"."""
    threshold = (f"in [{lo:g}, {hi:g}]" if lo is not None and hi is not None
                 else (f"< {hi:g}" if hi is not None else f"> {lo:g}")) + " at every k"
    eps_values = private_epsilons(table[table["algorithm"] == algorithm], dataset) if not table.empty else []
    if not eps_values:
        return [Check(_without_eps(claim), None, why_not_evaluable(table, item, dataset))]
    out: list[tuple[float, Check]] = []
    for eps in eps_values:
        cells, texts, worst = [], [], None
        for k in ks(table, dataset, algorithm):
            iv = interval_at(k, eps)
            if iv is None:
                continue
            cells.append((f"k={k}", _band_decision(iv, lo, hi)))
            texts.append(f"k={k}: {iv}")
            # least favourable cell: the one whose interval reaches furthest past the band
            badness = max((iv.high - hi) if hi is not None else -math.inf,
                          (lo - iv.low) if lo is not None else -math.inf)
            if worst is None or badness > worst[0]:
                worst = (badness, iv)
        label = claim.format(eps=_fmt_eps(eps))
        if not cells:
            out.append((eps, Check(label, None, why_not_evaluable(table, item, dataset))))
            continue
        check = every(label, cells, detail=f"{quantity} 95 % CI: " + "; ".join(texts))
        check.quantity, check.ci, check.threshold = worst[1].estimate, (worst[1].low, worst[1].high), threshold
        out.append((eps, check))
    held = [eps for eps, c in out if c.holds is True]
    failed = [eps for eps, c in out if c.holds is False]
    tried = ", ".join(_fmt_eps(eps) for eps, _ in out)
    for eps, c in out:
        if c.holds is not False:
            continue
        if held:
            c.why = (f"depends on a lost parameter: ε (holds at ε ∈ {{{', '.join(map(_fmt_eps, held))}}}, not at "
                     f"ε ∈ {{{', '.join(map(_fmt_eps, failed))}}}; the paper's ε is lost in the extracted text)")
        elif len(failed) == len(out):
            c.why = f"genuine at every ε tried ({tried}): {c.detail.split('CI: ', 1)[-1]}"
        else:
            c.why = (f"genuine at ε = {_fmt_eps(eps)} (no ε of the grid holds; the others are undecided): "
                     f"{c.detail.split('CI: ', 1)[-1]}")
    return [c for _, c in out]


def beats(table: pd.DataFrame, item, dataset: str, a: str, b: str, claim: str | None = None) -> list[Check]:
    """Per ε: a's mean cost is below b's at every k (ratio interval below 1). `claim` (with "{eps}")
    replaces the default wording."""
    claim = claim or (f"{name(item, a)} beats {name(item, b)} on {dataset_name(item, dataset)} at ε = {{eps}} "
                      f"(mean cost ratio < 1 at every k)")
    not_dp = [alg for alg in (a, b) if guarantee(table, alg) not in ("ε-DP", "(ε, δ)-DP", "")]
    if not_dp:  # claims compare DP methods only
        return [Check(_without_eps(claim), None,
                      f"{', '.join(name(item, x) for x in not_dp)}: {guarantee(table, not_dp[0])}, not compared "
                      "with private methods")]
    return claim_per_epsilon(table, item, dataset, a, claim,
                             lambda k, eps: ratio_interval(table, dataset, a, b, k, eps), None, 1.0,
                             f"{name(item, a)} / {name(item, b)}")


def spent_cells(table: pd.DataFrame) -> Check:
    """Every private (dataset, method, k, ε) cell spent exactly its ε (column `eps_exact`)."""
    col = table["eps_exact"].dropna() if "eps_exact" in table else pd.Series([], dtype=object)
    return Check("each private run spends exactly its epsilon setting",
                 None if col.empty else bool(col.astype(bool).all()),
                 f"{len(col)} (dataset, method, k, ε) cells")


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


def _label(item, table, alg) -> str:
    kind = table.loc[table["algorithm"] == alg, "guarantee"].dropna()
    kind = kind.iloc[0] if len(kind) else ""
    text = name(item, alg)
    if kind == "not DP as published" and "not DP" not in text:
        text += " (not DP as published)"
    elif kind == "non-private" and "non-private" not in text:
        text += " (non-private)"
    return text


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
                mean_sd_line(ax, s["k"], s["ratio"], s["ratio_sd"], label=_label(item, table, alg), **style)
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
        labels = [lab for lab in (_label(item, table, a) for a in algs) if lab in handles]
        fig.legend([handles[lab] for lab in labels], labels, loc="outside lower center", ncol=min(3, len(labels)))
    note = runs_note(item)
    if note:
        fig.suptitle(note + "; bars: ± 1 sd", fontsize=7, color="0.3")
    save_figure(fig, stem)
