"""The leaderboard table: every private algorithm × dataset × k × ε on common ground.

Table (`aggregate`): the tidy leaderboard of `common.leaderboard`, one row per (objective,
dataset, k, ε, algorithm): guarantee, rank among the DP methods, mean cost / best non-private cost
with its 95 % interval, runs, wall time per run, ε and δ spent; the non-private references (ε
empty) and "data unavailable" cells included.

Render (`render`): `stem.md` and `stem.html` (sortable: click a column header) hold the whole
table with display names; `stem.png`/`stem.pdf` show it as rank maps, one per (objective, ε): rows
are algorithms, columns (dataset, k), colour the normalised cost on a log scale, the number in a
cell the rank among DP methods ("–" for a method that is not ranked: not DP as published, unknown
guarantee).

Check (`checks`): every run of a method with a DP guarantee spent at most its ε (and its δ).
Methods without one report no ε (their ε columns are blank) and are not counted.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from dpclust.fileio import write_text_atomic
from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.itemkit import dataset_name, name, runs_note, short_reason, step_options
from dpclust.pipeline.items.leaderboard.common import (
    DP_KINDS,
    NON_PRIVATE,
    OBJECTIVE_LABEL,
    display_frame,
    label,
    leaderboard,
    left_out_note,
    race_note,
)
from dpclust.pipeline.plotting import html_table, pyplot, save_figure, to_markdown

SPENT_CLAIM = "Every DP run spent at most its ε (and its δ)"


def aggregate(records, item, ctx) -> pd.DataFrame:
    """The tidy leaderboard (see `dpclust.pipeline.items.leaderboard.common`)."""
    return leaderboard(records, item)


def _values(symbol: str, values: list) -> str:
    """"k = 5" for one value, "k ∈ {5, 10}" for several."""
    return f"{symbol} = {values[0]}" if len(values) == 1 else f"{symbol} ∈ {{{', '.join(map(str, values))}}}"


def _note(table: pd.DataFrame, item) -> str:
    unavailable = sorted(set(table.loc[table["status"] == "data_unavailable", "dataset"]))
    note = runs_note(item)
    parts = [note + "." if note else "",
             "Cost / best non-private: mean over runs of each run's cost divided by the best cost of any non-private "
             "run at the same (dataset, k); 95 % Student-t interval. Rank: among methods with a declared DP guarantee "
             "only (ε-DP or (ε, δ)-DP), per (objective, dataset, k, ε).", race_note(item), left_out_note(item)]
    if unavailable:
        reasons = {d: short_reason(table.loc[table["dataset"] == d, "reason"].iloc[0]) for d in unavailable}
        parts.append("Data unavailable: "
                     + ", ".join(f"{dataset_name(item, d)} ({r})" for d, r in reasons.items()) + ".")
    refused = table[table["status"] == "refused"]
    if len(refused):
        cells = []                             # one entry per (algorithm, dataset): its refused k and ε
        for (alg, data), g in refused.groupby(["algorithm", "dataset"], sort=False):
            ks, eps = sorted(set(g["k"].astype(int))), sorted(set(g["epsilon"].astype(float)))
            cells.append(f"{name(item, alg)} on {dataset_name(item, data)} ({_values('k', ks)}, "
                         f"{_values('ε', [f'{e:g}' for e in eps])})")
        parts.append("Refused (the algorithm's documented limit, no run; the reason is in the row's note): "
                     + ", ".join(cells) + ".")
    return " ".join(p for p in parts if p)


def render(table: pd.DataFrame, item, stem) -> None:
    """`stem.md`, `stem.html` (the whole table) and `stem.png`/`stem.pdf` (rank maps)."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    title = item.get("title", "Leaderboard")
    note = _note(table, item)
    shown = display_frame(table, item)
    write_text_atomic(f"**{title}**\n\n" + to_markdown(shown) + f"\n{note}\n", stem.with_suffix(".md"))
    write_text_atomic(html_table(shown, title, note), stem.with_suffix(".html"))
    _rank_maps(table, item, stem, title, note)


def _rank_maps(table: pd.DataFrame, item, stem, title: str, note: str) -> None:
    from matplotlib.colors import LogNorm

    plt = pyplot()

    options = step_options(item, "figure")
    vmax = float(options.get("colour_max", 100.0))
    ok = table[(table["status"] == "ok") & table["epsilon"].notna() & (table["guarantee"] != NON_PRIVATE)]
    panels = [(obj, eps) for obj in ("kmeans", "kmedian")
              for eps in sorted(ok.loc[ok["objective"] == obj, "epsilon"].unique())]
    if not panels:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.axis("off")
        ax.text(0.5, 0.5, "no private run available", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title)
        save_figure(fig, stem)
        return
    objectives = [o for o in ("kmeans", "kmedian") if any(p[0] == o for p in panels)]
    n_eps = max(sum(p[0] == o for p in panels) for o in objectives)
    layout = {}
    for obj in objectives:
        sub = ok[ok["objective"] == obj]
        cols = sorted({(d, int(k)) for d, k in zip(sub["dataset"], sub["k"])})
        score = sub.assign(lg=np.log10(sub["mean"].clip(lower=1e-12))).groupby("algorithm")["lg"].mean()
        ranked = sub.groupby("algorithm")["guarantee"].first().isin(DP_KINDS)
        algs = sorted(score.index, key=lambda a: (not ranked[a], score[a], a))
        layout[obj] = (cols, algs)
    heights = [max(2.0, 0.24 * len(layout[o][1]) + 1.2) for o in objectives]
    width_one = max(3.0, 0.42 * max(len(layout[o][0]) for o in objectives) + 0.6)
    fig, axes = plt.subplots(len(objectives), n_eps, figsize=(2.6 + width_one * n_eps, sum(heights) + 1.2),
                             squeeze=False, gridspec_kw={"height_ratios": heights}, layout="constrained")
    norm = LogNorm(vmin=1.0, vmax=vmax)
    image = None
    live = []
    for r, obj in enumerate(objectives):
        cols, algs = layout[obj]
        eps_values = sorted(ok.loc[ok["objective"] == obj, "epsilon"].unique())
        sub = ok[ok["objective"] == obj].set_index(["algorithm", "dataset", "k", "epsilon"])
        kinds = ok[ok["objective"] == obj].groupby("algorithm")["guarantee"].first()
        for c in range(n_eps):
            ax = axes[r][c]
            if c >= len(eps_values):
                ax.remove()
                continue
            eps = eps_values[c]
            live.append(ax)
            values = np.full((len(algs), len(cols)), np.nan)
            for i, alg in enumerate(algs):
                for j, (ds, k) in enumerate(cols):
                    key = (alg, ds, k, eps)
                    if key not in sub.index:
                        continue
                    row = sub.loc[key]
                    values[i, j] = float(row["mean"])
                    rank = row["rank"]
                    text = "–" if rank != rank else str(int(rank))
                    ax.text(j, i, text, ha="center", va="center", fontsize=6.5,
                            color="black" if (values[i, j] != values[i, j]) or values[i, j] < vmax ** 0.6 else "white")
            refused = table[(table["status"] == "refused") & (table["objective"] == obj) & (table["epsilon"] == eps)]
            for cell in refused.itertuples():   # no run (api.Refused): say so where the colour is missing
                if cell.algorithm in algs and (cell.dataset, int(cell.k)) in cols:
                    ax.text(cols.index((cell.dataset, int(cell.k))), algs.index(cell.algorithm), "refused",
                            ha="center", va="center", fontsize=4.5, color="0.35")
            image = ax.imshow(np.clip(values, 1.0, vmax), norm=norm, cmap="RdYlGn_r", aspect="auto",
                              interpolation="nearest")
            ax.set_xticks(range(len(cols)))
            ax.set_xticklabels([f"{dataset_name(item, d)} k={k}" for d, k in cols], rotation=60, ha="right",
                               fontsize=7)
            ax.set_yticks(range(len(algs)))
            ax.set_yticklabels([label(item, a, kinds[a]) for a in algs] if c == 0 else [], fontsize=7)
            ax.set_title(f"{OBJECTIVE_LABEL[obj]}, ε = {eps:g}", fontsize=9)
    if image is not None:
        bar = fig.colorbar(image, ax=live, shrink=0.6, pad=0.01)
        bar.set_label("mean cost / best non-private (clipped)")
    fig.suptitle(f"{title}\nnumbers: rank among DP methods (– not ranked)", fontsize=10)
    fig.text(0.0, -0.01, "\n".join(_wrap_lines(note, 180)), fontsize=6.5, va="top", color="0.3")
    save_figure(fig, stem)


def _wrap_lines(text: str, width: int) -> list[str]:

    return textwrap.wrap(text, width)


def checks(table: pd.DataFrame, item) -> list[Check]:
    """Every run of a method with a DP guarantee spent at most its ε and its δ (relative slack
    `claims.spent_rel_tol`); cells of methods without a declared DP guarantee are not counted (they
    report no ε). A DP cell that reports no ε spent fails: its runs cannot be checked."""
    tol = float(step_options(item, "claims").get("spent_rel_tol", 1e-9))
    ok = table[(table["status"] != "data_unavailable") & table["epsilon"].notna() & (table["n"] > 0)]
    dp = ok[ok["guarantee"].isin(DP_KINDS)]
    others = ok[~ok["guarantee"].isin(DP_KINDS)]
    skipped = (f"; {int(others['n'].sum())} runs of {others['algorithm'].nunique()} methods without a DP guarantee "
               "not counted") if len(others) else ""
    if dp.empty:
        return [Check(SPENT_CLAIM, None, "no run of a method with a declared DP guarantee" + skipped)]
    eps = dp["epsilon"].astype(float)
    delta = dp["delta"].astype(float).fillna(0.0)
    over_eps = dp[dp["eps_spent_max"].astype(float) > eps * (1 + tol)]
    over_delta = dp[dp["delta_spent_max"].astype(float) > delta * (1 + tol) + 1e-300]
    unreported = dp[dp["eps_spent_max"].isna()]
    worst = float((dp["eps_spent_max"].astype(float) / eps).max())
    detail = (f"{int(dp['n'].sum())} runs in {len(dp)} cells of {dp['algorithm'].nunique()} DP methods; "
              f"largest ε spent / ε = {fmt(worst, 6)}")
    bad = [f"{r.algorithm} on {r.dataset} (k={r.k}, ε={r.epsilon:g}) spent ε {fmt(r.eps_spent_max, 6)}, "
           f"δ {fmt(r.delta_spent_max, 3)}" for r in pd.concat([over_eps, over_delta]).itertuples()]
    if bad:
        detail += f"; over budget: {len(bad)} cells, e.g. {bad[0]}"
    missing = [f"{r.algorithm} on {r.dataset} (k={r.k}, ε={r.epsilon:g})" for r in unreported.itertuples()]
    if missing:
        detail += f"; no ε spent reported: {len(missing)} cells, e.g. {missing[0]}"
        bad += missing
    return [Check(SPENT_CLAIM, not bad, detail + skipped, quantity=worst, threshold=f"<= {1 + tol:.9g}")]


checks.handles_refused = True   # refused cells are the board's own rows ("refused"), not a gap in a claim
