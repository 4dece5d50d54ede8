"""What a finished run of the workflow cost, measured: the run records' own wall times, summed.

    .venv/bin/python benchmarks/measured_costs.py [RESULTS_DIR] [--top 15] [--paper P ...]

Every run record (`RESULTS_DIR/runs/**.json`) holds each run's `wall_time_s`: the time of the
algorithm alone (data loading, process start-up and the workflow's own jobs excluded). Run jobs are
single-threaded, so the sum is CPU time, provided the machine was not oversubscribed while they ran
(beside other work it errs long). Printed: hours by paper, by algorithm, and the costliest run jobs
(batches) with their time per k — the measured counterpart of `estimate_full_protocol.py`'s
estimate, and what `batch: k | cell` (config/README.md) is for when one job dominates.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path


def batch_costs(results: Path, papers: set[str] | None = None) -> list[dict]:
    """One row per run-job file: paper, item, group, data, algorithm, runs, seconds, seconds per k."""
    rows = []
    for path in sorted((results / "runs").rglob("*.json")):
        parts = path.relative_to(results / "runs").parts
        if len(parts) != 5 or (papers and parts[0] not in papers) or path.name.endswith(".released.json"):
            continue
        records = json.loads(path.read_text(encoding="utf-8")).get("records", [])
        per_k: Counter = Counter()
        runs = 0
        for record in records:
            for run in record.get("runs", []):
                per_k[record.get("k")] += float(run.get("wall_time_s") or 0.0)
                runs += 1
        paper, item, group, data, name = parts
        rows.append({"paper": paper, "item": item, "group": group, "data": data, "algorithm": name[:-5],
                     "runs": runs, "seconds": sum(per_k.values()), "per_k": dict(per_k)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", default="results")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--paper", action="append", help="only these papers (repeatable)")
    args = ap.parse_args()
    rows = batch_costs(Path(args.results), set(args.paper) if args.paper else None)
    if not rows:
        raise SystemExit(f"no run records under {args.results}/runs: run the workflow first")
    total = sum(r["seconds"] for r in rows)
    print(f"{len(rows)} run jobs, {sum(r['runs'] for r in rows):,} runs: {total / 3600:.2f} CPU-hours "
          "(the runs' own wall times)")
    for key in ("paper", "algorithm"):
        by = defaultdict(float)
        for r in rows:
            by[r[key]] += r["seconds"]
        print(f"\nby {key}:")
        for name, sec in sorted(by.items(), key=lambda kv: -kv[1])[: args.top if key == "algorithm" else None]:
            print(f"  {name:40s} {sec / 3600:7.2f} h  {100 * sec / total:5.1f} %")
    print("\ncostliest run jobs (minutes; per k):")
    for r in sorted(rows, key=lambda r: -r["seconds"])[: args.top]:
        ks = ", ".join(f"k={k}: {s / 60:.1f}"
                       for k, s in sorted(r["per_k"].items(), key=lambda kv: (kv[0] is None, kv[0])))
        print(f"  {r['seconds'] / 60:7.1f}  {r['paper']}/{r['item']}/{r['group']}/{r['data']}/{r['algorithm']}"
              f"  ({r['runs']} runs; {ks})")


if __name__ == "__main__":
    main()
