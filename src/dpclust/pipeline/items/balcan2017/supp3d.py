"""The reconstructed supplementary 3-D comparison of Balcan et al. 2017 §7 (a table).

The supplement is not available: data, n and format are our choice (config). The rendered table
names the methods with the paper's own labels (`figure.labels`, kept identical to the table
published so far); the claim texts use the names table. `claims` names the roles (griding,
k-variates++, the algorithms that "perform comparably") and the thresholds. Claims are decided on
intervals (`dpclust.pipeline.claims`): Welch intervals of griding − each other private method, delta-method
intervals of the pairwise ratios of the "comparable" methods and of k-variates++ / the best.
"""

from __future__ import annotations

from itertools import combinations

import pandas as pd

from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.claims import decide, diff_ci, every, ratio_ci, side_of
from dpclust.pipeline.itemkit import name, step_options
from dpclust.pipeline.items.balcan2017.common import NOT_DP, guarantee_of, spent_check, summary, triple
from dpclust.pipeline.plotting import write_table


def aggregate_supp3d(records, item, ctx=None) -> pd.DataFrame:
    return summary(records)


def render_supp3d(table: pd.DataFrame, item: dict, stem: str) -> None:
    labels = step_options(item, "figure")["labels"]
    rows = []
    for r in table.itertuples():
        label = labels.get(r.algorithm, r.algorithm)
        if r.status != "ok":
            rows.append({"algorithm": label, "k-means objective (mean ± sd)": "data unavailable",
                         "runs": 0, "ε spent": ""})
            continue
        rows.append({"algorithm": label,
                     "k-means objective (mean ± sd)": f"{r.mean:.4g} ± {r.std:.2g}",
                     "runs": int(r.n), "ε spent": "" if pd.isna(r.epsilon) else f"{r.eps_spent_max:g}"})
    df = pd.DataFrame(rows)
    write_table(df, stem, title=item["title"],
                note="Reconstructed supplementary comparison: the supplement is not available; data and n are our "
                     "choice (see config). ε spent is blank for the non-private reference.")


def check_supp3d(table: pd.DataFrame, item: dict) -> list[Check]:
    """§7's claims on the 3-D comparison, decided on intervals, with the roles and thresholds of `claims`.
    Only DP methods take part (a variant whose records say otherwise is left out and named)."""
    claims = step_options(item, "claims")
    ok = table[(table["status"] == "ok") & table["epsilon"].notna()]
    if ok.empty:
        return [Check("3-D comparison claims", None, "data unavailable")]
    dp = ok[[guarantee_of(table, a) not in (NOT_DP, "non-private") for a in ok["algorithm"]]]
    rows = {r.algorithm: r for r in dp.itertuples()}
    means = dp.set_index("algorithm")["mean"]
    grid, kv = claims["griding"], claims["kvariates"]
    checks = []
    if grid in rows:
        per = []
        for alg, r in rows.items():
            if alg == grid:
                continue
            ci = diff_ci(triple(rows[grid]), triple(r))
            per.append((f"vs {name(item, alg)}: Δ = {ci}", side_of(ci, 0.0, "<")))
        checks.append(every(f"griding ({name(item, grid)}) achieves the best objective among the private algorithms",
                            per, detail="Δ = mean(griding) − mean(other), 95 % Welch interval; means: "
                            + ", ".join(f"{name(item, a)} {fmt(v)}" for a, v in means.sort_values().items())))
    comp = [a for a in claims["comparable"] if a in rows]
    if len(comp) >= 2:
        f = float(claims["comparable_factor"])
        per = []
        for a, b in combinations(comp, 2):
            hi_, lo_ = (a, b) if rows[a].mean >= rows[b].mean else (b, a)
            ci = ratio_ci(triple(rows[hi_]), triple(rows[lo_]))
            per.append((f"{name(item, hi_)}/{name(item, lo_)} = {ci}", side_of(ci, f, "<=")))
        chk = every(f"{', '.join(name(item, a) for a in comp)} perform comparably (every pairwise ratio ≤ {f:g})", per,
                    detail="larger/smaller mean, 95 % delta-method interval")
        if chk.holds is False:
            worst = max(comp, key=lambda a: rows[a].mean)
            best = min(comp, key=lambda a: rows[a].mean)
            chk.why = (f"genuine: {name(item, worst)} {fmt(rows[worst].mean)} ± {fmt(rows[worst].std)} vs "
                       f"{name(item, best)} {fmt(rows[best].mean)} ± {fmt(rows[best].std)} on the reconstructed "
                       "3-D data (the supplement's data are MISSING)")
        checks.append(chk)
    if kv in rows and len(rows) > 1:
        others = means.drop(kv)
        best = others.idxmin()
        f = float(claims["order_of_magnitude"])
        ci = ratio_ci(triple(rows[kv]), triple(rows[best]))
        chk = decide(f"{name(item, kv)} is an order of magnitude worse than the best (≥ {f:g}×)", ci, f, ">=",
                     detail=f"{name(item, kv)} / {name(item, best)} (the best), 95 % delta-method interval")
        if chk.holds is False:
            chk.why = f"genuine: {name(item, kv)} / {name(item, best)} = {ci} on the reconstructed 3-D data"
        checks.append(chk)
    checks.append(spent_check(table, list(rows), float(claims["spent_rel_tol"])))
    return checks
