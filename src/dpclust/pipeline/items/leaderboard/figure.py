"""The leaderboard figure: mean normalised cost vs ε, one panel per (objective, dataset, k), one line
per algorithm with its 95 % interval as a band.

Table (`aggregate`): the tidy leaderboard (`common.leaderboard`), the same as the `table`
item's. Render (`render`): log–log axes; methods with a DP guarantee are solid lines, "not DP
as published" dashed and "[not DP]" in the legend, an unknown guarantee dotted and
"[guarantee unknown]"; the non-private references are grey dash-dot horizontal lines at their mean
(the normaliser, the best single non-private run, is 1). Panels of datasets that could not be
obtained say "data unavailable". The title names the methods not DP as published left out by
default (`common.left_out_note`).
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

from dpclust.pipeline.itemkit import dataset_name, runs_note, step_options
from dpclust.pipeline.items.leaderboard.common import (
    DP_KINDS,
    LINESTYLE,
    NON_PRIVATE,
    OBJECTIVE_LABEL,
    label,
    leaderboard,
    left_out_note,
    palette,
    planned,
)
from dpclust.pipeline.plotting import legend_below, mark_unavailable, panel_grid, panel_status, save_figure


def aggregate(records, item, ctx) -> pd.DataFrame:
    """The tidy leaderboard (see `dpclust.pipeline.items.leaderboard.common`)."""
    return leaderboard(records, item)


def panels_of(table: pd.DataFrame, item) -> list[tuple[str, str, int]]:
    """(objective, dataset, k) of every panel: k-means first, datasets in the planned order."""
    order = {d: i for i, d in enumerate(planned(item, "datasets"))}
    keys = {(o, d, int(k)) for o, d, k in zip(table["objective"], table["dataset"], table["k"])}
    return sorted(keys, key=lambda t: (t[0] != "kmeans", order.get(t[1], len(order)), t[1], t[2]))


#: Mantissas of the labelled ticks of a log y axis, sparsest first (`log_tick_subs`).
LOG_TICK_SUBS = ((1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 5.0, 7.0),
                 (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0))


def log_tick_subs(lo: float, hi: float, at_least: int = 3) -> tuple[float, ...]:
    """The sparsest `LOG_TICK_SUBS` that puts `at_least` labelled ticks in [lo, hi] (a narrow range,
    e.g. costs within 0.9–2× of the best, otherwise shows one or two); the densest if none does."""
    for subs in LOG_TICK_SUBS:
        ticks = [m * 10.0 ** e for e in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
                 for m in subs]
        if sum(lo <= t <= hi for t in ticks) >= at_least:
            return subs
    return LOG_TICK_SUBS[-1]


def _no_reference(ax, title: str) -> None:
    """A panel whose runs cannot be normalised: no non-private reference ran at this (dataset, k)."""
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(0.5, 0.5, "no non-private reference\n(cannot normalise)", ha="center", va="center",
            transform=ax.transAxes, fontsize=8, color="0.3")
    for spine in ax.spines.values():
        spine.set_linestyle(":")


def render(table: pd.DataFrame, item, stem) -> None:
    """One panel per (objective, dataset, k): normalised cost vs ε (module docstring)."""
    options = step_options(item, "figure")
    panels = panels_of(table, item)
    fig, axes = panel_grid(max(1, len(panels)), ncols=int(options.get("ncols", 4)), panel_size=(3.4, 2.7))
    styles = palette(sorted(set(table["algorithm"].dropna())))
    handles: dict[str, object] = {}
    for ax, (objective, dataset, k) in zip(axes, panels):
        title = f"{dataset_name(item, dataset)}, k = {k} ({OBJECTIVE_LABEL[objective]})"
        sub = table[(table["objective"] == objective) & (table["dataset"] == dataset) & (table["k"] == k)]
        ok = sub[(sub["status"] == "ok") & np.isfinite(sub["mean"].astype(float))]
        if ok.empty:
            if (sub["status"] == "no_reference").any():
                _no_reference(ax, title)
            else:
                status, reason = panel_status(sub)
                mark_unavailable(ax, title, reason, status)
            continue
        private = ok[ok["epsilon"].notna()]
        floor = max(float(private["mean"].min()) / 3 if len(private) else 0.5, 1e-3)
        kinds = private.groupby("algorithm")["guarantee"].first()
        order = sorted(kinds.index, key=lambda a: (kinds[a] not in DP_KINDS, a))
        for alg in order:
            s = private[private["algorithm"] == alg].sort_values("epsilon")
            kind = kinds[alg]
            text = label(item, alg, kind)
            line, = ax.plot(s["epsilon"], s["mean"], linestyle=LINESTYLE.get(kind, ":"), linewidth=1.1,
                            markersize=3.5, label=text, **styles[alg])
            low = np.clip(s["ci_low"].astype(float).to_numpy(), floor, None)
            high = np.clip(s["ci_high"].astype(float).to_numpy(), floor, float(private["mean"].max()) * 3)
            ax.fill_between(s["epsilon"], low, high, color=line.get_color(), alpha=0.08, linewidth=0)
            handles.setdefault(text, line)
        for alg, s in ok[ok["epsilon"].isna()].groupby("algorithm"):
            text = label(item, alg, NON_PRIVATE) + " (mean)"
            line = ax.axhline(float(s["mean"].iloc[0]), color="0.45", linestyle=LINESTYLE[NON_PRIVATE],
                              linewidth=0.9, label=text)
            handles.setdefault(text, line)
        ax.set_xscale("log")
        ax.set_yscale("log")
        shown = np.r_[private["mean"].astype(float), ok.loc[ok["epsilon"].isna(), "mean"].astype(float)]
        lo, hi = float(np.nanmin(shown)), float(np.nanmax(shown))
        margin = 1.5 if hi / lo > 10.0 else 1.15
        ax.set_ylim(lo / margin, hi * margin)
        ax.yaxis.set_major_locator(LogLocator(subs=log_tick_subs(*ax.get_ylim())))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        eps_ticks = sorted(private["epsilon"].unique())
        if eps_ticks:
            ax.set_xticks(eps_ticks)
            ax.set_xticklabels([f"{e:g}" for e in eps_ticks])
            ax.minorticks_off()
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("ε (total budget)")
        ax.set_ylabel("cost / best non-private")
        ax.grid(alpha=0.3, which="both")
    lines = [item.get("title") or "", runs_note(item),
             *textwrap.wrap(left_out_note(item), 40 * int(options.get("ncols", 4)))]
    lines = [line for line in lines if line]
    if handles:
        legend_below(fig, list(handles.values()), list(handles.keys()), ncol=int(options.get("legend_ncol", 4)),
                     title_lines=len(lines))
    fig.suptitle("\n".join(lines), fontsize=10)
    save_figure(fig, stem)
