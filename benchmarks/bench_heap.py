"""The heap setting of the compute commands (`dpclust.pipeline.heap.retain_freed_memory`), measured.

    .venv/bin/python benchmarks/bench_heap.py --data-dir DATA [--runs 2] [GROUP ...]

For each group (paper/item/algorithm/dataset/k of the full preset; default: the costliest kinds of
run job) it takes the block at the group's middle ε and runs `--runs` runs of it in fresh processes:
one warm-up process (discarded: the first process after another group's pays more system time),
then `--rounds` rounds of one process with glibc's default heap (`DPCLUST_KEEP_FREED_MEMORY=0`) and
one with the setting. It prints the smallest CPU time of each (user + system, the kernel's
accounting of the child), its system part, the ratio, the largest peak resident memory of each, and
whether all the processes' records are the same bytes (the runs' wall times aside). DATA is a
directory with `processed/<dataset>.h5` (the estimator's `--data-dir`).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

DEFAULT_GROUPS = (
    "leaderboard/table/su2016.gkm3k/mnist70k/10",
    "leaderboard/table/lushen2020.su/mnist70k/10",
    "leaderboard/table/baselines.kmedianpp/mnist70k/10",
    "leaderboard/table/su2016.pgkm/mnist70k/10",
    "leaderboard/table/cohenaddad2022.private_lloyd/mnist70k/10",
    "leaderboard/table/su2016.eugkm/shuttle/10",
    "su2016/fig1/su2016.hybrid/adult_num/5",
    "cohenaddad2022/fig2/balcan2017.balcan_kmedian/skin/50",
)

#: The child: runs the spec's blocks with or without the setting, writes the records.
CHILD = """
import json, sys
from dpclust.pipeline.heap import retain_freed_memory
mode, spec_path, data, runs, out = sys.argv[1:]
if retain_freed_memory() != (mode == "retain"):
    sys.exit("the heap setting is not as asked")
from dpclust.pipeline.run_job import run_spec
spec = json.load(open(spec_path))
record = run_spec(dict(spec, seeds=[spec["seeds"][0], int(runs)]), data)
for run in record["runs"]:
    run.pop("wall_time_s", None)
json.dump(record, open(out, "w"), sort_keys=True)
"""


def _child(mode: str, spec_path: Path, data: Path, runs: int, out: Path) -> tuple[float, float, int]:
    """(user s, system s, peak RSS in KiB) of one child process (its own rusage, from wait4)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               DPCLUST_KEEP_FREED_MEMORY="1" if mode == "retain" else "0")
    child = subprocess.Popen([sys.executable, "-c", CHILD, mode, str(spec_path), str(data), str(runs), str(out)],
                             env=env)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"the {mode} child failed (exit {child.returncode})")
    return usage.ru_utime, usage.ru_stime, usage.ru_maxrss


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("groups", nargs="*", default=list(DEFAULT_GROUPS))
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--runs", type=int, default=2, help="runs (seeds) per process")
    parser.add_argument("--rounds", type=int, default=2, help="processes per setting")
    args = parser.parse_args(argv)

    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan
    from estimate_full_protocol import group_of, middle_block

    groups: dict[tuple, list] = {}
    for job in plan(load_config(REPO / "config", overrides={"preset": "full"})).runs:
        groups.setdefault(group_of(job), []).append(job)
    print(f"{'group':62s} {'default CPU s (sys)':>20s} {'retain CPU s (sys)':>20s} {'ratio':>6s} "
          f"{'peak MB default/retain':>23s}  same bytes")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.groups:
            paper, item, algorithm, dataset, k = name.split("/")
            jobs = groups.get((paper, item, algorithm, dataset, int(k)))
            if not jobs:
                parser.error(f"no run job of group {name} in the full preset")
            spec_path = Path(tmp) / "spec.json"
            spec_path.write_text(json.dumps(middle_block(jobs).spec))
            data = Path(args.data_dir) / "processed" / f"{dataset}.h5"
            _child("default", spec_path, data, args.runs, Path(tmp) / "warm.json")
            measured = {"default": [], "retain": []}
            records = set()
            for i in range(args.rounds):
                for mode in ("default", "retain") if i % 2 == 0 else ("retain", "default"):
                    out = Path(tmp) / f"{mode}{i}.json"
                    measured[mode].append(_child(mode, spec_path, data, args.runs, out))
                    records.add(out.read_bytes())
            (u0, s0), (u1, s1) = (min(((u + s), s) for u, s, _ in measured[m]) for m in ("default", "retain"))
            m0, m1 = (max(rss for *_, rss in measured[m]) for m in ("default", "retain"))
            print(f"{name:62s} {u0:12.1f} ({s0:5.1f}) {u1:12.1f} ({s1:5.1f}) "
                  f"{u0 / u1:6.2f} {m0 / 1024:11.0f}/{m1 / 1024:.0f}  {'yes' if len(records) == 1 else 'NO'}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
