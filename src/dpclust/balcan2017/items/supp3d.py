"""The reconstructed supplementary 3-D comparison of Balcan et al. 2017 §7 (a table).

The supplement is not available: data, n and format are our choice (config). The rendered table
names the methods with the paper's own labels (`figure.labels`, kept identical to the table
published so far); the claim texts use the names table. `claims` names the roles (griding,
k-variates++, the algorithms that "perform comparably") and the thresholds.
"""

from __future__ import annotations

import pandas as pd

from ...aggregate import Check, fmt
from ...itemkit import name, step_options
from ...plotting import write_table
from .common import spent_check, summary


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
                note="Reconstructed supplementary comparison: the supplement is not available; data and n are our choice "
                     "(see config). ε spent is blank for the non-private reference.")


def check_supp3d(table: pd.DataFrame, item: dict) -> list[Check]:
    """§7's claims on the 3-D comparison, with the roles and thresholds of `claims`."""
    claims = step_options(item, "claims")
    ok = table[(table["status"] == "ok") & table["epsilon"].notna()]
    if ok.empty:
        return [Check("3-D comparison claims", None, "data unavailable")]
    means = ok.set_index("algorithm")["mean"]
    grid, kv = claims["griding"], claims["kvariates"]
    checks = []
    if grid in means:
        best = means.idxmin()
        checks.append(Check(f"griding ({name(item, grid)}) achieves the best objective among the private algorithms",
                            best == grid, ", ".join(f"{name(item, a)} {fmt(v)}" for a, v in means.sort_values().items())))
    comp = [a for a in claims["comparable"] if a in means]
    if len(comp) >= 2:
        ratio = float(means[comp].max() / means[comp].min())
        f = float(claims["comparable_factor"])
        checks.append(Check(f"{', '.join(name(item, a) for a in comp)} perform comparably (max/min ≤ {f:g})",
                            ratio <= f, f"max/min = {ratio:.3g}"))
    if kv in means:
        others = means.drop(kv)
        f = float(claims["order_of_magnitude"])
        r = float(means[kv] / others.min())
        checks.append(Check(f"{name(item, kv)} is an order of magnitude worse than the best (≥ {f:g}×)", r >= f,
                            f"{name(item, kv)} / best = {r:.3g}"))
    checks.append(spent_check(table, list(means.index), float(claims["spent_rel_tol"])))
    return checks
