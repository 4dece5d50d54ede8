"""Items of Balcan et al. (ICML 2017): Table 1, Figure 1, Figure 2 (a–d), the Figure 2 table with
sample and aggregate, and the reconstructed supplementary 3-D comparison.

Aggregates return tidy tables (one row per dataset × algorithm × k × ε with mean/std/n of the
k-means objective, the ε actually spent, and the data dimension); renderers read only those tables;
checks turn the paper's claims (§7) into pass/fail statements with the numbers in `detail`.
Thresholds the paper leaves verbal ("orders of magnitude", "competitive", "comparably") are named
options in config/papers/balcan2017.yaml.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..aggregate import Check, fmt, runs_frame
from ..plotting import mark_unavailable, panel_grid, save_figure, style_for, write_table

COLUMNS = ["dataset", "d", "algorithm", "k", "epsilon", "status", "reason", "mean", "std", "n",
           "eps_spent_max", "eps_spent_min"]


# ---------------------------------------------------------------------------------------------
# shared aggregation
# ---------------------------------------------------------------------------------------------
def _summary(records: list[dict]) -> pd.DataFrame:
    """Mean/std/n of the k-means objective per (dataset, algorithm, k, ε), unavailable rows kept."""
    dims = {r["dataset"]: r.get("d") for r in records if r.get("status", "ok") == "ok"}
    df = runs_frame(records)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    df["epsilon"] = pd.to_numeric(df["epsilon"], errors="coerce")
    rows = []
    keys = ["dataset", "algorithm", "k", "epsilon"]
    for key, cell in df.groupby(keys, dropna=False, sort=True):
        row = dict(zip(keys, key))
        ok = cell[cell["status"] == "ok"]
        row["d"] = dims.get(row["dataset"])
        if ok.empty:
            row.update(status=str(cell["status"].iloc[0]), reason=str(cell["reason"].iloc[0]),
                       mean=np.nan, std=np.nan, n=0, eps_spent_max=np.nan, eps_spent_min=np.nan)
        else:
            cost = pd.to_numeric(ok["cost_kmeans"], errors="coerce")
            spent = pd.to_numeric(ok["epsilon_spent"], errors="coerce")
            row.update(status="ok", reason="", mean=float(cost.mean()),
                       std=float(cost.std(ddof=1)) if len(cost) > 1 else 0.0, n=int(len(cost)),
                       eps_spent_max=float(spent.max()), eps_spent_min=float(spent.min()))
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def _options(item: dict) -> dict:
    return item.get("options") or {}


def _name(item: dict, alg: str) -> str:
    return (_options(item).get("names") or {}).get(alg, alg)


def _available(table: pd.DataFrame, dataset: str) -> bool:
    cell = table[table["dataset"] == dataset]
    return not cell.empty and (cell["status"] == "ok").any()


def _reason(table: pd.DataFrame, dataset: str) -> str:
    cell = table[table["dataset"] == dataset]
    return "" if cell.empty else str(cell["reason"].fillna("").iloc[0])


def _means(table: pd.DataFrame, dataset: str, alg: str, by: str = "k") -> pd.Series:
    cell = table[(table["dataset"] == dataset) & (table["algorithm"] == alg) & (table["status"] == "ok")]
    return cell.set_index(by)["mean"].sort_index()


def _spent_check(table: pd.DataFrame, private: list[str]) -> Check:
    rows = table[(table["status"] == "ok") & table["algorithm"].isin(private)]
    if rows.empty:
        return Check("every private run spent exactly its ε (run records)", None, "no private runs available")
    eps = rows["epsilon"].astype(float)
    bad = rows[((rows["eps_spent_max"] - eps).abs() > 1e-9 * eps) | ((rows["eps_spent_min"] - eps).abs() > 1e-9 * eps)]
    return Check("every private run spent exactly its ε (run records)", bad.empty,
                 f"{len(rows)} cells checked" + ("" if bad.empty else f"; mismatch in {len(bad)} cells: "
                                                  + ", ".join(f"{r.dataset}/{r.algorithm}/k={r.k}" for r in bad.itertuples())))


# ---------------------------------------------------------------------------------------------
# Table 1 (static)
# ---------------------------------------------------------------------------------------------
def aggregate_table1(records, item, ctx=None) -> pd.DataFrame:
    static = item["static"]
    return pd.DataFrame(static["rows"], columns=static["columns"])


def render_table1(table: pd.DataFrame, item: dict, stem: str) -> None:
    write_table(table, stem, title=item["title"], note="* extra assumptions on the data (as in the paper).")


# ---------------------------------------------------------------------------------------------
# Figure 1: geometry of one real run of Algorithm 1
# ---------------------------------------------------------------------------------------------
def aggregate_fig1(records, item, ctx) -> pd.DataFrame:
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
    try:
        from ..data import apply_transform, load_processed

        data = load_processed(ctx.dataset_path(rec["dataset"]))
        X, _ = apply_transform(rec["transform"], data.X, ctx.entry(rec["dataset"]))
        m = int(_options(item).get("max_points", 2000))
        idx = np.linspace(0, X.shape[0] - 1, min(m, X.shape[0])).astype(int)
        for x, y in X[idx, :2]:
            rows.append({"kind": "point", "x": x, "y": y, "side": np.nan, "depth": np.nan, "note": ""})
    except Exception as exc:  # the figure still shows the cubes; say why the points are missing
        rows.append({"kind": "note", "x": np.nan, "y": np.nan, "side": np.nan, "depth": np.nan,
                     "note": f"data points not drawn: {exc}"})
    return pd.DataFrame(rows, columns=["kind", "x", "y", "side", "depth", "note"])


def render_fig1(table: pd.DataFrame, item: dict, stem: str) -> None:
    import matplotlib.patches as mpatches
    import matplotlib.pyplot as plt

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


# ---------------------------------------------------------------------------------------------
# Figure 2 (a–c) and its table
# ---------------------------------------------------------------------------------------------
def aggregate_fig2(records, item, ctx=None) -> pd.DataFrame:
    table = _summary(records)
    wanted = _options(item).get("datasets")
    if wanted:
        table = table[table["dataset"].isin(wanted)]
    return table.reset_index(drop=True)


def _panel_datasets(table: pd.DataFrame, item: dict) -> list[str]:
    wanted = _options(item).get("datasets") or sorted(table["dataset"].unique())
    return list(wanted)


def render_fig2(table: pd.DataFrame, item: dict, stem: str) -> None:
    opts = _options(item)
    datasets = _panel_datasets(table, item)
    fig, axes = panel_grid(max(len(datasets), 1), ncols=min(max(len(datasets), 1), 3), panel_size=(3.6, 2.9))
    for ax, ds in zip(axes, datasets):
        title = (opts.get("panel") or {}).get(ds, ds)
        if not _available(table, ds):
            mark_unavailable(ax, title, _reason(table, ds) or "no runs for this dataset in this preset")
            continue
        for i, alg in enumerate(opts.get("plotted", [])):
            cell = table[(table["dataset"] == ds) & (table["algorithm"] == alg) & (table["status"] == "ok")].sort_values("k")
            if cell.empty:
                continue
            ax.errorbar(cell["k"], cell["mean"], yerr=cell["std"].fillna(0.0), label=_name(item, alg),
                        capsize=2, lw=1.2, ms=4, **style_for(alg, i))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("k")
        ax.set_ylabel("k-means objective")
        ax.set_title(title)
        ax.legend(loc="best")
    fig.suptitle(item["title"], fontsize=10)
    save_figure(fig, stem)


def render_fig2_table(table: pd.DataFrame, item: dict, stem: str) -> None:
    opts = _options(item)
    algs = [opts["nonprivate"], opts["ours"], opts["sulq"], opts["sa"]]
    out = []
    for (ds, k), cell in table.groupby(["dataset", "k"], sort=True):
        row = {"dataset": ds, "d": cell["d"].iloc[0], "k": int(k)}
        for alg in algs:
            r = cell[cell["algorithm"] == alg]
            if r.empty:
                row[_name(item, alg)] = ""
            elif r["status"].iloc[0] != "ok":
                row[_name(item, alg)] = "data unavailable"
            else:
                r = r.iloc[0]
                row[_name(item, alg)] = f"{r['mean']:.4g} ± {r['std']:.2g} (n={int(r['n'])})"
        out.append(row)
    df = pd.DataFrame(out)
    note = "ε = 1 for private algorithms; every private run spent exactly ε (see checks)."
    write_table(df, stem, title=item["title"], note=note)


def _gmean_ratio(a: pd.Series, b: pd.Series) -> float:
    common = a.index.intersection(b.index)
    if len(common) == 0:
        return float("nan")
    return float(np.exp(np.mean(np.log(a[common].to_numpy() / b[common].to_numpy()))))


def check_fig2(table: pd.DataFrame, item: dict) -> list[Check]:
    opts = _options(item)
    ours, sulq, sa, base = opts["ours"], opts["sulq"], opts["sa"], opts["nonprivate"]
    datasets = [ds for ds in _panel_datasets(table, item) if _available(table, ds)]
    unavailable = [ds for ds in _panel_datasets(table, item) if not _available(table, ds)]
    suffix = f" (not evaluable: {', '.join(unavailable)} unavailable)" if unavailable else ""
    checks = []
    # 1. ours beats SuLQ at every k on every available dataset
    viol, cells = [], 0
    for ds in datasets:
        o, s = _means(table, ds, ours), _means(table, ds, sulq)
        for k in o.index.intersection(s.index):
            cells += 1
            if not o[k] < s[k]:
                viol.append(f"{ds} k={k}: ours {fmt(o[k])} vs SuLQ {fmt(s[k])}")
    checks.append(Check("ours has a lower mean k-means objective than SuLQ at every k on every available dataset",
                        (not viol) if cells else None,
                        (f"{cells} cells; " + ("; ".join(viol) if viol else "all hold")) + suffix))
    # 2. the gap grows with the dimension
    gaps = []
    for ds in datasets:
        d = table.loc[table["dataset"] == ds, "d"].dropna()
        g = _gmean_ratio(_means(table, ds, sulq), _means(table, ds, ours))
        if len(d) and math.isfinite(g):
            gaps.append((float(d.iloc[0]), ds, g))
    gaps.sort()
    if len(gaps) >= 2:
        holds = all(b[2] > a[2] for a, b in zip(gaps, gaps[1:]))
        detail = ", ".join(f"{ds} (d={int(d)}): SuLQ/ours = {g:.3g}" for d, ds, g in gaps)
    else:
        holds, detail = None, "needs at least two available datasets of different dimension"
    checks.append(Check("the gap between ours and SuLQ (geometric-mean cost ratio SuLQ/ours over k) grows with the dimension",
                        holds, detail + suffix))
    # 3. sample and aggregate is orders of magnitude worse
    factor = float(opts.get("orders_of_magnitude", 10.0))
    viol, cells, ratios = [], 0, []
    for ds in datasets:
        o, a = _means(table, ds, ours), _means(table, ds, sa)
        for k in o.index.intersection(a.index):
            cells += 1
            ratios.append(a[k] / o[k])
            if not a[k] >= factor * o[k]:
                viol.append(f"{ds} k={k}: S&A/ours = {a[k] / o[k]:.3g}")
    checks.append(Check(f"sample and aggregate is orders of magnitude worse than ours (≥ {factor:g}× at every k)",
                        (not viol) if cells else None,
                        (f"{cells} cells, S&A/ours from {fmt(min(ratios))} to {fmt(max(ratios))}; " if ratios else "")
                        + ("; ".join(viol[:6]) if viol else "all hold") + suffix))
    # 4. ours is competitive with non-private k-means++
    cr = float(opts.get("competitive_ratio", 2.0))
    viol, cells = [], 0
    for ds in datasets:
        o, b = _means(table, ds, ours), _means(table, ds, base)
        for k in o.index.intersection(b.index):
            cells += 1
            if not o[k] <= cr * b[k]:
                viol.append(f"{ds} k={k}: ours/k-means++ = {o[k] / b[k]:.3g}")
    checks.append(Check(f"ours is competitive with non-private k-means++ (≤ {cr:g}× its objective at every k)",
                        (not viol) if cells else None,
                        f"{cells} cells; " + ("; ".join(viol[:8]) if viol else "all hold") + suffix))
    checks.append(_spent_check(table, [ours, sulq, sa]))
    return checks


# ---------------------------------------------------------------------------------------------
# Figure 2 (d): effect of ε
# ---------------------------------------------------------------------------------------------
def aggregate_fig2d(records, item, ctx=None) -> pd.DataFrame:
    return _summary(records)


def render_fig2d(table: pd.DataFrame, item: dict, stem: str) -> None:
    opts = _options(item)
    fig, axes = panel_grid(1, ncols=1, panel_size=(4.2, 3.2))
    ax = axes[0]
    datasets = sorted(table["dataset"].unique())
    ds = datasets[0] if datasets else "mnist70k"
    if not _available(table, ds):
        mark_unavailable(ax, item["title"], _reason(table, ds))
        save_figure(fig, stem)
        return
    names = {opts["nonprivate"]: "non-private", opts["ours"]: "ours", opts["sulq"]: "SuLQ"}
    eps_grid = sorted(table.loc[table["epsilon"].notna(), "epsilon"].unique())
    for i, alg in enumerate([opts["nonprivate"], opts["ours"], opts["sulq"]]):
        cell = table[(table["algorithm"] == alg) & (table["status"] == "ok")]
        if cell.empty:
            continue
        if alg == opts["nonprivate"]:
            m, s = float(cell["mean"].iloc[0]), float(cell["std"].fillna(0).iloc[0])
            ax.plot(eps_grid, [m] * len(eps_grid), label=names[alg], **style_for(alg, i))
            ax.fill_between(eps_grid, m - s, m + s, color=f"C{i}", alpha=0.15)
        else:
            cell = cell.sort_values("epsilon")
            ax.errorbar(cell["epsilon"], cell["mean"], yerr=cell["std"].fillna(0), capsize=2, label=names[alg],
                        **style_for(alg, i))
    ax.set_xlabel("ε")
    ax.set_ylabel("k-means objective")
    ax.set_title(f"{item['title']}\n({ds}, k = {int(table['k'].iloc[0])})", fontsize=9)
    ax.legend(loc="best")
    save_figure(fig, stem)


def check_fig2d(table: pd.DataFrame, item: dict) -> list[Check]:
    opts = _options(item)
    ours, sulq, base = opts["ours"], opts["sulq"], opts["nonprivate"]
    ok = table[table["status"] == "ok"]
    if ok.empty:
        return [Check("Figure 2(d) claims", None, "data unavailable")]
    o = ok[ok["algorithm"] == ours].set_index("epsilon")["mean"].sort_index()
    s = ok[ok["algorithm"] == sulq].set_index("epsilon")["mean"].sort_index()
    b = ok[ok["algorithm"] == base]["mean"]
    checks = []
    common = o.index.intersection(s.index)
    viol = [f"ε={e:g}: ours {fmt(o[e])} vs SuLQ {fmt(s[e])}" for e in common if not o[e] < s[e]]
    checks.append(Check("ours has a lower mean objective than SuLQ at every ε", (not viol) if len(common) else None,
                        f"{len(common)} ε values; " + ("; ".join(viol) if viol else "all hold")))
    cr = float(opts.get("competitive_ratio", 2.0))
    if len(b) and len(o):
        bm = float(b.iloc[0])
        viol = [f"ε={e:g}: ours/k-means++ = {o[e] / bm:.3g}" for e in o.index if not o[e] <= cr * bm]
        checks.append(Check(f"ours is competitive with non-private k-means++ even for small ε (≤ {cr:g}× at every ε)",
                            not viol, "; ".join(viol) if viol else f"max ratio {float((o / bm).max()):.3g}"))
    if len(common) >= 2:
        e_lo, e_hi = common.min(), common.max()
        s_det = s[e_lo] / s[e_hi]
        o_det = o[e_lo] / o[e_hi]
        checks.append(Check("SuLQ deteriorates quickly as ε decreases (its cost grows more from the largest to the "
                            "smallest ε than ours does)", bool(s_det > 1 and s_det > o_det),
                            f"cost(ε={e_lo:g})/cost(ε={e_hi:g}): SuLQ {s_det:.3g}, ours {o_det:.3g}"))
    checks.append(_spent_check(table, [ours, sulq]))
    return checks


# ---------------------------------------------------------------------------------------------
# Reconstructed supplementary 3-D comparison
# ---------------------------------------------------------------------------------------------
def aggregate_supp3d(records, item, ctx=None) -> pd.DataFrame:
    return _summary(records)


def render_supp3d(table: pd.DataFrame, item: dict, stem: str) -> None:
    rows = []
    for r in table.itertuples():
        if r.status != "ok":
            rows.append({"algorithm": _name(item, r.algorithm), "k-means objective (mean ± sd)": "data unavailable",
                         "runs": 0, "ε spent": ""})
            continue
        rows.append({"algorithm": _name(item, r.algorithm),
                     "k-means objective (mean ± sd)": f"{r.mean:.4g} ± {r.std:.2g}",
                     "runs": int(r.n), "ε spent": "" if pd.isna(r.epsilon) else f"{r.eps_spent_max:g}"})
    df = pd.DataFrame(rows)
    write_table(df, stem, title=item["title"],
                note="Reconstructed supplementary comparison: the supplement is not available; data and n are our choice "
                     "(see config). ε spent is blank for the non-private reference.")


def check_supp3d(table: pd.DataFrame, item: dict) -> list[Check]:
    opts = _options(item)
    ok = table[(table["status"] == "ok") & table["epsilon"].notna()]
    if ok.empty:
        return [Check("3-D comparison claims", None, "data unavailable")]
    means = ok.set_index("algorithm")["mean"]
    grid, kv = opts["griding"], opts["kvariates"]
    checks = []
    if grid in means:
        best = means.idxmin()
        checks.append(Check("griding (EUGkM) achieves the best objective among the private algorithms",
                            best == grid, ", ".join(f"{_name(item, a)} {fmt(v)}" for a, v in means.sort_values().items())))
    comp = [a for a in opts["comparable"] if a in means]
    if len(comp) >= 2:
        ratio = float(means[comp].max() / means[comp].min())
        f = float(opts.get("comparable_factor", 3.0))
        checks.append(Check(f"sample and aggregate, SuLQ and ours perform comparably (max/min ≤ {f:g})", ratio <= f,
                            f"max/min = {ratio:.3g}"))
    if kv in means:
        others = means.drop(kv)
        f = float(opts.get("order_of_magnitude", 10.0))
        r = float(means[kv] / others.min())
        checks.append(Check(f"k-variates++ is an order of magnitude worse than the best (≥ {f:g}×)", r >= f,
                            f"k-variates++ / best = {r:.3g}"))
    checks.append(_spent_check(table, list(means.index)))
    return checks
