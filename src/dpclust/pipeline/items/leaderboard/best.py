"""The best private method per (objective, dataset, k, ε), and how it was decided.

Table (`aggregate`): from the tidy leaderboard (`common.leaderboard`), one row per (objective,
dataset, k, ε): the best method among those with a declared DP guarantee (lowest mean cost / best
non-private), its 95 % interval, the runner-up's, and `decided`:

* ``separated`` — the best's interval lies entirely below the runner-up's: a clear winner;
* ``overlapping`` — the intervals overlap: the best by mean, not separable at this sample size;
* ``only DP method`` — a single DP method ran in the cell;
* ``no DP method`` — no method with a declared DP guarantee ran there (e.g. guarantees not yet
  declared: "unknown" is never counted as DP).

With `racing` (`dpclust.pipeline.racing`, declared on the item that owns the runs) the race decides:
it is replayed on the records, look by look, exactly as the checkpoint ran it; ``separated`` means
one contender was left ("separated at look j"), ``overlapping`` that the cap was reached with several.
The intervals shown stay each method's 95 % interval on all the runs it got; `best_runs`,
`runner_up_runs` and `stopped` say how many and why the cell stopped, and `runner_up_gap_*` give the
race's last test of the runner-up (the Welch interval of its mean minus the best's, its look and
confidence).

A method without a DP guarantee (not DP as published, unknown) that beats the best DP method by
mean is named in `unranked_better`, labelled with its guarantee, never as the winner. Cells of
unavailable data keep one row with the reason.

Render (`render`): `stem.md` and `stem.html` (sortable) list every row with a sentence saying
how it was decided; `stem.png`/`stem.pdf` show a matrix (rows: objective, dataset, k; columns: ε)
naming the best DP method, its normalised cost and "✓" (separated) or "≈" (overlapping).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from dpclust.fileio import write_text_atomic
from dpclust.pipeline import racing
from dpclust.pipeline.itemkit import dataset_name, name, runs_note
from dpclust.pipeline.items.leaderboard.common import (
    KEY,
    NON_PRIVATE,
    OBJECTIVE_LABEL,
    fmt_interval,
    leaderboard,
    left_out_note,
    planned,
    race_note,
)
from dpclust.pipeline.plotting import STATUS_TEXT, html_table, save_figure, to_markdown

COLUMNS = [*KEY, "best", "best_guarantee", "best_mean", "best_ci_low", "best_ci_high", "best_nonempty", "runner_up",
           "runner_up_mean", "runner_up_ci_low", "runner_up_ci_high", "runner_up_nonempty", "decided", "dp_methods",
           "best_runs", "runner_up_runs", "stopped", "runner_up_gap_low", "runner_up_gap_high", "runner_up_gap_level",
           "runner_up_gap_look",
           "unranked_better", "unranked_better_guarantee", "unranked_better_mean", "status", "reason"]
#: how a raced cell's stop reads in `decided`
RACED = {racing.SEPARATED: "separated", racing.CAP: "overlapping", racing.CPU: "overlapping",
         racing.ONLY: "only DP method", racing.OPEN: "overlapping"}
MARK = {"separated": "✓", "overlapping": "≈", "only DP method": "(only)", "no DP method": ""}


def decide(best: pd.Series | None, runner: pd.Series | None) -> str:
    """separated | overlapping | only DP method | no DP method (module docstring)."""
    if best is None:
        return "no DP method"
    if runner is None:
        return "only DP method"
    return "separated" if float(best["ci_high"]) < float(runner["ci_low"]) else "overlapping"


def aggregate(records, item, ctx) -> pd.DataFrame:
    """One row per (objective, dataset, k, ε): the best DP method and how it was decided (by the
    race when the runs were raced: module docstring)."""
    records = list(records)
    table = leaderboard(records, item)
    rows = []
    if table.empty:
        return pd.DataFrame(columns=COLUMNS)
    spec = item.get("racing")
    race = (racing.race(records, spec, spec["repetitions"], lambda recs: leaderboard(recs, item))
            if spec else {})
    private = table[table["epsilon"].notna()]
    for key, cell in private.groupby(KEY, sort=True):
        row = dict(zip(KEY, key))
        ok = cell[cell["status"] == "ok"]
        if ok.empty:
            reasons = cell["reason"].dropna().astype(str)
            row.update(status=str(cell["status"].iloc[0]), reason=reasons.iloc[0] if len(reasons) else "",
                       decided="", dp_methods=0)
            rows.append(row)
            continue
        ranked = ok[ok["rank"].notna()].sort_values(["rank", "mean", "algorithm"])
        state = race.get(racing.cell_id(*key)) if len(ranked) else None
        if state:   # the race's winner first: the lowest mean among the last contenders
            first = ranked["algorithm"] == state["contenders"][0]
            ranked = pd.concat([ranked[first], ranked[~first]])
        best = ranked.iloc[0] if len(ranked) else None
        runner = ranked.iloc[1] if len(ranked) > 1 else None
        row.update(decided=RACED[state["stopped"]] if state else decide(best, runner), dp_methods=len(ranked),
                   status="ok", reason="", stopped=racing.stop_text(state) if state else "")
        if best is not None:
            row.update(best=best["algorithm"], best_guarantee=best["guarantee"], best_mean=best["mean"],
                       best_ci_low=best["ci_low"], best_ci_high=best["ci_high"], best_nonempty=best["nonempty_mean"],
                       best_runs=best["n"])
        if runner is not None:
            row.update(runner_up=runner["algorithm"], runner_up_mean=runner["mean"],
                       runner_up_ci_low=runner["ci_low"], runner_up_ci_high=runner["ci_high"],
                       runner_up_nonempty=runner["nonempty_mean"], runner_up_runs=runner["n"])
            last = state["methods"].get(runner["algorithm"]) if state else None
            if last:   # the race's last word on the runner-up: its gap to the best of that look
                row.update(runner_up_gap_low=last["gap_low"], runner_up_gap_high=last["gap_high"],
                           runner_up_gap_level=1.0 - last["level"], runner_up_gap_look=last["look"])
        unranked = ok[ok["rank"].isna() & (ok["guarantee"] != NON_PRIVATE) & np.isfinite(ok["mean"].astype(float))]
        if len(unranked):
            top = unranked.sort_values(["mean", "algorithm"]).iloc[0]
            if best is None or float(top["mean"]) < float(best["mean"]):
                row.update(unranked_better=top["algorithm"], unranked_better_guarantee=top["guarantee"],
                           unranked_better_mean=top["mean"])
        rows.append(row)
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def _present(value) -> bool:
    return isinstance(value, str) and value != ""


def _kept(mean, k) -> str:
    """' (2.3 of 10 clusters non-empty)': how many clusters the method's centres keep, on average."""
    if mean is None or not np.isfinite(float(mean)):
        return ""
    return f" ({float(mean):.2g} of {int(k)} clusters non-empty)"


def _count(value) -> str:
    return str(int(value)) if value is not None and np.isfinite(float(value)) else "?"


def how_decided(row, item) -> str:
    """One sentence: the best's interval against the runner-up's, each with the mean number of
    clusters its centres keep non-empty (a collapsed solution shows there, not in the cost)."""
    if row.status != "ok":
        reason = row.reason if isinstance(row.reason, str) and row.reason else ""
        return STATUS_TEXT.get(row.status, str(row.status)) + (f" ({reason})" if reason else "")
    best = (fmt_interval(row.best_mean, row.best_ci_low, row.best_ci_high) + _kept(row.best_nonempty, row.k)
            if _present(row.best) else "")
    if row.decided == "no DP method":
        text = "no method with a declared DP guarantee ran here"
    elif row.decided == "only DP method":
        text = f"the only DP method: {best}"
    else:
        runner = (fmt_interval(row.runner_up_mean, row.runner_up_ci_low, row.runner_up_ci_high)
                  + _kept(row.runner_up_nonempty, row.k))
        rel = "lies below" if row.decided == "separated" else "overlaps"
        text = f"best {best} {rel} runner-up {name(item, row.runner_up)} {runner}"
    if _present(row.stopped) and row.decided != "no DP method":
        runs = f"{_count(row.best_runs)} runs of the best" + (
            f", {_count(row.runner_up_runs)} of the runner-up" if _present(row.runner_up) else "")
        text += f"; race: {row.stopped} ({runs}"
        if _present(row.runner_up) and np.isfinite(float(row.runner_up_gap_low)):
            text += (f"; runner-up − best in [{float(row.runner_up_gap_low):.3g}, {float(row.runner_up_gap_high):.3g}]"
                     f" at look {int(row.runner_up_gap_look)}, Welch {100 * float(row.runner_up_gap_level):.4g} %")
        text += ")"
    if _present(row.unranked_better):
        text += (f"; {name(item, row.unranked_better)} ({row.unranked_better_guarantee}, not ranked) has a lower "
                 f"mean, {row.unranked_better_mean:.3g}")
    return text


def _display(table: pd.DataFrame, item) -> pd.DataFrame:
    t = table
    return pd.DataFrame({
        "objective": t["objective"].map(OBJECTIVE_LABEL),
        "dataset": t["dataset"].map(lambda d: dataset_name(item, d)),
        "k": t["k"],
        "ε": t["epsilon"],
        "best DP method": [name(item, a) if _present(a) else "" for a in t["best"]],
        "guarantee": [g if _present(g) else "" for g in t["best_guarantee"]],
        "cost / best non-private": t["best_mean"],
        "decided": [d if _present(d) else "" for d in t["decided"]],
        "stopped": [d if _present(d) else "" for d in t["stopped"]],
        "runs (best, runner-up)": [f"{_count(b)}, {_count(r)}" if _present(u) else (_count(b) if _present(a) else "")
                                   for a, b, u, r in zip(t["best"], t["best_runs"], t["runner_up"],
                                                         t["runner_up_runs"])],
        "DP methods": t["dp_methods"],
        "how decided": [how_decided(r, item) for r in t.itertuples(index=False)],
    })


def render(table: pd.DataFrame, item, stem) -> None:
    """`stem.md`, `stem.html` (every row, sortable) and `stem.png`/`stem.pdf` (the matrix)."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    title = item.get("title", "Best private method")
    planned_note = runs_note(item)
    marks = ((race_note(item) + " ✓: one method left (separated); ≈: the cap reached with several (overlapping).")
             if item.get("racing") else "✓: the best's 95 % interval lies below the runner-up's; ≈: they overlap.")
    note = " ".join(p for p in (planned_note + "." if planned_note else "", marks,
                                "Only methods with a declared DP guarantee are ranked.", left_out_note(item)) if p)
    shown = _display(table, item)
    write_text_atomic(f"**{title}**\n\n" + to_markdown(shown) + f"\n{note}\n", stem.with_suffix(".md"))
    write_text_atomic(html_table(shown, title, note), stem.with_suffix(".html"))
    _matrix(table, item, stem, title, note)


def _matrix(table: pd.DataFrame, item, stem, title: str, note: str) -> None:

    import matplotlib.pyplot as plt

    order = {d: i for i, d in enumerate(planned(item, "datasets"))}
    rows = sorted({(o, d, int(k)) for o, d, k in zip(table["objective"], table["dataset"], table["k"])},
                  key=lambda t: (t[0] != "kmeans", order.get(t[1], len(order)), t[1], t[2]))
    eps_values = sorted(table["epsilon"].dropna().unique())
    fig, ax = plt.subplots(figsize=(2.4 + 2.1 * max(1, len(eps_values)), 1.2 + 0.24 * max(1, len(rows))))
    ax.axis("off")
    colours = {"separated": "#cfe8d5", "overlapping": "#fbeec1", "only DP method": "#e8e8e8", "no DP method": "#ffffff"}
    cells, fills = [], []
    for objective, dataset, k in rows:
        line, fill = [], []
        for eps in eps_values:
            hit = table[(table["objective"] == objective) & (table["dataset"] == dataset) & (table["k"] == k)
                        & (table["epsilon"] == eps)]
            if hit.empty:
                line.append("")
                fill.append("#ffffff")
                continue
            r = hit.iloc[0]
            if r["status"] != "ok":
                line.append(STATUS_TEXT.get(r["status"], str(r["status"])))
                fill.append("#eeeeee")
            elif not _present(r["best"]):
                line.append("no DP method")
                fill.append("#ffffff")
            else:
                short = textwrap.shorten(name(item, r["best"]), 24, placeholder="…")
                line.append(f"{short} {r['best_mean']:.3g} {MARK.get(r['decided'], '')}")
                fill.append(colours.get(r["decided"], "#ffffff"))
        cells.append(line)
        fills.append(fill)
    row_labels = [f"{dataset_name(item, d)} k={k} ({OBJECTIVE_LABEL[o]})" for o, d, k in rows]
    ax.set_title(title, fontsize=10)
    note = "\n".join(textwrap.wrap(note, 150))
    if cells and eps_values:
        tab = ax.table(cellText=cells, cellColours=fills, rowLabels=row_labels,
                       colLabels=[f"ε = {e:g}" for e in eps_values], loc="upper center", cellLoc="center")
        tab.auto_set_font_size(False)
        tab.set_fontsize(7)
        tab.scale(1.0, 1.25)
        # the note right under the table (the saved figure is cropped to what is drawn)
        fig.canvas.draw()
        extent = tab.get_window_extent(fig.canvas.get_renderer()).transformed(ax.transAxes.inverted())
        ax.text(extent.x0, extent.y0 - 0.01, note, fontsize=6.5, va="top", color="0.3", transform=ax.transAxes)
    else:
        ax.text(0.5, 0.5, "no private run available", ha="center", va="center", transform=ax.transAxes)
        fig.text(0.01, 0.0, note, fontsize=6.5, va="top", color="0.3")
    save_figure(fig, stem)

