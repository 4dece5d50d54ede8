"""Error rates of the claims engine (dpclust.pipeline.verdicts) under the null, simulated at the
claims' real cell counts, beside the rule it replaces; prints the table docs/VERDICTS.md shows.

Each cell is the mean of 10 runs (Student-t, 9 df) whose truth sits exactly at the claim's
threshold in every cell: the least favourable case for both errors. "False fail": the claim is true
(threshold nudged above the truth) and is reported as not holding. "False hold": the claim is false
(the truth at the threshold of a strict claim) and is reported as holding. The legacy rule: a cell
fails when its two-sided 95 % interval lies beyond the threshold, the claim fails when any cell
fails, and holds when every cell's interval lies on the claim's side.

    python benchmarks/verdict_error_rates.py [--reps 4000] [--seed 1]
"""
from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import stats

from dpclust.pipeline.verdicts import ALPHA, Directional, judge, t_cell

CELL_COUNTS = (1, 2, 4, 8, 25, 150)
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"Under the null (truth at the threshold in every cell; cells of {RUNS} runs; "
          f"{args.reps} replicates; one-sided α = {ALPHA:g}):\n")
    print("| cells | engine: false fail | engine: false hold | legacy: false fail | legacy: false hold |")
    print("|---:|---:|---:|---:|---:|")
    for m in CELL_COUNTS:
        reps = args.reps if m <= 25 else max(args.reps // 4, 500)
        r = simulate(m, reps, rng)
        print(f"| {m} | {r['false_fail']:.3f} | {r['false_hold']:.3f} | {r['legacy_false_fail']:.3f} | "
              f"{r['legacy_false_hold']:.3f} |")


if __name__ == "__main__":
    main()
