"""Error rates of the claims engine (dpclust.pipeline.verdicts) under the null, simulated at the
claims' real cell counts, beside the rule it replaces; prints the table docs/VERDICTS.md shows.

Each cell is the mean of 10 runs (Student-t, 9 df) whose truth sits exactly at the claim's
threshold in every cell: the least favourable case for both errors. "False fail": the claim is true
(threshold nudged above the truth) and is reported as not holding. "False hold": the claim is false
(the truth at the threshold of a strict claim) and is reported as holding. The legacy rule: a cell
fails when its two-sided 95 % interval lies beyond the threshold, the claim fails when any cell
fails, and holds when every cell's interval lies on the claim's side.

Then "most" and "almost all" (r of n cells must hold) in their least favourable nulls: true by exactly
r cells, at the threshold, the rest far on the wrong side (a fail is an error); false by one cell, r − 1
far on the claim's side and the rest at the threshold (a hold is an error). Beside the engine, the rule
it had until 2026-11-30: the share of the *decided* cells (each held at α, failed under Holm).

    python benchmarks/verdict_error_rates.py [--reps 2000] [--seed 1] [--write docs/VERDICT_ERROR_RATES.md]

`--write` makes the page docs/VERDICTS.md links to (generated: never edit it by hand).
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from scipy import stats

from dpclust.pipeline.verdicts import ALPHA, FAILS, HOLDS, QUANTIFIERS, Directional, judge, required, t_cell

CELL_COUNTS = (1, 2, 4, 8, 25, 150)
#: the share quantifiers at cell counts the papers' claims have (Su et al. Fig. 1: 5; Lu & Shen Fig. 7: 50)
SHARE_CASES = (("almost all", 5), ("most", 4), ("most", 10), ("most", 50))
RUNS = 10


def simulate(m: int, reps: int, rng: np.random.Generator, quantifier: str = "every") -> dict[str, float]:
    means = rng.standard_normal((reps, m, RUNS))
    est = means.mean(axis=2)
    se = means.std(axis=2, ddof=1) / math.sqrt(RUNS)
    q95 = float(stats.t.ppf(0.975, RUNS - 1))
    out = {"false_fail": 0.0, "false_hold": 0.0, "legacy_false_fail": 0.0, "legacy_false_hold": 0.0}
    for r in range(reps):
        cells = [t_cell(f"c{j}", float(est[r, j]), float(se[r, j]), RUNS - 1) for j in range(m)]
        out["false_hold"] += judge(cells, Directional("<", 0.0, null_margin=0.0), quantifier).result is True
        out["false_fail"] += judge(cells, Directional("<", 1e-12, null_margin=0.0), quantifier).result is False
        lo, hi = est[r] - q95 * se[r], est[r] + q95 * se[r]
        out["legacy_false_fail"] += bool((lo > 0).any())
        out["legacy_false_hold"] += bool((hi < 0).all())
    return {key: value / reps for key, value in out.items()}


def _decided_share(cells, test, quantifier: str) -> bool | None:
    """The rule before 2026-11-30: more than (or at least) the share of the decided cells hold."""
    share, strict = QUANTIFIERS[quantifier]
    v = judge(cells, test, "every")
    held, decided = v.counts[HOLDS], v.counts[HOLDS] + v.counts[FAILS]
    if decided == 0:
        return None
    return held > share * decided if strict else held >= share * decided


def simulate_share(quantifier: str, n: int, reps: int, rng: np.random.Generator) -> dict[str, float]:
    share, strict = QUANTIFIERS[quantifier]
    r = required(share, n, strict)
    out = {"false_fail": 0.0, "false_hold": 0.0, "old_false_fail": 0.0, "old_false_hold": 0.0}
    true_side, false_side = np.where(np.arange(n) < r, 0.0, 5.0), np.where(np.arange(n) < r - 1, -5.0, 0.0)
    for _ in range(reps):
        x = rng.standard_normal((n, RUNS))
        est, se = x.mean(axis=1), x.std(axis=1, ddof=1) / math.sqrt(RUNS)
        true = [t_cell(f"c{j}", float(est[j] + true_side[j]), float(se[j]), RUNS - 1) for j in range(n)]
        false = [t_cell(f"c{j}", float(est[j] + false_side[j]), float(se[j]), RUNS - 1) for j in range(n)]
        barely_true, at = Directional("<", 1e-12, null_margin=0.0), Directional("<", 0.0, null_margin=0.0)
        out["false_fail"] += judge(true, barely_true, quantifier).result is False
        out["false_hold"] += judge(false, at, quantifier).result is True
        out["old_false_fail"] += _decided_share(true, barely_true, quantifier) is False
        out["old_false_hold"] += _decided_share(false, at, quantifier) is True
    return {key: value / reps for key, value in out.items()}


def tables(reps: int, seed: int) -> list[str]:
    """The two tables (Markdown lines): the engine beside the legacy rule at the claims' cell counts,
    and the share quantifiers beside the rule they replaced."""
    rng = np.random.default_rng(seed)
    lines = [f"Under the null (truth at the threshold in every cell; cells of {RUNS} runs; {reps} replicates, "
             f"at least 500 at more than 25 cells; one-sided α = {ALPHA:g}):", "",
             "| cells | replicates | engine: false fail | engine: false hold | legacy: false fail "
             "| legacy: false hold |", "|---:|---:|---:|---:|---:|---:|"]
    for m in CELL_COUNTS:
        n = reps if m <= 25 else max(reps // 4, 500)
        r = simulate(m, n, rng)
        lines.append(f"| {m} | {n} | {r['false_fail']:.3f} | {r['false_hold']:.3f} | {r['legacy_false_fail']:.3f} | "
                     f"{r['legacy_false_hold']:.3f} |")
    lines += ["", "\"most\" and \"almost all\" in their least favourable nulls:", "",
              "| quantifier | cells | must hold | engine: false fail | engine: false hold | decided share: false fail "
              "| decided share: false hold |", "|---|---:|---:|---:|---:|---:|---:|"]
    for quantifier, n in SHARE_CASES:
        r = simulate_share(quantifier, n, reps, rng)
        need = required(QUANTIFIERS[quantifier][0], n, QUANTIFIERS[quantifier][1])
        lines.append(f"| {quantifier} | {n} | {need} | {r['false_fail']:.3f} | {r['false_hold']:.3f} | "
                     f"{r['old_false_fail']:.3f} | {r['old_false_hold']:.3f} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write", metavar="PATH", help="write the generated page there (else print the tables)")
    args = parser.parse_args(argv)
    lines = tables(args.reps, args.seed)
    if not args.write:
        print("\n".join(lines))
        return
    command = f"python benchmarks/verdict_error_rates.py --reps {args.reps} --seed {args.seed} --write {args.write}"
    page = ["# The claims engine's error rates, simulated", "",
            f"Generated by `{command}`; do not edit by hand. What is simulated and why: docs/VERDICTS.md "
            "(\"Error rates, simulated\"); a rate's standard error is about √(0.05 · 0.95 / replicates).", "",
            *lines]
    Path(args.write).write_text("\n".join(page) + "\n", encoding="utf-8")
    print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
