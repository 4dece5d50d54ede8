"""What the leaderboard's items share: the aggregation of run records into the tidy leaderboard,
guarantee labels, display order and line styles.

Aggregation (`leaderboard`), from the run records alone:

* **Objective.** Each run group is judged on one objective, given by the item's table option
  `objectives: {<group>: kmeans | kmedian}`: the k-means cost Σ min‖x − c‖² or the k-median cost
  Σ min‖x − c‖ of the released centres on the (transformed) data.
* **Normaliser.** At each (objective, dataset, k), the best (smallest) cost on that objective of any
  single run of any non-private algorithm (k-means++ + Lloyd and k-median++ + Lloyd-median with many
  seeds; a k-means solution may well be the best k-median one found, and vice versa): the best
  non-private solution found. Every run's cost is divided by it, so 1 means "as good as the best
  non-private solution we found".
* **Cell statistics.** Per (objective, dataset, k, ε, algorithm): mean normalised cost, its
  Student-t 95 % interval (`dpclust.pipeline.claims.mean_ci`), sd, number of runs, wall time per run (the
  median over runs, so that a one-off import in a job's first run, e.g. diffprivlib's scikit-learn,
  does not count),
  mean and largest ε spent and largest δ spent (blank for a method without a DP guarantee, not DP
  as published or non-private: it reports no ε, `dpclust.pipeline.run_job.epsilon_not_reported`; a
  run's null `epsilon_spent` is never counted as 0), δ budget, and the mean number of non-empty clusters
  of the released centres (a diagnostic: it shows a collapsed solution, e.g. every point in one
  cluster, that a cost ratio alone does not).
* **Guarantee.** From each record's `guarantee` (planned from the algorithm's declaration): ε-DP,
  (ε, δ)-DP, non-private or "not DP as published", with its note and neighbouring relation
  (add/remove or replace one record: shown, since ε means twice as much under one as the other). A
  record without one is "unknown", never DP.
* **Rank.** Among the methods with a DP guarantee (ε-DP or (ε, δ)-DP) only, per (objective,
  dataset, k, ε), by mean normalised cost (1 = best; equal means share a rank). Methods that are
  not DP as published, of unknown guarantee or non-private are shown, never ranked.
* **Left out.** By default the board runs only the methods with a DP guarantee (and the non-private
  references); the methods not DP as published come back with an opt-in (config/papers/leaderboard.yaml).
  `left_out_note` names, from the render step's planned runs, those of the figure option
  `not_dp_left_out` that did not run, and says how to add them back.

Datasets that could not be had keep one row per cell with status `data_unavailable` and the reason;
cells an algorithm refused at a documented limit of its inputs (`dpclust.api.Refused`, e.g. EUGkM's
grid memory guard) keep one row with status `refused` and the reason, never ranked.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from dpclust.api import DPClustError
from dpclust.pipeline import racing
from dpclust.pipeline.claims import mean_ci
from dpclust.pipeline.itemkit import DP_KINDS, NOT_DP, name, step_options

NON_PRIVATE = "non-private"
UNKNOWN = "unknown"
METRIC = {"kmeans": "cost_kmeans", "kmedian": "cost_kmedian"}
OBJECTIVE_LABEL = {"kmeans": "k-means", "kmedian": "k-median"}
KEY = ["objective", "dataset", "k", "epsilon"]
COLUMNS = [*KEY, "algorithm", "guarantee", "guarantee_note", "relation", "rank", "dp_methods", "mean", "ci_low",
           "ci_high", "sd", "n", "cost_mean", "best_nonprivate", "nonempty_mean", "wall_s", "eps_spent_mean",
           "eps_spent_max", "delta", "delta_spent_max", "status", "reason"]


def guarantee_kind(record: Mapping) -> str:
    """The record's guarantee kind; a private record without a declared guarantee is "unknown"."""
    kind = (record.get("guarantee") or {}).get("kind")
    if kind:
        return str(kind)
    private = record.get("private", record.get("epsilon") is not None)
    return UNKNOWN if private else NON_PRIVATE


def objectives_of(item: Mapping) -> dict[str, str]:
    """{run group: objective} from the item's table options."""
    objectives = dict(step_options(item, "table").get("objectives") or {})
    bad = {g: o for g, o in objectives.items() if o not in METRIC}
    if bad:
        raise DPClustError(f"leaderboard table.objectives: {bad} (each must be one of {sorted(METRIC)})")
    return objectives


def _eps(value) -> float:
    return math.nan if value is None else float(value)


#: Guarantee kinds whose runs report no ε spent (their ε columns are blank, whatever an older record holds).
NO_EPSILON = (NOT_DP, NON_PRIVATE)


def _spent(values: list, kind: str) -> tuple[float, float]:
    """(mean, max) of the reported spends (null ones left out); NaN for a kind that reports none."""
    reported = [v for v in values if not math.isnan(v)]
    if kind in NO_EPSILON or not reported:
        return math.nan, math.nan
    return float(np.mean(reported)), float(np.max(reported))


def leaderboard(records: Iterable[Mapping], item: Mapping) -> pd.DataFrame:
    """The tidy leaderboard (module docstring), one row per (objective, dataset, k, ε, algorithm);
    non-private references have ε = NaN."""
    objectives = objectives_of(item)
    cells: dict[tuple, dict] = {}
    best: dict[tuple, float] = {}
    for rec in records:
        group = rec.get("group")
        if group not in objectives:
            raise DPClustError(f"leaderboard: run group {group!r} has no objective; add it to the item's "
                               f"table.objectives (known: {sorted(objectives)})")
        objective = objectives[group]
        key = (objective, rec["dataset"], int(rec["k"]), _eps(rec.get("epsilon")), rec["algorithm"])
        kind = guarantee_kind(rec)
        declared = rec.get("guarantee") or {}
        cell = cells.setdefault(key, {"guarantee": kind, "note": declared.get("note", ""),
                                      "relation": declared.get("relation", ""),
                                      "delta": math.nan, "status": "data_unavailable", "reason": "",
                                      "cost": [], "wall": [], "eps": [], "dlt": [], "nonempty": []})
        if rec.get("status", "ok") != "ok":
            if cell["status"] != "ok":   # data_unavailable, or refused (api.Refused: the algorithm's limit)
                cell["status"] = str(rec.get("status"))
            cell["reason"] = cell["reason"] or str(rec.get("reason") or "")
            continue
        cell["status"] = "ok"
        if kind == NON_PRIVATE:  # the normaliser: the best non-private solution, on either objective
            for obj, col in METRIC.items():
                costs = [float(run[col]) for run in rec.get("runs") or [] if run.get(col) is not None]
                if costs:
                    ref = (obj, rec["dataset"], int(rec["k"]))
                    best[ref] = min(best.get(ref, math.inf), min(costs))
        if rec.get("delta") is not None:
            cell["delta"] = float(rec["delta"])
        metric = METRIC[objective]
        for run in rec.get("runs") or []:
            cell["cost"].append(float(run[metric]))
            cell["wall"].append(float(run.get("wall_time_s") or 0.0))
            cell["eps"].append(_eps(run.get("epsilon_spent")))
            cell["dlt"].append(_eps(run.get("delta_spent")))
            if run.get("cluster_sizes") is not None:  # a diagnostic: how many clusters the centres keep
                cell["nonempty"].append(int(np.count_nonzero(np.asarray(run["cluster_sizes"]))))
    rows = []
    for (objective, dataset, k, eps, alg), cell in cells.items():
        row = {"objective": objective, "dataset": dataset, "k": k, "epsilon": eps, "algorithm": alg,
               "guarantee": cell["guarantee"], "guarantee_note": cell["note"], "relation": cell["relation"],
               "delta": cell["delta"],
               "status": cell["status"], "reason": cell["reason"], "n": len(cell["cost"])}
        if cell["status"] == "ok" and cell["cost"]:
            ref = best.get((objective, dataset, k))
            cost = np.asarray(cell["cost"])
            eps_mean, eps_max = _spent(cell["eps"], cell["guarantee"])
            row.update(cost_mean=float(cost.mean()), wall_s=float(np.median(cell["wall"])),
                       eps_spent_mean=eps_mean, eps_spent_max=eps_max,
                       delta_spent_max=_spent(cell["dlt"], cell["guarantee"])[1],
                       nonempty_mean=float(np.mean(cell["nonempty"])) if cell["nonempty"] else math.nan)
            if ref is None or not ref > 0:
                row.update(status="no_reference", reason=f"no non-private {OBJECTIVE_LABEL[objective]} run at "
                                                         f"this (dataset, k) to normalise by")
            else:
                ratio = cost / ref
                sd = float(ratio.std(ddof=1)) if ratio.size > 1 else math.nan
                ci = mean_ci(float(ratio.mean()), sd, int(ratio.size))
                row.update(mean=ci.estimate, ci_low=ci.low, ci_high=ci.high, sd=sd, best_nonprivate=ref)
        rows.append(row)
    table = pd.DataFrame(rows).reindex(columns=COLUMNS)
    if table.empty:
        return table
    ranked = table["guarantee"].isin(DP_KINDS) & (table["status"] == "ok") & np.isfinite(table["mean"].astype(float))
    cell_key = pd.Series(["|".join(map(repr, key)) for key in zip(*(table[c] for c in KEY))], index=table.index)
    table["rank"] = table["mean"].where(ranked).groupby(cell_key).rank(method="min")
    table["dp_methods"] = ranked.groupby(cell_key).transform("sum").astype(int)
    table.loc[table["epsilon"].isna(), "dp_methods"] = 0
    order = table.assign(_eps=table["epsilon"].fillna(-1.0), _rank=table["rank"].fillna(np.inf),
                         _mean=table["mean"].fillna(np.inf))
    order = order.sort_values(["objective", "dataset", "k", "_eps", "_rank", "_mean", "algorithm"])
    return order.drop(columns=["_eps", "_rank", "_mean"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# labels and styles
# ---------------------------------------------------------------------------------------------
GUARANTEE_TAG = {"ε-DP": "", "(ε, δ)-DP": "", NOT_DP: " [not DP]", UNKNOWN: " [guarantee unknown]",
                 NON_PRIVATE: " [non-private]"}
LINESTYLE = {"ε-DP": "-", "(ε, δ)-DP": "-", NOT_DP: "--", UNKNOWN: ":", NON_PRIVATE: "-."}


def label(item: Mapping, algorithm: str, kind: str) -> str:
    """Display name with a visible tag for everything that is not ranked as DP."""
    return name(item, algorithm) + GUARANTEE_TAG.get(kind, f" [{kind}]")


def palette(algorithms: list[str]) -> dict[str, dict]:
    """Stable colour and marker per algorithm (sorted ids, so every panel and item agrees)."""
    import matplotlib

    colours = [*matplotlib.colormaps["tab20"].colors, *matplotlib.colormaps["tab20b"].colors]
    markers = ["o", "s", "^", "v", "D", "P", "X", "*", "<", ">", "h", "p"]
    return {alg: {"color": colours[i % len(colours)], "marker": markers[i % len(markers)]}
            for i, alg in enumerate(sorted(algorithms))}


def planned(item: Mapping, key: str) -> list:
    """Datasets or algorithms of the runs planned under the preset (render spec `runs`), in order."""
    out: list = []
    for group in (item.get("runs") or {}).values():
        for value in group.get(key) or []:
            if value not in out:
                out.append(value)
    return out


#: Where the opt-in that adds the methods not DP as published back to the board is (header of the file).
OPT_IN = "config/papers/leaderboard.yaml"


def left_out_note(item: Mapping) -> str:
    """One line: the methods not DP as published that this board did not run (the figure option
    `not_dp_left_out` minus the algorithms planned under the preset, so an opt-in that ran them drops
    them from the note) and how to add them back; '' when none was left out."""
    listed = step_options(item, "figure").get("not_dp_left_out") or []
    ran = set(planned(item, "algorithms"))
    out = [a for a in listed if a not in ran]
    if not out:
        return ""
    return (f"Not run by default (not DP as published or as configured, never ranked): "
            f"{'; '.join(name(item, a) for a in out)}. The opt-in not_dp (--config 'opt_in=[not_dp]'; {OPT_IN}) "
            f"adds them back, labelled \"not DP as published\", unranked, with no ε.")


def race_note(item) -> str:
    """What the race is, in one sentence ('' without racing)."""
    spec = item.get("racing")
    if not spec:
        return ""
    reps = sorted(set((spec.get("repetitions") or {}).values())) or [0]
    steps = ", ".join(str(m * reps[0]) for m in racing.multiples(spec))
    return (f"Cells raced (dpclust.pipeline.racing): {steps} runs per method at the looks; each look runs only "
            f"the methods the best does not beat (the Welch interval of their mean minus the best's, at 1 − α_j "
            f"with α_j the look's share of α = {spec['alpha']:g}, reaches 0); a method out of the race keeps the "
            f"runs it had (column runs); a cell stops when one method is left or at the cap of "
            f"{racing.multiples(spec)[-1] * reps[-1]} runs.")


def fmt_interval(mean, low, high) -> str:
    """'1.23 [1.10, 1.41]' (n/a for missing values)."""
    def g(x):
        return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3g}"
    return f"{g(mean)} [{g(low)}, {g(high)}]"


def display_frame(table: pd.DataFrame, item: Mapping) -> pd.DataFrame:
    """The leaderboard with display names and readable column names (Markdown and HTML)."""
    from dpclust.pipeline.itemkit import dataset_name

    t = table
    return pd.DataFrame({
        "objective": t["objective"].map(OBJECTIVE_LABEL),
        "dataset": t["dataset"].map(lambda d: dataset_name(item, d)),
        "k": t["k"],
        "ε": t["epsilon"],
        "algorithm": t["algorithm"].map(lambda a: name(item, a)),
        "guarantee": t["guarantee"],
        "neighbours": [r if isinstance(r, str) else "" for r in t["relation"]],
        "rank (DP only)": t["rank"],
        "cost / best non-private": t["mean"],
        "95% CI low": t["ci_low"],
        "95% CI high": t["ci_high"],
        "runs": t["n"],
        "non-empty clusters (mean)": t["nonempty_mean"],
        "wall s/run (median)": t["wall_s"],
        "ε spent (mean)": t["eps_spent_mean"],
        "status": [s if s != "ok" else "" for s in t["status"]],
        "note": [(r if s != "ok" and isinstance(r, str) else "") or (g if isinstance(g, str) else "")
                 for s, r, g in zip(t["status"], t["reason"], t["guarantee_note"])],
    })
