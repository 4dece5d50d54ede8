"""Items of Cohen-Addad et al. 2022: Figure 1 (centres on S1), Figures 2 and 3 (normalised k-median
cost vs k). Aggregators return tidy tables; renderers read only those tables; checks encode the
paper's claims (§6) and report failures as failures.

Normalisation (STATED §6 "normalized by the best clustering objective"): at each (dataset, k), every
method's mean k-median cost is divided by the smallest mean cost of any method run there (kmed++ is
one of them), so the best method has ratio 1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..aggregate import Check, fmt, runs_frame, tidy
from ..plotting import mark_unavailable, panel_grid, save_figure, style_for

LABELS = {
    "cohenaddad2022.hst": "HST (ours)",
    "cohenaddad2022.kmedpp": "kmed++ (non-private)",
    "cohenaddad2022.private_lloyd": "Private Lloyd",
    "cohenaddad2022.coreset": "Coreset",
    "balcan2017.balcan_kmedian": "Balcan et al.",
    "balcan2017.kvariates_simhash": "kvars",
}


def _label(alg: str) -> str:
    return LABELS.get(alg, alg)


# ---------------------------------------------------------------------------------------------
# Figure 1
# ---------------------------------------------------------------------------------------------
def aggregate_fig1(records, item, ctx) -> pd.DataFrame:
    """Rows `kind=point` (the scaled S1 data) and `kind=centre` (centres of seed 0 per ε), plus the
    mean k-median cost per ε (`kind=cost`) and the spent-ε check input (`kind=spent`)."""
    rows = []
    recs = [r for r in records if r.get("status", "ok") == "ok"]
    unavailable = [r for r in records if r.get("status", "ok") != "ok"]
    if unavailable:
        return pd.DataFrame([{"kind": "unavailable", "reason": unavailable[0].get("reason", "")}])
    from ..data import apply_transform, load_processed

    ds = load_processed(ctx.dataset_path("s1"))
    X, _ = apply_transform(recs[0]["transform"] if recs else "minmax_01", ds.X, ctx.entry("s1"))
    for x, y in X[:, :2]:
        rows.append({"kind": "point", "epsilon": None, "x": float(x), "y": float(y)})
    for rec in sorted(recs, key=lambda r: r["epsilon"]):
        runs = sorted(rec["runs"], key=lambda r: r["seed"])
        first = runs[0]
        for c in first.get("centers") or []:
            rows.append({"kind": "centre", "epsilon": rec["epsilon"], "x": c[0], "y": c[1]})
        costs = [r["cost_kmedian"] for r in runs]
        rows.append({"kind": "cost", "epsilon": rec["epsilon"], "x": float(np.mean(costs)), "y": float(len(costs))})
        for r in runs:
            rows.append({"kind": "spent", "epsilon": rec["epsilon"], "x": r["epsilon_spent"], "y": float(r["seed"])})
    return pd.DataFrame(rows, columns=["kind", "epsilon", "x", "y"])


def render_fig1(table: pd.DataFrame, item, stem) -> None:
    eps_values = sorted(table.loc[table["kind"] == "centre", "epsilon"].dropna().unique())
    n = max(1, len(eps_values))
    fig, axes = panel_grid(n, ncols=2, panel_size=(3.8, 3.6))
    if "unavailable" in set(table["kind"]) or not eps_values:
        reason = table["reason"].iloc[0] if "reason" in table else ""
        mark_unavailable(axes[0], "SYNTHETIC (S1)", str(reason))
        save_figure(fig, stem)
        return
    pts = table[table["kind"] == "point"]
    for ax, eps, tag in zip(axes, eps_values, "abcdefgh"):
        ax.scatter(pts["x"], pts["y"], s=1, c="0.7", rasterized=True, label="data")
        C = table[(table["kind"] == "centre") & (table["epsilon"] == eps)]
        ax.scatter(C["x"], C["y"], s=40, marker="X", c="C3", edgecolors="k", linewidths=0.5, label="HST centres")
        cost = table[(table["kind"] == "cost") & (table["epsilon"] == eps)]["x"]
        ax.set_title(f"({tag}) epsilon = {eps:g}" + (f", mean cost {cost.iloc[0]:.4g}" if len(cost) else ""))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
    axes[0].legend(loc="lower left", markerscale=1)
    save_figure(fig, stem)


def check_fig1(table: pd.DataFrame, item) -> list[Check]:
    if "unavailable" in set(table["kind"]):
        return [Check("HST captures the geometry better as epsilon grows", None, "data unavailable")]
    cost = table[table["kind"] == "cost"].sort_values("epsilon")
    spent = table[table["kind"] == "spent"]
    ok_spent = bool(np.allclose(spent["x"].astype(float), spent["epsilon"].astype(float), rtol=1e-9))
    checks = [Check("each private run spends exactly its epsilon setting", ok_spent, f"{len(spent)} runs")]
    if len(cost) >= 2:
        lo, hi = cost.iloc[0], cost.iloc[-1]
        checks.append(Check("as epsilon increases the HST solution fits the data better (lower k-median cost)",
                            bool(hi["x"] < lo["x"]),
                            f"mean cost {fmt(lo['x'])} at eps={fmt(lo['epsilon'])} vs {fmt(hi['x'])} at eps={fmt(hi['epsilon'])}"))
    return checks


# ---------------------------------------------------------------------------------------------
# Figures 2 and 3
# ---------------------------------------------------------------------------------------------
def aggregate_normalised(records, item, ctx) -> pd.DataFrame:
    """Tidy k-median cost per (dataset, algorithm, k) with `ratio` = mean / best mean at (dataset, k).

    Also carries the per-run spent-ε check as a column `eps_exact` (True/False per row)."""
    table = tidy(records, item, ctx)
    t = table[table["metric"] == "cost_kmedian"].copy() if not table.empty else table
    unavailable = table[table["status"] != "ok"].drop_duplicates(subset=["dataset", "algorithm"]) if not table.empty else table
    if not t.empty:
        ok = t[t["status"] == "ok"]
        best = ok.groupby(["dataset", "k"])["mean"].min().rename("best").reset_index()
        t = t.merge(best, on=["dataset", "k"], how="left")
        t["ratio"] = t["mean"] / t["best"]
    # spent-ε per (dataset, algorithm, k)
    df = runs_frame(records)
    if not df.empty and "epsilon_spent" in df:
        ok_runs = df[(df["status"] == "ok") & df["epsilon"].notna()]
        exact = (ok_runs.assign(exact=np.isclose(ok_runs["epsilon_spent"].astype(float), ok_runs["epsilon"].astype(float), rtol=1e-9))
                 .groupby(["dataset", "algorithm", "k"])["exact"].all().reset_index())
        if not t.empty:
            t = t.merge(exact, on=["dataset", "algorithm", "k"], how="left")
    if "exact" not in t:
        t["exact"] = pd.NA
    t = t.rename(columns={"exact": "eps_exact"})
    cols = ["dataset", "algorithm", "k", "epsilon", "mean", "std", "n", "best", "ratio", "eps_exact", "status", "reason"]
    t = t.reindex(columns=cols)
    if not unavailable.empty:
        extra = unavailable[~unavailable.set_index(["dataset", "algorithm"]).index.isin(
            t.set_index(["dataset", "algorithm"]).index)].reindex(columns=cols)
        t = pd.concat([t, extra], ignore_index=True)
    return t.sort_values(["dataset", "algorithm", "k"]).reset_index(drop=True)


def _datasets(item) -> list[str]:
    names = []
    for g in (item.get("runs") or {}).values():
        for d in g["datasets"]:
            if d not in names:
                names.append(d)
    return names


def render_normalised(table: pd.DataFrame, item, stem) -> None:
    datasets = _datasets(item) or sorted(table["dataset"].dropna().unique())
    fig, axes = panel_grid(len(datasets), ncols=2, panel_size=(4.2, 3.2))
    algs = [a for a in LABELS if a in set(table["algorithm"])] + sorted(set(table["algorithm"]) - set(LABELS))
    for ax, ds, tag in zip(axes, datasets, "abcdefgh"):
        sub = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        if sub.empty:
            reason = table.loc[table["dataset"] == ds, "reason"]
            mark_unavailable(ax, f"({tag}) {ds}", str(reason.iloc[0]) if len(reason) else "no runs")
            continue
        for i, alg in enumerate(algs):
            s = sub[sub["algorithm"] == alg].sort_values("k")
            if s.empty:
                continue
            ax.plot(s["k"], s["ratio"], label=_label(alg), **style_for(alg, i), markersize=4)
        ax.set_title(f"({tag}) {ds}")
        ax.set_xlabel("k")
        ax.set_ylabel("k-median cost / best")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    handles, labels = [], []
    for ax in axes:
        h, l_ = ax.get_legend_handles_labels()
        for hh, ll in zip(h, l_):
            if ll not in labels:
                handles.append(hh)
                labels.append(ll)
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), bbox_to_anchor=(0.5, -0.08))
    save_figure(fig, stem)


def _beats(table, ds, a, b):
    """(holds, detail): a's mean cost is below b's at every common k on dataset ds."""
    A = table[(table["dataset"] == ds) & (table["algorithm"] == a) & (table["status"] == "ok")].set_index("k")["mean"]
    B = table[(table["dataset"] == ds) & (table["algorithm"] == b) & (table["status"] == "ok")].set_index("k")["mean"]
    common = sorted(set(A.index) & set(B.index))
    if not common:
        unavailable = ((table["dataset"] == ds) & (table["status"] != "ok")).any()
        return None, f"{ds}: " + ("data unavailable" if unavailable else f"no common runs of {a} and {b}")
    wins = [k for k in common if A[k] < B[k]]
    return len(wins) == len(common), f"{ds}: {_label(a)} below {_label(b)} at {len(wins)}/{len(common)} k"


def _eps_rows(table) -> Check:
    col = table["eps_exact"].dropna() if "eps_exact" in table else pd.Series([], dtype=object)
    return Check("each private run spends exactly its epsilon setting", None if col.empty else bool(col.astype(bool).all()),
                 f"{len(col)} (dataset, method, k) cells")


def check_fig2(table: pd.DataFrame, item) -> list[Check]:
    opt = item.get("options", {})
    checks = []
    for who in ("hst", "coreset"):
        for ds in _datasets(item):
            holds, detail = _beats(table, ds, opt[who], opt["balcan"])
            checks.append(Check(f"{_label(opt[who])} beats Balcan et al. on {ds} (lower mean k-median cost at every k)",
                                holds, detail))
    ds = opt.get("close_dataset", "skin")
    H = table[(table["dataset"] == ds) & (table["algorithm"] == opt["hst"]) & (table["status"] == "ok")].set_index("k")["mean"]
    N = table[(table["dataset"] == ds) & (table["algorithm"] == opt["nonprivate"]) & (table["status"] == "ok")].set_index("k")["mean"]
    common = sorted(set(H.index) & set(N.index))
    if common:
        r = {k: H[k] / N[k] for k in common}
        thr = float(opt["close_ratio"])
        checks.append(Check(f"HST is close to the non-private kmed++ on {ds} (cost ratio <= {thr:g} at every k)",
                            all(v <= thr for v in r.values()),
                            "ratios " + ", ".join(f"k={k}: {fmt(v, 3)}" for k, v in r.items())))
    else:
        checks.append(Check(f"HST is close to the non-private kmed++ on {ds}", None, "no runs on this dataset"))
    checks.append(_eps_rows(table))
    return checks


def check_fig3(table: pd.DataFrame, item) -> list[Check]:
    opt = item.get("options", {})
    checks = []
    hst, cor, kv = opt["hst"], opt["coreset"], opt["kvars"]
    for other in (cor, kv):
        holds, detail = _beats(table, "higgs", hst, other)
        checks.append(Check(f"HST has the strongest performance on HIGGS (below {_label(other)} at every k)", holds, detail))
    H = table[(table["dataset"] == "covertype") & (table["algorithm"] == hst) & (table["status"] == "ok")].set_index("k")["mean"]
    C = table[(table["dataset"] == "covertype") & (table["algorithm"] == cor) & (table["status"] == "ok")].set_index("k")["mean"]
    common = sorted(set(H.index) & set(C.index))
    if common:
        r = {k: H[k] / C[k] for k in common}
        lo, hi = (float(v) for v in opt["comparable_band"])
        checks.append(Check(f"on Covertype HST is comparable to Coreset (ratio within [{lo:g}, {hi:g}] at every k)",
                            all(lo <= v <= hi for v in r.values()),
                            ", ".join(f"k={k}: {fmt(v, 3)}" for k, v in r.items())))
    else:
        checks.append(Check("on Covertype HST is comparable to Coreset", None, "data unavailable or no runs"))
    checks.append(_eps_rows(table))
    return checks
