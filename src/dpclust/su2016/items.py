"""Aggregate, render and check functions for Su et al. (2016): Table 1 and Figures 1-7.

Tables are tidy: one row per (group, dataset, k, method label, ε) with NICV statistics and the
baseline of §5.1 (minimum NICV of non-private Lloyd over the 30 sets, per dataset and k). Every
renderer reads its table only. Panels of datasets that cannot be obtained show "data unavailable".
Checks encode the paper's claims (§5.1-§6.4) with the quoted numbers beside ours; a claim that does
not hold in our runs is reported as not holding.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..aggregate import Check, fmt, runs_frame
from ..plotting import mark_unavailable, panel_grid, save_figure, style_for, write_table

PANEL_TITLES = {"s1": "S1", "gowalla": "Gowalla", "tiger": "TIGER", "image": "Image",
                "adult_num": "Adult-num", "lifesci": "Lifesci"}
METHOD_ORDER = ["DPLloyd", "EUGkM", "PGkM", "GkM", "GkM-3K", "Hybrid", "Hybrid (forced)", "Baseline"]
COLUMNS = ["group", "dataset", "k", "d", "n_points", "method", "algorithm", "epsilon", "nicv_mean",
           "nicv_std", "nicv_min", "n_runs", "baseline", "gap", "ratio", "wall_mean_s", "wall_median_s", "hybrid_applied",
           "baseline_sizes", "status", "reason"]


# ---------------------------------------------------------------------------------------------
# aggregation
# ---------------------------------------------------------------------------------------------
def _label(options: dict, group: str, algorithm: str) -> str:
    labels = options.get("labels") or {}
    return labels.get(f"{group}:{algorithm}") or labels.get(algorithm) or algorithm


def _baseline_sizes(records: list[dict]) -> dict:
    """Sorted cluster sizes of the minimum-NICV baseline run per (dataset, k)."""
    best: dict = {}
    for rec in records:
        if rec.get("algorithm") != "su2016.lloyd" or rec.get("status") != "ok":
            continue
        for run in rec["runs"]:
            key = (rec["dataset"], rec["k"])
            if key not in best or run["nicv"] < best[key][0]:
                best[key] = (run["nicv"], sorted(run.get("cluster_sizes") or [], reverse=True))
    return {key: " ".join(str(s) for s in sizes) for key, (_, sizes) in best.items()}


def aggregate_nicv(records, item, ctx=None) -> pd.DataFrame:
    """NICV per (group, dataset, k, method, ε) with the §5.1 baseline (min over the Lloyd runs)."""
    options = item.get("options") or {}
    df = runs_frame(records, info_keys=["hybrid_applied"])
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    meta = {(r["dataset"]): (r.get("d"), r.get("n")) for r in records if r.get("status") == "ok"}
    df["method"] = [_label(options, g, a) for g, a in zip(df["group"], df["algorithm"])]
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
    base = table[(table["method"] == "Baseline") & (table["status"] == "ok")]
    base = base.groupby(["dataset", "k"])["nicv_min"].min().rename("baseline_value").reset_index()
    table = table.merge(base, on=["dataset", "k"], how="left")
    table["baseline"] = table["baseline_value"]
    table = table.drop(columns="baseline_value")
    table["gap"] = table["nicv_mean"] - table["baseline"]
    table["ratio"] = table["nicv_mean"] / table["baseline"]
    sizes = _baseline_sizes(records)
    table["baseline_sizes"] = [sizes.get((d, k), "") if m == "Baseline" else ""
                               for d, k, m in zip(table["dataset"], table["k"], table["method"])]
    table["d"] = [meta.get(d, (None, None))[0] for d in table["dataset"]]
    table["n_points"] = [meta.get(d, (None, None))[1] for d in table["dataset"]]
    table = table.sort_values(["dataset", "k", "method", "group", "epsilon"], na_position="first")
    return table.reset_index(drop=True)[COLUMNS]


def aggregate_fig3(records, item, ctx=None) -> pd.DataFrame:
    """Mean NICV per (dataset, block-size exponent e, method: GkM / SAG / Noise)."""
    table = aggregate_nicv(records, item, ctx)
    exps = (item.get("options") or {}).get("exponents") or {}
    table["exponent"] = [exps.get(g, np.nan) for g in table["group"]]
    return table


def aggregate_fig4(records, item, ctx=None) -> pd.DataFrame:
    """Mean NICV after each iteration for Lloyd (over the 30 sets) and Gene (over runs)."""
    options = item.get("options") or {}
    rows = []
    run_id = 0
    for rec in records:
        method = _label(options, rec.get("group", ""), rec["algorithm"])
        if rec.get("status") != "ok":
            rows.append({"dataset": rec["dataset"], "k": rec["k"], "method": method, "iteration": np.nan,
                         "nicv_mean": np.nan, "n_runs": 0, "status": rec.get("status"), "reason": rec.get("reason", "")})
            continue
        traces = [run["info"].get("trace_nicv") or [] for run in rec["runs"]]
        for tr in traces:
            run_id += 1
            for i, v in enumerate(tr, start=1):
                rows.append({"dataset": rec["dataset"], "k": rec["k"], "method": method, "iteration": i,
                             "nicv": v, "status": "ok", "reason": "", "run": run_id})
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=["dataset", "k", "method", "iteration", "nicv_mean", "n_runs", "status", "reason"])
    bad = df[df["status"] != "ok"].drop_duplicates(subset=["dataset", "method"])
    ok = df[df["status"] == "ok"]
    out = [bad[["dataset", "k", "method", "iteration", "nicv_mean", "n_runs", "status", "reason"]]] if not bad.empty else []
    if not ok.empty:
        # Lloyd stops when converged: carry each run's last value forward to the longest trace
        full = []
        for (ds, k, method), part in ok.groupby(["dataset", "k", "method"]):
            last = part.groupby("run")["iteration"].max()
            horizon = int(last.max())
            for run, sub in part.groupby("run"):
                vals = sub.sort_values("iteration")["nicv"].to_numpy()
                vals = np.concatenate([vals, np.full(horizon - vals.size, vals[-1])])
                full.append(pd.DataFrame({"dataset": ds, "k": k, "method": method,
                                          "iteration": np.arange(1, horizon + 1), "nicv": vals}))
        full = pd.concat(full)
        stats = (full.groupby(["dataset", "k", "method", "iteration"])["nicv"]
                 .agg(nicv_mean="mean", n_runs="size").reset_index())
        stats["status"], stats["reason"] = "ok", ""
        out.append(stats)
    return pd.concat(out, ignore_index=True).sort_values(["dataset", "method", "iteration"]).reset_index(drop=True)


def aggregate_table1(records, item, ctx) -> pd.DataFrame:
    """Table 1 from the processed datasets (N, d) and the configured k."""
    options = item.get("options") or {}
    paper = options.get("paper") or {}
    ks = options.get("k") or {}
    rows = []
    for name in item.get("datasets") or []:
        is_synth = name.startswith("su_synth")
        label = "Synthetic" if is_synth else PANEL_TITLES.get(name, name)
        ref = paper.get("synthetic" if is_synth else name, {})
        row = {"dataset": label, "name": name, "status": "ok", "reason": ""}
        try:
            n, d = _dataset_shape(ctx.dataset_path(name))
        except _Unavailable as exc:
            row.update(status="data_unavailable", reason=str(exc))
            n = d = None
        k = ks.get(name)
        if is_synth:
            row.update(N=n, d="[2, 10]", k="[2, 10]", l_gkm=_l_gkm(n) if n else None, l_gkm3k="N/(3k)")
        else:
            row.update(N=n, d=d, k=k, l_gkm=_l_gkm(n) if n else None,
                       l_gkm3k=_l_gkm3k(n, k) if (n and k) else None)
        for key in ("N", "d", "k", "l_gkm", "l_gkm3k"):
            row[f"paper_{key}"] = ref.get(key)
        rows.append(row)
    for key in ("N", "l_gkm"):
        for row in rows:
            row[key] = None if row.get(key) is None else int(row[key])
    cols = ["dataset", "N", "paper_N", "d", "paper_d", "k", "paper_k", "l_gkm", "paper_l_gkm",
            "l_gkm3k", "paper_l_gkm3k", "status", "reason", "name"]
    out = pd.DataFrame(rows).reindex(columns=cols)
    for key in ("N", "d", "l_gkm", "l_gkm3k"):
        out[key] = out[key].astype(object).where(out[key].notna(), None)
    return out


def _l_gkm(n):
    return int(round(n ** 0.4))


def _l_gkm3k(n, k):
    return int(round(n / (3 * k)))


class _Unavailable(Exception):
    pass


def _dataset_shape(path) -> tuple[int, int]:
    from .. import data as dpdata

    try:
        ds = dpdata.load_processed(path)
    except getattr(dpdata, "DatasetUnavailable", ()) as exc:  # noqa: B030
        raise _Unavailable(str(exc)) from None
    return int(ds.X.shape[0]), int(ds.X.shape[1])


# ---------------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------------
def _status_of(table: pd.DataFrame, dataset: str) -> tuple[str, str]:
    part = table[table["dataset"] == dataset]
    if part.empty:
        return "absent", "not run in this preset"
    if (part["status"] == "ok").any():
        return "ok", ""
    return "data_unavailable", str(part["reason"].iloc[0])


def _mark(ax, title, status, reason):
    if status == "absent":
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "not run in this preset", ha="center", va="center", transform=ax.transAxes,
                fontsize=8, color="0.3")
    else:
        mark_unavailable(ax, title, reason)


def _nicv_panels(table, item, stem, methods, forced_only=None):
    options = item.get("options") or {}
    panels = options.get("panels") or sorted(table["dataset"].unique())
    fig, axes = panel_grid(len(panels), ncols=3)
    for ax, ds in zip(axes, panels):
        title = PANEL_TITLES.get(ds, ds)
        status, reason = _status_of(table, ds)
        if status != "ok":
            _mark(ax, title, status, reason)
            continue
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        for i, method in enumerate(methods):
            if method == "Baseline":
                continue
            line = part[part["method"] == method].sort_values("epsilon")
            if line.empty:
                continue
            ax.plot(line["epsilon"], line["nicv_mean"], label=method, **style_for(method, METHOD_ORDER.index(method)
                                                                               if method in METHOD_ORDER else i))
        base = part["baseline"].dropna()
        if not base.empty:
            ax.axhline(float(base.iloc[0]), color="k", linestyle="--", linewidth=1, label="Baseline")
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
    _tight(fig, rect=(0, 0.05, 1, 1))
    save_figure(fig, stem)


def _tight(fig, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig.tight_layout(**kw)


def render_fig1(table, item, stem):
    _nicv_panels(table, item, stem, ["DPLloyd", "EUGkM", "PGkM", "GkM", "GkM-3K", "Baseline"])


def render_fig5(table, item, stem):
    _nicv_panels(table, item, stem, ["Hybrid", "EUGkM", "DPLloyd", "Hybrid (forced)", "Baseline"])


def _heatmaps(table, item, stem, panels):
    """One k × d heatmap of NICV − baseline per method, each with its own colour scale (the
    methods differ by orders of magnitude; a shared scale would hide all but the worst)."""
    t = table[(table["status"] == "ok") & table["method"].isin(panels)].copy()
    t["K"] = t["dataset"].str.extract(r"_k(\d+)_")[0].astype(float)
    t["D"] = t["dataset"].str.extract(r"_d(\d+)$")[0].astype(float)
    fig, axes = panel_grid(len(panels), ncols=4, panel_size=(3.4, 2.9))
    any_ok = table["status"].eq("ok").any()
    for ax, method in zip(axes, panels):
        part = t[t["method"] == method]
        if part.empty:
            if any_ok:
                _mark(ax, method, "absent", "")
            else:
                reason = str(table["reason"].dropna().iloc[0]) if table["reason"].notna().any() else ""
                mark_unavailable(ax, method, reason)
            continue
        grid = part.pivot_table(index="K", columns="D", values="gap", aggfunc="mean")
        grid = grid.reindex(index=range(2, 11), columns=range(2, 11))
        im = ax.imshow(grid.to_numpy(), origin="lower", cmap="viridis", extent=(1.5, 10.5, 1.5, 10.5),
                       aspect="auto")
        fig.colorbar(im, ax=ax, shrink=0.85, label="NICV − baseline")
        ax.set_title(method)
        ax.set_xlabel("d")
        ax.set_ylabel("k")
    save_figure(fig, stem)


def render_fig2(table, item, stem):
    _heatmaps(table, item, stem, (item.get("options") or {}).get("panels"))


def render_fig6(table, item, stem):
    _heatmaps(table, item, stem, (item.get("options") or {}).get("panels"))


def render_fig3(table, item, stem):
    options = item.get("options") or {}
    panels = options.get("panels")
    fig, axes = panel_grid(len(panels), ncols=3)
    for ax, ds in zip(axes, panels):
        title = PANEL_TITLES.get(ds, ds)
        status, reason = _status_of(table, ds)
        if status != "ok":
            _mark(ax, title, status, reason)
            continue
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        for i, method in enumerate(["GkM", "SAG", "Noise"]):
            line = part[part["method"] == method].sort_values("exponent")
            if not line.empty:
                ax.plot(line["exponent"], line["nicv_mean"], label=method, **style_for(method, i))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("block size exponent e (block size N^e)")
        ax.set_ylabel("NICV")
        ax.legend()
    _tight(fig)
    save_figure(fig, stem)


def render_fig4(table, item, stem):
    options = item.get("options") or {}
    panels = options.get("panels")
    fig, axes = panel_grid(len(panels), ncols=3)
    for ax, ds in zip(axes, panels):
        title = PANEL_TITLES.get(ds, ds)
        status, reason = _status_of(table, ds)
        if status != "ok":
            _mark(ax, title, status, reason)
            continue
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        for i, method in enumerate(["Lloyd", "Gene"]):
            line = part[part["method"] == method].sort_values("iteration")
            if not line.empty:
                ax.plot(line["iteration"], line["nicv_mean"], label=method, **style_for(method, i))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("iterations")
        ax.set_ylabel("NICV")
        ax.legend()
    _tight(fig)
    save_figure(fig, stem)


def render_fig7(table, item, stem):
    import matplotlib.pyplot as plt

    options = item.get("options") or {}
    eps = float(options.get("epsilon", 0.1))
    panels = options.get("panels")
    t = table[(table["status"] == "ok") & np.isclose(table["epsilon"].astype(float), eps)
              & table["method"].isin(["DPLloyd", "EUGkM"])]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    x = np.arange(len(panels))
    for i, method in enumerate(["DPLloyd", "EUGkM"]):
        vals = [t[(t["dataset"] == ds) & (t["method"] == method)]["wall_median_s"].mean() for ds in panels]
        ax.bar(x + (i - 0.5) * 0.38, [v if v == v else 0 for v in vals], width=0.38, label=method,
               color=f"C{i}")
    for j, ds in enumerate(panels):
        status, _ = _status_of(table, ds)
        if status != "ok":
            ax.text(j, 0.5, "data\nunavailable", ha="center", va="center", fontsize=7, color="0.3",
                    transform=ax.get_xaxis_transform())
    ax.set_xticks(x, [PANEL_TITLES.get(p, p) for p in panels])
    if (t["wall_median_s"] > 0).any():
        ax.set_yscale("log")
    ax.set_ylabel("seconds per run (log)")
    ax.set_title(f"Running time per run, ε = {eps:g}")
    ax.legend()
    _tight(fig)
    save_figure(fig, stem)


def _intlike(v):
    if isinstance(v, float) and v == v and v.is_integer():
        return str(int(v))
    return v


def render_table1(table, item, stem):
    show = table.drop(columns=["name"]).copy()
    for col in show.columns:
        if col not in ("status", "reason", "dataset"):
            show[col] = [_intlike(v) for v in show[col]]
    write_table(show, stem, title=item.get("title", "Table 1"),
                note="paper_* columns: values printed in Su et al. 2016 Table 1. "
                     "l_gkm = round(N^0.4), l_gkm3k = round(N/(3k)).")


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
def _plain_bools(fn):
    """Checks must carry holds ∈ {True, False, None} (numpy booleans are converted)."""
    import functools

    @functools.wraps(fn)
    def wrapper(table, item):
        out = fn(table, item)
        return [Check(c.claim, None if c.holds is None else bool(c.holds), c.detail) for c in out]
    return wrapper


def _cell(table, ds, method, eps) -> float:
    part = table[(table["dataset"] == ds) & (table["method"] == method) & (table["status"] == "ok")]
    part = part[np.isclose(part["epsilon"].astype(float), eps)]
    return float(part["nicv_mean"].mean()) if not part.empty else float("nan")


def _available(table, datasets):
    return [d for d in datasets if _status_of(table, d)[0] == "ok"]


def _eps_values(table):
    e = table.loc[table["status"] == "ok", "epsilon"].dropna().astype(float)
    return sorted(set(e.round(12)))


def _frac(bools) -> tuple[float, int]:
    b = [x for x in bools if x is not None]
    return (sum(b) / len(b) if b else float("nan")), len(b)


@_plain_bools
def check_fig1(table, item) -> list[Check]:
    options = item.get("options") or {}
    panels = options.get("panels") or []
    avail = _available(table, panels)
    eps = _eps_values(table)
    out = []
    if not avail:
        return [Check("Figure 1 claims", None, "no dataset available")]
    # 1. GkM is by far the worst (§5.2 "GkM is always much worse than others")
    worst = []
    for ds in avail:
        for e in eps:
            g = _cell(table, ds, "GkM", e)
            others = [_cell(table, ds, m, e) for m in ("DPLloyd", "EUGkM", "PGkM", "GkM-3K")]
            others = [o for o in others if o == o]
            if g == g and others:
                worst.append(g >= max(others))
    f, n = _frac(worst)
    out.append(Check("GkM is the worst method (§5.1/§5.2)", None if n == 0 else f >= 0.9,
                     f"GkM worst in {fmt(f * 100 if n else float('nan'), 3)}% of {n} (dataset, ε) cells (holds if ≥ 90%)"))
    # 2. DPLloyd is the best interactive method, except possibly S1 at ε < 0.15
    best, exc = [], []
    for ds in avail:
        for e in eps:
            dpl = _cell(table, ds, "DPLloyd", e)
            others = [_cell(table, ds, m, e) for m in ("PGkM", "GkM", "GkM-3K")]
            others = [o for o in others if o == o]
            if dpl != dpl or not others:
                continue
            if ds == "s1" and e < 0.15:
                exc.append(f"S1 ε={e:g}: DPLloyd {fmt(dpl)} vs PGkM {fmt(_cell(table, ds, 'PGkM', e))}")
                continue
            best.append(dpl <= min(others))
    f, n = _frac(best)
    out.append(Check("DPLloyd is the best interactive method except possibly S1 at ε < 0.15 (§5.1)",
                     None if n == 0 else f == 1.0,
                     f"DPLloyd best interactive in {sum(best)}/{n} cells; exempt cells: {'; '.join(exc) or 'none'}"))
    # 3. EUGkM beats DPLloyd on low-d datasets at small ε
    small = [e for e in eps if e <= 0.15]
    low = [d for d in options.get("low_d", []) if d in avail]
    res = [(_cell(table, d, "EUGkM", e), _cell(table, d, "DPLloyd", e), d, e) for d in low for e in small]
    res = [r for r in res if r[0] == r[0] and r[1] == r[1]]
    out.append(Check("EUGkM beats DPLloyd on the low-dimensional datasets at small ε (≤ 0.15) (§5.1)",
                     None if not res else all(a < b for a, b, _, _ in res),
                     "; ".join(f"{PANEL_TITLES.get(d, d)} ε={e:g}: EUGkM {fmt(a)} vs DPLloyd {fmt(b)}" for a, b, d, e in res)
                     or "no low-d dataset available"))
    # 4. DPLloyd beats EUGkM on the high-dimensional datasets almost always
    high = [d for d in options.get("high_d", []) if d in avail]
    res = [(_cell(table, d, "DPLloyd", e) < _cell(table, d, "EUGkM", e)) for d in high for e in eps
           if _cell(table, d, "DPLloyd", e) == _cell(table, d, "DPLloyd", e) and _cell(table, d, "EUGkM", e) == _cell(table, d, "EUGkM", e)]
    f, n = _frac(res)
    out.append(Check("DPLloyd beats EUGkM on the high-dimensional datasets (Adult-num, Lifesci) in almost all ε (§5.1)",
                     None if n == 0 else f >= 0.8,
                     f"DPLloyd < EUGkM in {sum(res)}/{n} cells on {', '.join(PANEL_TITLES.get(d, d) for d in high) or 'none'} (holds if ≥ 80%)"))
    # 5. GkM-3K improves on GkM (§5.2)
    res = [(_cell(table, d, "GkM-3K", e) < _cell(table, d, "GkM", e)) for d in avail for e in eps
           if _cell(table, d, "GkM", e) == _cell(table, d, "GkM", e) and _cell(table, d, "GkM-3K", e) == _cell(table, d, "GkM-3K", e)]
    f, n = _frac(res)
    out.append(Check("GkM-3K is much better than GkM (§5.2)", None if n == 0 else f >= 0.9,
                     f"GkM-3K < GkM in {sum(res)}/{n} cells (holds if ≥ 90%)"))
    for ds in panels:
        if ds not in avail:
            out.append(Check(f"Figure 1 panel {PANEL_TITLES.get(ds, ds)}", None, _status_of(table, ds)[1]))
    return out


@_plain_bools
def check_fig5(table, item) -> list[Check]:
    options = item.get("options") or {}
    quoted = options.get("quoted") or {}
    avail = _available(table, options.get("panels") or [])
    eps = _eps_values(table)
    out = []
    # Hybrid at least as good as both on high-d data (most ε)
    high = [d for d in options.get("high_d", []) if d in avail]
    res = []
    for d in high:
        for e in eps:
            h, eu, dp = (_cell(table, d, m, e) for m in ("Hybrid", "EUGkM", "DPLloyd"))
            if h == h and eu == eu and dp == dp:
                res.append(h <= min(eu, dp))
    f, n = _frac(res)
    out.append(Check("Hybrid outperforms EUGkM and DPLloyd on the high-dimensional datasets in most cases (§6.4)",
                     None if n == 0 else f > 0.5, f"Hybrid ≤ min(EUGkM, DPLloyd) in {sum(res)}/{n} cells (holds if > 50%)"))
    # low-d: hybrid falls back to EUGkM for small ε
    low = [d for d in options.get("low_d", []) if d in avail]
    part = table[table["dataset"].isin(low) & (table["method"] == "Hybrid") & (table["status"] == "ok")]
    small = part[part["epsilon"].astype(float) <= 0.15]
    out.append(Check("On low-d datasets the hybrid falls back to EUGkM for small ε (§6.4)",
                     None if small.empty else bool((small["hybrid_applied"] == 0).all()),
                     "; ".join(f"{PANEL_TITLES.get(r.dataset, r.dataset)} ε={r.epsilon:g}: applied in "
                               f"{fmt(100 * r.hybrid_applied, 3)}% of runs" for r in small.itertuples()) or "no low-d data"))
    # Adult-num ε = 0.05: fallback 0.370 vs forced 0.244
    q = quoted.get("adult_eps005", {})
    if "adult_num" in avail:
        fb, fo = _cell(table, "adult_num", "Hybrid", 0.05), _cell(table, "adult_num", "Hybrid (forced)", 0.05)
        applied = table[(table["dataset"] == "adult_num") & (table["method"] == "Hybrid")
                        & np.isclose(table["epsilon"].astype(float), 0.05)]["hybrid_applied"]
        out.append(Check("Adult-num, ε = 0.05: the forced hybrid beats the fallback to EUGkM (§6.4: 0.244 vs 0.370)",
                         None if (fb != fb or fo != fo) else fo < fb,
                         f"ours: fallback {fmt(fb)} (hybrid applied in {fmt(100 * float(applied.mean()) if len(applied) else float('nan'), 3)}% of runs), "
                         f"forced {fmt(fo)}; paper: fallback {q.get('fallback')}, forced {q.get('forced')}"))
        base = table[(table["dataset"] == "adult_num") & (table["method"] == "Baseline")]
        sizes = [int(s) for s in str(base["baseline_sizes"].iloc[0]).split()] if not base.empty and str(base["baseline_sizes"].iloc[0]) else []
        qs = quoted.get("adult_baseline_sizes", {})
        tol = float(options.get("size_tolerance", 0.1))
        holds = None
        if sizes:
            holds = (abs(sizes[0] - qs["largest"]) <= tol * qs["largest"]
                     and abs(sizes[-1] - qs["smallest"]) <= tol * qs["smallest"])
        out.append(Check(f"Adult-num baseline clusters: largest 13,894, smallest 3,160 tuples (§6.4; within ±{tol:.0%})",
                         holds, f"ours (min-NICV Lloyd run, sizes sorted): {' '.join(map(str, sizes)) or 'n/a'}; "
                                f"paper: largest {qs.get('largest')}, smallest {qs.get('smallest')}"))
    else:
        out.append(Check("Adult-num, ε = 0.05: forced hybrid beats the fallback (§6.4)", None, "Adult-num unavailable"))
    qg = quoted.get("gowalla_eps07", {})
    if "gowalla" in avail:
        h, eu = _cell(table, "gowalla", "Hybrid", 0.7), _cell(table, "gowalla", "EUGkM", 0.7)
        out.append(Check("Gowalla, ε = 0.7: hybrid slightly better than EUGkM (§6.4: 0.02172 vs 0.02174)",
                         None if (h != h or eu != eu) else h <= eu,
                         f"ours: hybrid {fmt(h)}, EUGkM {fmt(eu)}; paper: {qg.get('hybrid')} vs {qg.get('eugkm')}"))
    else:
        out.append(Check("Gowalla, ε = 0.7: hybrid slightly better than EUGkM (§6.4: 0.02172 vs 0.02174)", None,
                         f"Gowalla: {_status_of(table, 'gowalla')[1]}; paper: {qg.get('hybrid')} vs {qg.get('eugkm')}"))
    return out


def _grid(table, method):
    t = table[(table["status"] == "ok") & (table["method"] == method)].copy()
    t["K"] = t["dataset"].str.extract(r"_k(\d+)_")[0].astype(float)
    t["D"] = t["dataset"].str.extract(r"_d(\d+)$")[0].astype(float)
    return t.groupby(["K", "D"])["gap"].mean().reset_index()


def _trend(g, var) -> float:
    """Spearman correlation between `var` (k or d) and the gap to the baseline."""
    if len(g) < 3 or g[var].nunique() < 2:
        return float("nan")
    return float(g[var].rank().corr(g["gap"].rank()))


@_plain_bools
def check_fig2(table, item) -> list[Check]:
    out = []
    eug, dpl = _grid(table, "EUGkM θ=10"), _grid(table, "DPLloyd")
    r_eug_d, r_dpl_k = _trend(eug, "D"), _trend(dpl, "K")
    out.append(Check("EUGkM degrades as d grows (§5.1, Figure 2)", None if r_eug_d != r_eug_d else r_eug_d > 0,
                     f"Spearman(d, EUGkM θ=10 − baseline) = {fmt(r_eug_d, 3)} over {len(eug)} datasets (holds if > 0)"))
    out.append(Check("DPLloyd degrades as k grows (§5.1, §6.1, Figure 2)", None if r_dpl_k != r_dpl_k else r_dpl_k > 0,
                     f"Spearman(k, DPLloyd − baseline) = {fmt(r_dpl_k, 3)} over {len(dpl)} datasets (holds if > 0)"))
    merged = eug.merge(dpl, on=["K", "D"], suffixes=("_eug", "_dpl"))
    hi_d = merged[merged["D"] == merged["D"].max()] if not merged.empty else merged
    res = (hi_d["gap_dpl"] < hi_d["gap_eug"]).tolist() if not hi_d.empty else []
    out.append(Check("DPLloyd is more scalable in d than EUGkM: DPLloyd wins at the largest d (§6.2)",
                     None if not res else sum(res) > len(res) / 2,
                     f"DPLloyd < EUGkM θ=10 in {sum(res)}/{len(res)} datasets at d = {fmt(hi_d['D'].max()) if len(hi_d) else 'n/a'}"))
    thetas = [m for m in table["method"].unique() if str(m).startswith("EUGkM θ=")]
    if len(thetas) > 1:
        t = table[(table["status"] == "ok") & table["method"].isin(thetas)]
        piv = t.pivot_table(index="dataset", columns="method", values="nicv_mean", aggfunc="mean").dropna()
        if not piv.empty:
            good = (piv["EUGkM θ=10"] <= 1.1 * piv.min(axis=1)) if "EUGkM θ=10" in piv else pd.Series(dtype=bool)
            out.append(Check("θ = 10 works well for EUGkM in most cases (§5.1)", bool(good.mean() > 0.5) if len(good) else None,
                             f"θ=10 within 10% of the best θ on {int(good.sum())}/{len(good)} datasets (holds if > 50%)"))
    return out


@_plain_bools
def check_fig6(table, item) -> list[Check]:
    hyb, eug = _grid(table, "Hybrid"), _grid(table, "EUGkM θ=10")
    m = hyb.merge(eug, on=["K", "D"], suffixes=("_h", "_e"))
    if m.empty:
        return [Check("Hybrid is more scalable than EUGkM in k and d (§6.4, Figure 6)", None, "no synthetic runs")]
    res = (m["gap_h"] <= m["gap_e"]).tolist()
    corner = m[(m["D"] == m["D"].max())]
    return [Check("Hybrid is at least as good as EUGkM on most synthetic datasets (§6.4, Figure 6)",
                  sum(res) > len(res) / 2, f"Hybrid ≤ EUGkM θ=10 on {sum(res)}/{len(res)} datasets"),
            Check("Hybrid beats EUGkM at the largest d (more scalable in d, §6.4)",
                  bool((corner["gap_h"] <= corner["gap_e"]).mean() > 0.5),
                  f"{int((corner['gap_h'] <= corner['gap_e']).sum())}/{len(corner)} datasets at d = {fmt(m['D'].max())}")]


@_plain_bools
def check_fig3(table, item) -> list[Check]:
    out = []
    avail = _available(table, (item.get("options") or {}).get("panels") or [])
    for ds in avail:
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        at = part[np.isclose(part["exponent"].astype(float), 0.6)]
        sag = at[at["method"] == "SAG"]["nicv_mean"].mean()
        noise = at[at["method"] == "Noise"]["nicv_mean"].mean()
        out.append(Check(f"{PANEL_TITLES.get(ds, ds)}: at l = N^0.4 (block size N^0.6) the noise error dominates SAG (§5.2)",
                         None if (sag != sag or noise != noise) else noise > sag,
                         f"Noise {fmt(noise)} vs SAG {fmt(sag)}"))
        g = part[part["method"] == "GkM"].sort_values("exponent")
        if len(g) >= 2 and (g["exponent"] < 0.6).any():
            small = g[g["exponent"] < 0.6]["nicv_mean"].min()
            at06 = g[np.isclose(g["exponent"], 0.6)]["nicv_mean"].mean()
            out.append(Check(f"{PANEL_TITLES.get(ds, ds)}: smaller blocks than N^0.6 reduce GkM's error (§5.2)",
                             None if at06 != at06 else small < at06,
                             f"best GkM NICV at e < 0.6: {fmt(small)}; at e = 0.6: {fmt(at06)}"))
    return out or [Check("Figure 3 claims", None, "no dataset available")]


@_plain_bools
def check_fig4(table, item) -> list[Check]:
    out = []
    avail = _available(table, (item.get("options") or {}).get("panels") or [])
    for ds in avail:
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        def at(method, it):
            s = part[(part["method"] == method) & (part["iteration"] <= it)].sort_values("iteration")
            return float(s["nicv_mean"].iloc[-1]) if not s.empty else float("nan")
        l3, g3 = at("Lloyd", 3), at("Gene", 3)
        out.append(Check(f"{PANEL_TITLES.get(ds, ds)}: Lloyd improves faster than Gene in the first iterations (§5.3)",
                         None if (l3 != l3 or g3 != g3) else l3 < g3, f"NICV after 3 iterations: Lloyd {fmt(l3)}, Gene {fmt(g3)}"))
        gl = part[part["method"] == "Gene"]["iteration"].max()
        if gl == gl:
            lf, gf = at("Lloyd", gl), at("Gene", gl)
            out.append(Check(f"{PANEL_TITLES.get(ds, ds)}: Gene eventually overtakes Lloyd (§5.3 'Generally')",
                             None if (lf != lf or gf != gf) else gf <= lf,
                             f"after {int(gl)} iterations: Gene {fmt(gf)}, Lloyd {fmt(lf)}"))
    return out or [Check("Figure 4 claims", None, "no dataset available")]


@_plain_bools
def check_fig7(table, item) -> list[Check]:
    options = item.get("options") or {}
    eps = float(options.get("epsilon", 0.1))
    out = []
    for ds in _available(table, options.get("panels") or []):
        t = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        t = t[np.isclose(t["epsilon"].astype(float), eps)]
        a = t[t["method"] == "DPLloyd"]["wall_median_s"].mean()
        b = t[t["method"] == "EUGkM"]["wall_median_s"].mean()
        out.append(Check(f"{PANEL_TITLES.get(ds, ds)}: DPLloyd runs faster than EUGkM at ε = {eps:g} (§6.4)",
                         None if (a != a or b != b) else a < b, f"seconds per run: DPLloyd {fmt(a)}, EUGkM {fmt(b)}"))
    return out or [Check("Figure 7 claim", None, f"no run at ε = {eps:g}")]


@_plain_bools
def check_table1(table, item) -> list[Check]:
    out = []
    for r in table.itertuples(index=False):
        if r.status != "ok":
            out.append(Check(f"Table 1 row {r.dataset}", None, f"data unavailable: {r.reason}"))
            continue
        if str(r.name).startswith("su_synth"):
            ok = r.N == r.paper_N and r.l_gkm == r.paper_l_gkm
        else:
            ok = all(_eq(a, b) for a, b in [(r.N, r.paper_N), (r.d, r.paper_d), (r.k, r.paper_k),
                                            (r.l_gkm, r.paper_l_gkm), (r.l_gkm3k, r.paper_l_gkm3k)])
        out.append(Check(f"Table 1 row {r.dataset} matches the paper", bool(ok),
                         f"ours N={r.N}, d={r.d}, k={r.k}, l={r.l_gkm}, l3k={r.l_gkm3k}; paper N={r.paper_N}, "
                         f"d={r.paper_d}, k={r.paper_k}, l={r.paper_l_gkm}, l3k={r.paper_l_gkm3k}"))
    return out


def _eq(a, b) -> bool:
    try:
        return int(a) == int(b)
    except (TypeError, ValueError):
        return str(a) == str(b)
