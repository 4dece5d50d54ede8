"""The equivalence harness: is a numerics change (float32 where safe, pruning, other product shapes, secure
noise samplers, ...) accepted? It compares two results directories, BEFORE and AFTER the change.

    .venv/bin/python benchmarks/equivalence.py BEFORE_RESULTS_DIR AFTER_RESULTS_DIR [--margin 0.005]
        [--alpha 0.05] [--margins METRIC=VALUE ...] [--paired] [--common-only] [--json OUT] [--markdown OUT]

The rule (docs/EQUIVALENCE.md): a numerics change is accepted when, on the quick preset and on the
full-protocol cells it touches, every claim verdict is unchanged (or the change explained) and each cell's
cost distribution is equivalent to before. "Same seed, same bytes" still holds within one commit on one
machine; across the change, equivalence is what is asked.

What it decides:

* Claims: the rows of `checks/summary.csv` (or, while it is not written yet, of `checks/<paper>/<item>.csv`)
  joined on (paper, item, claim text; a repeated text by its order); every claim whose `result` changed,
  every claim on one side only, and the count unchanged.
* Cells: the run records under `runs/` (`dpclust.pipeline.records.load_records`), grouped by cell (paper,
  item, group, dataset, algorithm, k, ε, and the record's `sweep` when it has one), the runs of a cell's
  blocks together, by seed. A cell whose runs are the same (wall times aside) on both sides is
  *identical*. Otherwise each metric is compared:

  - metrics: every per-run field whose values are JSON floats, among the run's diagnostics (cost_kmeans,
    nicv, cost_kmedian, epsilon_spent, delta_spent) and the algorithm's `info` (named `info.<field>`, e.g.
    info.lloyd_cost, info.tree_cost, info.synopsis_nicv); not seeds, wall times (`EXCLUDED`), integers
    (counters: iterations, cluster sizes, rounds), booleans, strings, lists (traces, centres, ledger);
  - a metric whose values are the same on both sides is *equal*;
  - otherwise TOST, two one-sided Welch t-tests of the difference of means d = mean_after - mean_before
    against the margin m = margin x |mean_before| (`--margin`, 0.5 %; per metric `DOCUMENTED_MARGINS` or
    `--margins`): H0- d <= -m and H0+ d >= m, each rejected at `alpha`; p = max of the two one-sided
    p-values, *equivalent* when p < alpha, i.e. when the (1 - 2 alpha) Welch interval of d lies inside (-m, m).
    Otherwise *not equivalent*: "moved" when that interval lies wholly outside the margin, "not shown"
    when it straddles it (too few runs or too much noise to show equivalence at this margin); a metric not
    shown also says about how many runs would show it if its mean move and spread held, and if the true
    move were 0 (`runs_to_show`: planning figures for the next look);
  - both sides constant (zero variance): the difference is exact, the limit of the test (p = 0 when
    |d| < m, else 1);
  - `--paired`: runs matched by seed, one-sample TOST on the per-seed differences (valid whenever both
    sides ran the same seeds; far more powerful when the change keeps the random draws, e.g. float32);
    without the same seed set on both sides the cell falls back to Welch; each paired metric also counts
    the seeds that took another path (moved by more than `OTHER_PATH_REL`: a discrete choice flipped) and
    how far the others agree, which says why an interval is wide;
  - *not decidable*: fewer than `MIN_RUNS` runs on a side, missing or non-finite values in different
    numbers, a metric on one side only, a zero margin (mean before 0), a record status that changed, or
    records that ran on other data (their `dataset_sha256` differ).

  A cell is *not equivalent* if any metric is, else *not decidable* if any metric is, else *equivalent*;
  the counts split the cells not equivalent into "moved" (some metric moved) and "not shown" (the rest).
* Audits (`audits/**.json`, not gating: the audit's verdicts are claims of the `audit` paper): the plain and
  halved-noise lower bounds on ε, listed when they moved.

Exit code 0 when every claim verdict is unchanged and every cell in both is identical or equivalent and
nothing is on one side only (`--common-only`: one-sided cells and claims are listed but do not fail);
1 otherwise. `--json` writes the full report, `--markdown` one to paste into docs/EQUIVALENCE.md,
`--labels-out` the labels of the cells a next look with more runs would take.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from dpclust.pipeline.records import load_records

DEFAULT_MARGIN = 0.005
DEFAULT_ALPHA = 0.05
#: Fewer runs than this on a side: not decidable (unless the metric's values are equal).
MIN_RUNS = 3
#: Paired seeds whose value moved by more than this (relative to its value before) took another path: a
#: discrete choice flipped (an assignment, a best-of-m pick), so the pair is two draws, not one draw
#: computed twice. Their count says why a cell's paired interval is wide; 0.1 % is a fifth of the margin.
OTHER_PATH_REL = 1e-3
#: Per-run fields that are never metrics (besides integers, booleans, strings and lists).
EXCLUDED = frozenset({"seed", "init_seed", "wall_time_s"})
#: Metrics with a documented margin other than DEFAULT_MARGIN (relative to |mean before|); keep the
#: table in docs/EQUIVALENCE.md in step.
DOCUMENTED_MARGINS: dict[str, float] = {}
CELL_FIELDS = ("paper", "item", "group", "dataset", "algorithm", "k", "epsilon", "sweep")
#: Cell statuses, worst first (the order of the listing).
ORDER = {"not equivalent": 0, "not decidable": 1, "equivalent": 2, "identical": 3}
DISPLAY = ("identical", "equivalent", "not equivalent", "not decidable")


# --- statistics ------------------------------------------------------------------------------------------

class Tost(NamedTuple):
    """Two one-sided tests of d (after - before) against (-margin, margin)."""

    diff: float
    se: float
    df: float
    margin: float
    p_lower: float   # H0: d <= -margin
    p_upper: float   # H0: d >= +margin
    ci_low: float    # the (1 - 2 alpha) interval of d
    ci_high: float

    @property
    def p(self) -> float:
        return max(self.p_lower, self.p_upper)

    def equivalent(self, alpha: float) -> bool:
        return self.p < alpha


def _tost(diff: float, se: float, df: float, margin: float, alpha: float) -> Tost:
    if se == 0:   # no sampling variation: the difference is exact (the limit of the test)
        return Tost(diff, 0.0, df, margin, 0.0 if diff > -margin else 1.0, 0.0 if diff < margin else 1.0,
                    diff, diff)
    p_lower = float(stats.t.sf((diff + margin) / se, df))
    p_upper = float(stats.t.cdf((diff - margin) / se, df))
    half = float(stats.t.ppf(1 - alpha, df)) * se
    return Tost(diff, se, df, margin, p_lower, p_upper, diff - half, diff + half)


def tost_welch(before, after, margin: float, alpha: float = DEFAULT_ALPHA) -> Tost:
    """TOST of mean(after) - mean(before) within +-margin, Welch's unequal-variance t (each side >= 2 values)."""
    a, b = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1)) if se > 0 else math.nan
    return _tost(float(b.mean() - a.mean()), se, df, margin, alpha)


def tost_paired(before, after, margin: float, alpha: float = DEFAULT_ALPHA) -> Tost:
    """TOST of the mean per-pair difference after - before within +-margin (one-sample t, n - 1 df)."""
    d = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    return _tost(float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size)), d.size - 1.0, margin, alpha)


# --- claims ----------------------------------------------------------------------------------------------

CLAIM_KEY = ["paper", "item", "claim", "occurrence"]


def load_claims(results_dir) -> pd.DataFrame:
    """The claim rows of a results directory: checks/summary.csv, else the per-item checks/<paper>/<item>.csv."""
    checks = Path(results_dir) / "checks"
    summary = checks / "summary.csv"
    if summary.is_file():
        frame = pd.read_csv(summary, dtype=str, keep_default_na=False)
    else:
        frames = [pd.read_csv(p, dtype=str, keep_default_na=False).assign(paper=p.parent.name, item=p.stem)
                  for p in sorted(checks.glob("*/*.csv"))]
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
            columns=["paper", "item", "claim", "result", "quantity"])
    for col in ("result", "quantity"):
        if col not in frame:
            frame[col] = ""
    return frame.assign(occurrence=frame.groupby(["paper", "item", "claim"]).cumcount())


def compare_claims(before: pd.DataFrame, after: pd.DataFrame) -> dict:
    """Claims whose verdict (`result`) changed, claims on one side only, and the count unchanged."""
    cols = [*CLAIM_KEY, "result", "quantity"]
    both = before[cols].merge(after[cols], on=CLAIM_KEY, how="outer", suffixes=("_before", "_after"),
                              indicator=True)

    def rows(frame):
        return [{"paper": r.paper, "item": r.item, "claim": r.claim, "before": r.result_before,
                 "after": r.result_after, "quantity_before": r.quantity_before, "quantity_after": r.quantity_after}
                for r in frame.fillna("").itertuples(index=False)]

    matched = both[both["_merge"] == "both"]
    changed = matched[matched["result_before"] != matched["result_after"]]
    return {"changed": rows(changed), "only_before": rows(both[both["_merge"] == "left_only"]),
            "only_after": rows(both[both["_merge"] == "right_only"]), "unchanged": len(matched) - len(changed),
            "counted": {"before": len(before), "after": len(after)}}


# --- cells -----------------------------------------------------------------------------------------------

#: a replication look's runs (`<group>.round<j>/`, dpclust.pipeline.replication): more runs of the same
#: cells, which only some commits run; the cells compare the paper's runs
ROUND_DIR = re.compile(r"\.round[0-9]+$")


def record_files(results_dir) -> list[Path]:
    """The run-record files under runs/, leaving out hidden paths (a running batch's checkpoint blocks),
    the records' publishable views (`X.released.json`) and the replication looks' runs."""
    runs = Path(results_dir) / "runs"
    return sorted(p for p in runs.rglob("*.json")
                  if not any(part.startswith(".") or ROUND_DIR.search(part) for part in p.relative_to(runs).parts)
                  and not p.name.endswith(".released.json"))


def cell_key(record: dict) -> tuple:
    sweep = record.get("sweep")
    sweep = json.dumps(sweep, sort_keys=True) if sweep else ""
    return (record.get("paper", ""), record.get("item", ""), record.get("group", ""), record["dataset"],
            record["algorithm"], int(record["k"]), record.get("epsilon"), sweep)


def cell_label(key: tuple) -> str:
    paper, item, group, dataset, algorithm, k, eps, sweep = key
    return f"{paper}/{item}/{group} {dataset} {algorithm} k={k} ε={eps}" + (f" {sweep}" if sweep else "")


def load_cells(results_dir) -> dict[tuple, dict]:
    """Every cell of a results directory: {key: {"status": sorted statuses, "runs": flat runs by seed,
    "data": sorted content hashes of the data its records ran on}}."""
    cells: dict[tuple, dict] = defaultdict(lambda: {"status": set(), "runs": [], "data": set()})
    for record in load_records(record_files(results_dir)):
        cell = cells[cell_key(record)]
        cell["status"].add(record.get("status", "ok"))
        cell["runs"].extend(record.get("runs") or [])
        if record.get("dataset_sha256"):
            cell["data"].add(record["dataset_sha256"])
    return {key: {"status": sorted(c["status"]), "runs": sorted(c["runs"], key=lambda r: r.get("seed", 0)),
                  "data": sorted(c["data"])} for key, c in cells.items()}


def run_fingerprint(run: dict) -> str:
    """A run's content, wall time aside: equal fingerprints are the same bytes."""
    return json.dumps({k: v for k, v in run.items() if k != "wall_time_s"}, sort_keys=True)


def runs_identical(a: list[dict], b: list[dict]) -> bool:
    return [run_fingerprint(r) for r in a] == [run_fingerprint(r) for r in b]


def run_fields(run: dict) -> dict:
    """A flat run's candidate fields: its top level and its `info` as `info.<name>`."""
    out = {k: v for k, v in run.items() if k != "info"}
    out.update({f"info.{k}": v for k, v in (run.get("info") or {}).items()})
    return out


def _number(v) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) or v in ("inf", "-inf")


def metric_names(*sides: list[dict]) -> list[str]:
    """The fields that are metrics: every non-null value a number ("inf"/"-inf" are JSON's infinities), at
    least one a float (integers only: a counter), not a seed or wall time (`EXCLUDED`)."""
    kinds: dict[str, set] = defaultdict(set)
    for runs in sides:
        for run in runs:
            for name, v in run_fields(run).items():
                if v is not None:
                    kinds[name].add("float" if isinstance(v, float) or isinstance(v, str) and _number(v)
                                    else "int" if _number(v) else "other")
    return sorted(name for name, k in kinds.items() if "float" in k and "other" not in k and name not in EXCLUDED)


def metric_values(runs: list[dict], name: str) -> list[tuple[int, float]]:
    """(seed, value) of every run having the metric; null and "inf" markers as NaN / inf."""
    out = []
    for run in runs:
        fields = run_fields(run)
        if name in fields:
            v = fields[name]
            out.append((run.get("seed", 0), math.nan if v is None else float(v)))
    return out


def _summary(values: np.ndarray) -> dict:
    return {"n": int(values.size), "mean": float(values.mean()) if values.size else math.nan,
            "sd": float(values.std(ddof=1)) if values.size > 1 else math.nan}


def compare_metric(name: str, before: list[tuple[int, float]], after: list[tuple[int, float]], margin_rel: float,
                   alpha: float, paired: bool = False) -> dict:
    """One metric of one cell: equal / equivalent / not equivalent / not decidable, with the evidence."""
    out = {"metric": name, "margin_rel": margin_rel}
    if not before or not after:
        return dict(out, status="not decidable", note=f"metric on one side only ({'after' if after else 'before'})")
    a, b = (np.array([v for _, v in side]) for side in (before, after))
    if np.array_equal(a, b, equal_nan=True):
        return dict(out, status="equal", before=_summary(a[np.isfinite(a)]))
    fa, fb = np.isfinite(a), np.isfinite(b)
    out.update(before=_summary(a[fa]), after=_summary(b[fb]))
    if (~fa).sum() != (~fb).sum():
        return dict(out, status="not decidable",
                    note=f"non-finite or missing values: {(~fa).sum()} before, {(~fb).sum()} after")
    if fa.sum() < MIN_RUNS or fb.sum() < MIN_RUNS:
        return dict(out, status="not decidable", note=f"too few runs ({fa.sum()}, {fb.sum()}; need {MIN_RUNS})")
    margin = margin_rel * abs(out["before"]["mean"])
    if margin == 0:
        return dict(out, status="not decidable", note="zero margin: the mean before is 0")
    same_seeds = [s for s, _ in before] == [s for s, _ in after] and fa.all() and fb.all()
    test = "paired" if paired and same_seeds else "welch"
    result = tost_paired(a, b, margin, alpha) if test == "paired" else tost_welch(a[fa], b[fb], margin, alpha)
    status = "equivalent" if result.equivalent(alpha) else "not equivalent"
    moved = status == "not equivalent" and (result.ci_low >= margin or result.ci_high <= -margin)
    not_shown = status == "not equivalent" and not moved and result.se > 0
    note = ("constant on both sides: the difference is exact" if result.se == 0
            else "moved: the interval lies outside the margin" if moved
            else "not shown: the interval straddles the margin" if not_shown else "")
    if paired and not same_seeds:
        note = (note + "; " if note else "") + "Welch: the seeds differ"
    paths = seed_paths(a, b) if test == "paired" else {}
    shown_at = runs_to_show(result, fa.sum(), out, alpha, paired=test == "paired") if not_shown else {}
    return dict(out, status=status, test=test, note=note, moved=moved, **result._asdict(), p=result.p,
                rel_diff=result.diff / abs(out["before"]["mean"]), **paths, **shown_at)


def runs_to_show(result: Tost, n: int, sides: dict, alpha: float, paired: bool) -> dict:
    """For a metric not shown: about how many seeds (paired) or runs a side (Welch) a look needs to show it
    about half the time, with s the spread of one pair's difference (paired) or sqrt(s_before^2 + s_after^2)
    (Welch) and z = z_{1-alpha}:

    * `runs_to_show`: if the measured mean move d held, ``(z s / (m - |d|))^2``; None when |d| >= m (no
      number of runs shows it at that mean move);
    * `runs_to_show_if_no_move`: if the true move were 0, ``((z + 0.674) s / m)^2`` (0.674: the median of
      |d_hat| in units of its standard error).

    Planning figures for the next look, not tests."""
    spread = (result.se * math.sqrt(n) if paired
              else math.hypot(sides["before"]["sd"], sides["after"]["sd"]))
    z, room = float(stats.norm.ppf(1 - alpha)), result.margin - abs(result.diff)
    at_zero = int(math.ceil(((z + float(stats.norm.ppf(0.75))) * spread / result.margin) ** 2))
    return {"runs_to_show": int(math.ceil((z * spread / room) ** 2)) if room > 0 else None,
            "runs_to_show_if_no_move": at_zero}


def seed_paths(a: np.ndarray, b: np.ndarray) -> dict:
    """Paired seeds (same order, all finite) split by `OTHER_PATH_REL`: how many took another path, the
    range of their relative moves, and the largest relative move of the others (None when there is none).
    A seed whose value before is 0 counts as another path when its value after is not."""
    scale = np.abs(a)
    rel = np.divide(b - a, scale, out=np.where(b == a, 0.0, np.inf), where=scale > 0)
    far = np.abs(rel) > OTHER_PATH_REL
    return {"other_path": int(far.sum()),
            "other_path_range": [float(rel[far].min()), float(rel[far].max())] if far.any() else None,
            "same_path_max": float(np.abs(rel[~far]).max()) if (~far).any() else None}


def paths_text(m: dict) -> str:
    """'k of n seeds took another path (lo to hi), the others agree to x' for a paired metric, else ''."""
    if "other_path" not in m:
        return ""
    n = m["before"]["n"]
    text = f"{m['other_path']} of {n} seeds took another path"
    if m["other_path_range"]:
        lo, hi = m["other_path_range"]
        text += f" ({_pct(lo)} to {_pct(hi)})"
    if m["same_path_max"] is not None and m["other_path"] < n:
        text += f", the others agree to {m['same_path_max']:.1g}"
    return text


def shown_at_text(m: dict) -> str:
    """'≈ N seeds would show it ..., ≈ N0 if the true move were 0' for a metric not shown (`runs_to_show`)."""
    if "runs_to_show" not in m:
        return ""
    unit = "paired seeds" if m.get("test") == "paired" else "runs a side"
    at_zero = f"≈ {m['runs_to_show_if_no_move']:,} if the true move were 0"
    if m["runs_to_show"] is None:
        return f"no number of runs shows it at this mean move (|diff| ≥ margin); {at_zero}"
    return f"≈ {m['runs_to_show']:,} {unit} would show it if this mean move and spread held, {at_zero}"


def compare_cell(key: tuple, before: dict, after: dict, margins: dict, default_margin: float, alpha: float,
                 paired: bool = False, only: tuple[str, ...] | None = None) -> dict:
    """One cell in both directories: identical, or each metric compared (`compare_metric`)."""
    out = {"cell": dict(zip(CELL_FIELDS, key)), "label": cell_label(key),
           "runs": [len(before["runs"]), len(after["runs"])]}
    if before["status"] != after["status"]:
        return dict(out, status="not decidable", note=f"status {before['status']} -> {after['status']}", metrics=[])
    if before.get("data", []) != after.get("data", []):   # another data set: the runs are not comparable
        return dict(out, status="not decidable", metrics=[],
                    note=f"the data differ (sha256 {', '.join(h[:12] for h in before.get('data', [])) or '?'} -> "
                         f"{', '.join(h[:12] for h in after.get('data', [])) or '?'})")
    if runs_identical(before["runs"], after["runs"]):
        return dict(out, status="identical", metrics=[])
    metrics = [compare_metric(name, metric_values(before["runs"], name), metric_values(after["runs"], name),
                              margins.get(name, default_margin), alpha, paired)
               for name in metric_names(before["runs"], after["runs"]) if not only or name in only]
    if not metrics:
        return dict(out, status="not decidable", note="the runs differ but carry no metric", metrics=[])
    statuses = {m["status"] for m in metrics}
    status = next((s for s in ("not equivalent", "not decidable") if s in statuses), "equivalent")
    if status == "not equivalent":       # evidence of a move, or only too few runs to show equivalence
        out["how"] = "moved" if any(m.get("moved") for m in metrics) else "not shown"
    return dict(out, status=status, note="", metrics=metrics)


def compare_cells(before_dir, after_dir, margins: dict, default_margin: float, alpha: float,
                  paired: bool = False, only: tuple[str, ...] | None = None) -> dict:
    before, after = load_cells(before_dir), load_cells(after_dir)
    common = sorted(set(before) & set(after), key=str)
    cells = [compare_cell(k, before[k], after[k], margins, default_margin, alpha, paired, only) for k in common]
    return {"compared": sorted(cells, key=lambda c: (ORDER[c["status"]], c["label"])),
            "only_before": [cell_label(k) for k in sorted(set(before) - set(after), key=str)],
            "only_after": [cell_label(k) for k in sorted(set(after) - set(before), key=str)]}


# --- audits (listed, not gating) -------------------------------------------------------------------------

def load_audits(results_dir) -> dict[str, dict]:
    """{audit file (relative): {"plain": lower bound on ε, "halved": the same with halved noise}}."""
    root = Path(results_dir) / "audits"
    out = {}
    for path in sorted(root.rglob("*.json")) if root.is_dir() else []:
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        out[str(rel)] = {side: (data.get(side) or {}).get("epsilon_lower_bound") for side in ("plain", "halved")}
    return out


def compare_audits(before_dir, after_dir) -> dict:
    before, after = load_audits(before_dir), load_audits(after_dir)
    common = sorted(set(before) & set(after))
    moved = [{"audit": a, "before": before[a], "after": after[a]} for a in common if before[a] != after[a]]
    return {"moved": moved, "unchanged": len(common) - len(moved),
            "only_before": sorted(set(before) - set(after)), "only_after": sorted(set(after) - set(before))}


# --- the report ------------------------------------------------------------------------------------------

def build_report(before_dir, after_dir, margin: float = DEFAULT_MARGIN, alpha: float = DEFAULT_ALPHA,
                 margins: dict | None = None, paired: bool = False, common_only: bool = False,
                 metrics: tuple[str, ...] | None = None) -> dict:
    margins = {**DOCUMENTED_MARGINS, **(margins or {})}
    report = {"before": str(before_dir), "after": str(after_dir),
              "settings": {"margin": margin, "alpha": alpha, "margins": margins, "paired": paired,
                           "common_only": common_only, "min_runs": MIN_RUNS, "metrics": list(metrics or [])},
              "claims": compare_claims(load_claims(before_dir), load_claims(after_dir)),
              "cells": compare_cells(before_dir, after_dir, margins, margin, alpha, paired, metrics),
              "audits": compare_audits(before_dir, after_dir)}
    report["reasons"] = rejection_reasons(report, common_only)
    report["accepted"] = not report["reasons"]
    return report


def rejection_reasons(report: dict, common_only: bool = False) -> list[str]:
    """Why the change is not accepted (empty: accepted)."""
    claims, cells = report["claims"], report["cells"]
    counts = status_counts(cells["compared"])
    reasons = [f"{len(claims['changed'])} claim verdict(s) changed"] if claims["changed"] else []
    reasons += [f"{counts[s]} cell(s) {s}" for s in ("not equivalent", "not decidable") if counts.get(s)]
    if not common_only:
        one_sided = [(len(claims[s]), f"claim(s) {s.replace('_', ' ')}") for s in ("only_before", "only_after")]
        one_sided += [(len(cells[s]), f"cell(s) {s.replace('_', ' ')}") for s in ("only_before", "only_after")]
        reasons += [f"{n} {what}" for n, what in one_sided if n]
    return reasons


def status_counts(cells: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for cell in cells:
        counts[cell["status"]] += 1
    return dict(counts)


def count_text(cells: list[dict], status: str) -> str:
    """"n status", and for cells not equivalent how many moved (an interval outside the margin) and how
    many are only not shown (an interval straddling it: too few runs to decide)."""
    text = f"{sum(c['status'] == status for c in cells)} {status}"
    hows = [c["how"] for c in cells if c["status"] == status and c.get("how")]
    if hows:
        text += f" [{hows.count('moved')} moved, {hows.count('not shown')} not shown]"
    return text


def labels_to_look_again(report: dict) -> list[str]:
    """The cells in both directories that are neither identical nor shown equivalent, by label: the cells
    a next look with more runs would take (`grid_release_equivalence.py --cells-from`)."""
    return [c["label"] for c in report["cells"]["compared"] if c["status"] in ("not equivalent", "not decidable")]


def _g(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.6g}"


def _pct(x: float) -> str:
    return f"{100 * x:+.3g} %"


def metric_line(m: dict) -> str:
    """One metric's evidence: means, difference, margin, TOST p-value (or why it was not tested)."""
    if m["status"] == "equal" or "after" not in m:
        return f"{m['metric']}: {m['status']}" + (f" ({m['note']})" if m.get("note") else "")
    text = f"{m['metric']}: {_g(m['before']['mean'])} -> {_g(m['after']['mean'])}"
    if "diff" in m:
        text += (f", diff {_g(m['diff'])} ({_pct(m['rel_diff'])}), margin ±{_g(m['margin'])}"
                 f" ({m['margin_rel']:.2%}), {m['test']} TOST p={_g(m['p'])},"
                 f" CI [{_g(m['ci_low'])}, {_g(m['ci_high'])}]")
    text += f", n {m['before']['n']}/{m['after']['n']}" + (f"; {m['note']}" if m.get("note") else "")
    text += f"; {paths}" if (paths := paths_text(m)) else ""
    return text + (f"; {shown}" if (shown := shown_at_text(m)) else "")


def worst_metrics(cell: dict) -> list[dict]:
    """The metrics that decided a cell's status, least equivalent first (largest TOST p-value); for an
    equivalent cell the one that moved most."""
    if cell["status"] in ("not equivalent", "not decidable"):
        return sorted((m for m in cell["metrics"] if m["status"] == cell["status"]), key=lambda m: -m.get("p", 1.0))
    tested = [m for m in cell["metrics"] if "rel_diff" in m]
    return [max(tested, key=lambda m: abs(m["rel_diff"]))] if tested else []


def format_summary(report: dict) -> str:
    """The concise human summary printed by the command."""
    s, claims, cells, audits = report["settings"], report["claims"], report["cells"], report["audits"]
    lines = [f"equivalence: {report['before']} -> {report['after']}  (TOST, alpha {s['alpha']}, margin "
             f"{s['margin']:.2%} of |mean before|{', ' + str(s['margins']) if s['margins'] else ''}"
             f"{', paired by seed' if s['paired'] else ', Welch'})"]
    if not claims["counted"]["before"] and not claims["counted"]["after"]:
        lines.append("claims: none in either directory (checks/ not written): verdicts not compared")
    else:
        lines.append(f"claims: {claims['unchanged']} unchanged, {len(claims['changed'])} changed, "
                     f"{len(claims['only_before'])} before only, {len(claims['only_after'])} after only")
    lines += [f"  changed  {c['paper']}/{c['item']}: {c['claim']}: {c['before']} -> {c['after']}"
              f" (quantity {c['quantity_before'] or 'n/a'} -> {c['quantity_after'] or 'n/a'})"
              for c in claims["changed"]]
    lines += [f"  {side.replace('_', ' ')}  {c['paper']}/{c['item']}: {c['claim']}: "
              f"{c['before'] if side == 'only_before' else c['after']}"
              for side in ("only_before", "only_after") for c in claims[side]]
    lines.append(f"cells: {len(cells['compared'])} in both (" + ", ".join(
        count_text(cells["compared"], st) for st in DISPLAY) + f"), {len(cells['only_before'])} before only, "
        f"{len(cells['only_after'])} after only")
    for cell in cells["compared"]:
        if cell["status"] in ("not equivalent", "not decidable"):
            worst = worst_metrics(cell)
            lines.append(f"  {cell['status']}  {cell['label']}" + (f": {cell['note']}" if cell.get("note") else ""))
            lines += [f"      {metric_line(worst[0])}" + (f" (and {len(worst) - 1} more)" if len(worst) > 1 else "")
                      for _ in worst[:1]]
    moved = [(cell, m) for cell in cells["compared"] if cell["status"] == "equivalent" for m in worst_metrics(cell)]
    if moved:
        cell, m = max(moved, key=lambda cm: abs(cm[1]["rel_diff"]))
        lines.append(f"  largest move among equivalent cells: {cell['label']}: {metric_line(m)}")
    lines += [f"  {side.replace('_', ' ')}  {label}" for side in ("only_before", "only_after") for label in cells[side]]
    lines.append(f"audits (not gating): {audits['unchanged']} unchanged, {len(audits['moved'])} moved, "
                 f"{len(audits['only_before'])} before only, {len(audits['only_after'])} after only")
    lines += [f"  moved  {a['audit']}: ε lower bound {a['before']} -> {a['after']}" for a in audits["moved"]]
    lines.append("ACCEPTED: every verdict unchanged, every cell identical or equivalent" if report["accepted"]
                 else "NOT ACCEPTED: " + "; ".join(report["reasons"]))
    return "\n".join(lines) + "\n"


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def format_markdown(report: dict, title: str = "") -> str:
    """A report to paste under "Reports" in docs/EQUIVALENCE.md."""
    s, claims, cells = report["settings"], report["claims"], report["cells"]
    out = [f"### {title or 'Equivalence report'}", "",
           f"`{report['before']}` → `{report['after']}`; TOST ({'paired by seed' if s['paired'] else 'Welch'}), "
           f"α = {s['alpha']}, margin {s['margin']:.2%} of |mean before|"
           + (f", per metric {s['margins']}" if s["margins"] else "") + ".", "",
           f"**{'Accepted' if report['accepted'] else 'Not accepted: ' + '; '.join(report['reasons'])}.**", "",
           f"Claims: {claims['unchanged']} unchanged, {len(claims['changed'])} changed, "
           f"{len(claims['only_before'])} before only, {len(claims['only_after'])} after only.", ""]
    rows = [(f"{c['paper']}/{c['item']}", c["claim"], c["before"] or "–", c["after"] or "–")
            for key in ("changed", "only_before", "only_after") for c in claims[key]]
    if rows:
        out += ["| item | claim | before | after |", "|---|---|---|---|"]
        out += [f"| {' | '.join(_md(x) for x in row)} |" for row in rows] + [""]
    out += [f"Cells: {len(cells['compared'])} in both: "
            + ", ".join(count_text(cells["compared"], st) for st in DISPLAY)
            + f"; {len(cells['only_before'])} before only, {len(cells['only_after'])} after only.", ""]
    moved = [(cell, m) for cell in cells["compared"] if cell["status"] != "identical" for m in worst_metrics(cell)]
    if moved:
        out += ["| cell | status | metric | before | after | diff | margin | p | seeds on another path | to show it |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for cell, m in moved:
            b, a = m.get("before", {}), m.get("after", {})
            diff = f"{_g(m['diff'])} ({_pct(m['rel_diff'])})" if "diff" in m else _md(m.get("note", ""))
            margin, p = ("±" + _g(m["margin"]), _g(m["p"])) if "p" in m else ("", "")
            out.append(f"| {_md(cell['label'])} | {cell['status']} | {m['metric']} "
                       f"| {_g(b.get('mean'))} (n {b.get('n', '')}) | {_g(a.get('mean'))} (n {a.get('n', '')}) "
                       f"| {diff} | {margin} | {p} | {_md(paths_text(m))} | {_md(shown_at_text(m))} |")
        out.append("")
    out += [f"- {side.replace('_', ' ')}: {_md(label)}"
            for side in ("only_before", "only_after") for label in cells[side]]
    return "\n".join(out).rstrip() + "\n"


def jsonable(obj):
    """The report as strict JSON: NaN as null, infinities as "inf"/"-inf" (as run records write them)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return None if math.isnan(obj) else float(obj) if math.isfinite(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def parse_margins(items: list[str] | None) -> dict[str, float]:
    """`--margins cost_kmeans=0.01 info.tree_cost=0.02` (or comma-separated) as {metric: relative margin}."""
    out = {}
    for item in items or []:
        for part in filter(None, item.split(",")):
            name, sep, value = part.partition("=")
            if not sep or not name.strip():
                raise ValueError(f"--margins takes METRIC=VALUE, got {part!r}")
            out[name.strip()] = float(value)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", help="results directory before the change")
    parser.add_argument("after", help="results directory after the change")
    parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN, help="relative margin (default 0.005)")
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, help="level of each one-sided test")
    parser.add_argument("--margins", action="append", metavar="METRIC=VALUE",
                        help="a metric's own relative margin (repeat or comma-separate)")
    parser.add_argument("--paired", action="store_true", help="pair runs by seed (same seeds on both sides)")
    parser.add_argument("--common-only", action="store_true",
                        help="cells and claims on one side only are listed but do not fail")
    parser.add_argument("--json", help="write the full report here")
    parser.add_argument("--markdown", help="write a markdown report here")
    parser.add_argument("--title", default="", help="the markdown report's heading")
    parser.add_argument("--labels-out", help="write here the labels of the cells neither identical nor shown "
                                             "equivalent, one a line (for grid_release_equivalence.py --cells-from)")
    parser.add_argument("--metrics", default="",
                        help="compare only these metrics (comma-separated, e.g. cost_kmeans,cost_kmedian,nicv: the "
                             "cost distribution, when a change adds or nulls other fields by design)")
    args = parser.parse_args(argv)
    for d in (args.before, args.after):
        if not Path(d).is_dir():
            parser.error(f"not a directory: {d}")
    metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip()) or None
    report = build_report(args.before, args.after, args.margin, args.alpha, parse_margins(args.margins),
                          args.paired, args.common_only, metrics)
    sys.stdout.write(format_summary(report))
    if args.json:
        Path(args.json).write_text(json.dumps(jsonable(report), indent=1) + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(format_markdown(report, args.title), encoding="utf-8")
    if args.labels_out:
        Path(args.labels_out).write_text("".join(f"{label}\n" for label in labels_to_look_again(report)),
                                         encoding="utf-8")
    return 0 if report["accepted"] else 1


if __name__ == "__main__":
    sys.exit(main())
