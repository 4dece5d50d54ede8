"""Figure 1 of Balcan et al. 2017 (candidate set construction, Algorithm 1) from one real run.

The paper's Figure 1 is a schematic without data; here one run of Algorithm 1
(`dpclust.balcan2017.partition:partition_illustration`) on the 2-D s1 data provides the geometry:
the aggregate turns its run record into rows (kind ∈ {cube, candidate, box, point}) and reads the
processed s1 file for a deterministic subsample of data points (`table.max_points`); the render
draws the active cubes (solid), the tested but inactive sub-cubes (dotted), the candidates and the
points.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpclust.pipeline.itemkit import step_options
from dpclust.pipeline.plotting import mark_unavailable, pyplot, save_figure

FIG1_COLUMNS = ["kind", "x", "y", "side", "depth", "note"]


def aggregate(records, item, ctx) -> pd.DataFrame:
    """Rows: kind ∈ {cube, candidate, point, box}; x, y (lower corner / point), side, depth."""
    rows = []
    rec = next((r for r in records if r.get("status", "ok") == "ok" and r.get("runs")), None)
    if rec is None:
        reason = records[0].get("reason", "no run") if records else "no run"
        return pd.DataFrame([{"kind": "unavailable", "x": np.nan, "y": np.nan, "side": np.nan,
                              "depth": np.nan, "note": reason}])
    info = rec["runs"][0]["info"]
    lo = np.asarray(info["cube_lower"], dtype=float)
    for (x, y), s, dep in zip(lo[:, :2], info["cube_side"], info["cube_depth"]):
        rows.append({"kind": "cube", "x": x, "y": y, "side": s, "depth": dep, "note": ""})
    for x, y in np.asarray(info["candidates"], dtype=float)[:, :2]:
        rows.append({"kind": "candidate", "x": x, "y": y, "side": np.nan, "depth": np.nan, "note": ""})
    b = rec["bounds"]
    rows.append({"kind": "box", "x": b[0], "y": b[0], "side": b[1] - b[0], "depth": np.nan,
                 "note": f"gamma={info['gamma']:.4g}; eps_level={info['eps_level']:.4g}; "
                         f"active per level={info['active_per_level']}"})
    max_points = int(step_options(item, "table")["max_points"])
    try:
        from dpclust.data import apply_transform, load_processed

        data = load_processed(ctx.dataset_path(rec["dataset"]))
        X, _ = apply_transform(rec["transform"], data.X, ctx.entry(rec["dataset"]))
        idx = np.linspace(0, X.shape[0] - 1, min(max_points, X.shape[0])).astype(int)
        for x, y in X[idx, :2]:
            rows.append({"kind": "point", "x": x, "y": y, "side": np.nan, "depth": np.nan, "note": ""})
    except Exception as exc:  # the figure still shows the cubes; say why the points are missing
        rows.append({"kind": "note", "x": np.nan, "y": np.nan, "side": np.nan, "depth": np.nan,
                     "note": f"data points not drawn: {exc}"})
    return pd.DataFrame(rows, columns=FIG1_COLUMNS)


def render(table: pd.DataFrame, item: dict, stem: str) -> None:
    import matplotlib.patches as mpatches

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 5.0))
    if (table["kind"] == "unavailable").any():
        mark_unavailable(ax, item["title"], str(table["note"].iloc[0]))
        save_figure(fig, stem)
        return
    cubes = table[table["kind"] == "cube"]
    active = {(round(r.x, 9), round(r.y, 9), round(r.side, 9)) for r in cubes.itertuples()}
    for r in cubes.itertuples():  # the tested sub-cubes of every active cube (dotted if not activated)
        half = r.side / 2
        for bx in (0, 1):
            for by in (0, 1):
                key = (round(r.x + bx * half, 9), round(r.y + by * half, 9), round(half, 9))
                if key not in active:
                    ax.add_patch(mpatches.Rectangle((r.x + bx * half, r.y + by * half), half, half, fill=False,
                                                    ls=":", lw=0.5, ec="0.55"))
    for r in cubes.sort_values("depth").itertuples():
        ax.add_patch(mpatches.Rectangle((r.x, r.y), r.side, r.side, fill=False, lw=1.0, ec="C0"))
    pts = table[table["kind"] == "point"]
    ax.scatter(pts["x"], pts["y"], s=2, c="0.35", alpha=0.5, label="data points", rasterized=True)
    cand = table[table["kind"] == "candidate"]
    ax.scatter(cand["x"], cand["y"], s=18, marker="x", c="C3", label="candidate centres")
    box = table[table["kind"] == "box"].iloc[0]
    margin = 0.25 * box.side
    ax.set_xlim(box.x - margin, box.x + box.side + margin)
    ax.set_ylim(box.y - margin, box.y + box.side + margin)
    ax.set_aspect("equal")
    handles = [mpatches.Patch(fill=False, ec="C0", label="active cube"),
               mpatches.Patch(fill=False, ec="0.55", ls=":", label="inactive cube")]
    ax.legend(handles=handles + ax.get_legend_handles_labels()[0], loc="upper right", fontsize=7)
    ax.set_title(item["title"], fontsize=9)
    fig.text(0.01, 0.005, str(box.note), fontsize=6)
    save_figure(fig, stem)
