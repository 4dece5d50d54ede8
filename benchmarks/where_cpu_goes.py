"""Where the full protocol's CPU time goes: compiled kernels or the Python interpreter, measured.

    .venv/bin/python benchmarks/estimate_full_protocol.py --mirror ../shared/datasets --json est.json \
        --data-dir DATA [--cache FILE]
    .venv/bin/python benchmarks/where_cpu_goes.py est.json --data-dir DATA [--cover 0.6] [--after 0] \
        [--py-spy PATH] [--summary benchmarks/results/where_cpu_goes.json]

Takes the estimator's per-group estimates (`--json`), and for the costliest groups that together
make up `--cover` of the estimate, runs real runs of the group (its middle-ε block's spec, one
thread, about `--seconds` of runs after one warm-up run) under py-spy's native sampler
(`py-spy record --native`; `pip install py-spy`, not a dependency of the project). Each sample is
put in the library its innermost frame runs in: OpenBLAS, NumPy's C core, NumPy's random, SciPy's
and scikit-learn's compiled code, libc/libm, or the Python interpreter (a Python frame with no
native frame under it; numba's compiled kernels have no symbols and fall in "other native"). Only
samples inside the runner's algorithm call of the runs after the warm-up count (`run_job._runs`
under `_measured_runs`: data loading, imports and the first call's kernel loads are left out).
Printed: each group's shares; then, over every sampled group weighted by its estimated CPU time,
each library's share and its CPU-hours (the group's estimate times its share), for all groups and
for the five papers and the leaderboard apart; then this core's single-thread GEMM rates for
reference (a large square product and the assignment product of a k-means pass on MNIST, k = 10).
`--after A` skips the costliest groups that make up the first A of the estimate, so that a second
pass (`--after 0.6 --cover 0.8`) extends a first (`--cover 0.6`) without sampling its groups again.

What it is for: how much of the estimate could go by removing interpreter overhead alone (the
interpreter's share), and how much sits in compiled kernels whose arithmetic fixes the bytes of
the results (same seed, same bytes: such a kernel can only be made faster by one that computes the
same floating-point operations in the same order). That rest is each group's floor at the same
arithmetic: `--summary` writes it per group (and the shares above) for docs/PERFORMANCE.md
(benchmarks/performance_page.py); going below it means a numerics change, accepted only through the
equivalence harness (docs/EQUIVALENCE.md).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]

#: (category, pattern of the innermost frame's library), first match wins.
CATEGORIES = (
    ("BLAS (OpenBLAS)", re.compile(r"openblas", re.I)),
    ("NumPy random", re.compile(r"numpy/random/")),
    ("NumPy C core", re.compile(r"numpy/")),
    ("SciPy compiled", re.compile(r"scipy/")),
    ("scikit-learn compiled", re.compile(r"sklearn/")),
    ("libc / libm", re.compile(r"^(libc|libm)[.-]")),
    ("Python interpreter", re.compile(r"(\.py$|libpython|^<frozen|^python)")),
)
OTHER = "other native"
INTERPRETER = "Python interpreter"
ALGORITHM_FRAME = "_runs (dpclust/pipeline/run_job.py"
MEASURED_FRAME = "_measured_runs ("


def categorise(raw: Path) -> Counter:
    """Samples per category from py-spy's raw (collapsed-stack) output: the measured runs' algorithm
    frames only."""
    counts: Counter = Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if ALGORITHM_FRAME not in stack or MEASURED_FRAME not in stack:
            continue
        leaf = stack.split(";")[-1]
        m = re.search(r"\(([^()]*)\)\s*$", leaf)
        where = (m.group(1) if m else leaf).split(":")[0]
        counts[next((name for name, pattern in CATEGORIES if pattern.search(where)), OTHER)] += int(n)
    return counts


def _part(group) -> str:
    """'leaderboard' or 'papers' (the five papers and the shared baselines) for a group key."""
    return "leaderboard" if group[0] == "leaderboard" else "papers"


def summarise(sampled) -> dict[str, dict[str, tuple[float, float]]]:
    """{part: {category: (share of the part's sampled estimate, CPU-hours)}} over `sampled`, a list
    of (group, estimated CPU seconds, Counter of samples per category); part "all" is every group.
    A group's estimate is spread over the categories in proportion to its samples."""
    names = [name for name, _ in CATEGORIES] + [OTHER]
    out = {}
    for part in ("all", "papers", "leaderboard"):
        chosen = [(cpu, counts) for group, cpu, counts in sampled if part in ("all", _part(group))]
        total = sum(cpu for cpu, _ in chosen)
        seconds = {name: sum(cpu * counts[name] / (sum(counts.values()) or 1) for cpu, counts in chosen)
                   for name in names}
        out[part] = {name: (seconds[name] / total if total else 0.0, seconds[name] / 3600) for name in names}
    return out


def floors(sampled) -> list[dict]:
    """Per sampled group, costliest first: its estimate, its samples' shares per library, and its floor
    at the same arithmetic (the estimate without the interpreter's share), in CPU-hours."""
    out = []
    for group, cpu, counts in sorted(sampled, key=lambda s: -s[1]):
        n = sum(counts.values()) or 1
        shares = {name: counts[name] / n for name in [name for name, _ in CATEGORIES] + [OTHER] if counts[name]}
        out.append({"group": "/".join(map(str, group)), "part": _part(group), "cpu_hours": round(cpu / 3600, 3),
                    "samples": sum(counts.values()), "shares": {k: round(v, 4) for k, v in shares.items()},
                    "floor_cpu_hours": round(cpu / 3600 * (1 - counts[INTERPRETER] / n), 3)})
    return out


def changed_since(groups: list[dict], algorithms: dict, commit: str | None) -> None:
    """Mark each group (`floors` rows) whose algorithm's code (its module and every dpclust module it
    imports) changed between `commit` (the estimate's) and the checkout: its CPU-hours are then the
    estimate's of older code, while its shares are the new code's. Code as the run jobs' code hashes
    see it (`codehash.code_text`): an edit of comments or docstrings changes nothing."""
    from dpclust.pipeline.codehash import closure, code_text, module_path
    from dpclust.pipeline.resolve import function_module

    if not commit:
        return
    diff = subprocess.run(["git", "diff", "--name-only", commit, "--", "src"], cwd=REPO, capture_output=True,
                          text=True)
    if diff.returncode:
        return
    changed = set()
    for name in diff.stdout.split():
        old = subprocess.run(["git", "show", f"{commit}:{name}"], cwd=REPO, capture_output=True, text=True)
        now = REPO / name
        if (old.returncode or not now.is_file() or not name.endswith(".py")
                or code_text(old.stdout) != code_text(now.read_text(encoding="utf-8"))):
            changed.add(now.resolve())
    for g in groups:
        modules = closure(function_module(algorithms[g["group"].split("/")[2]]["function"]))
        g["code_changed_since_estimate"] = any(
            (path := module_path(m)) is not None and Path(path).resolve() in changed for m in modules)


def _run_one(spec_path: str, data: str, reps: int) -> None:
    """Worker (the process py-spy samples): one warm-up run, then `reps` runs of the spec; a spec
    that reads recorded runs (`reference_runs`) gets them from `<spec>.references.json`, recorded
    by the parent, so that their runs are not sampled."""
    from dpclust.pipeline.heap import retain_freed_memory
    from dpclust.pipeline.run_job import ReferenceRuns, run_spec

    retain_freed_memory()   # as the workflow's run jobs (`dpclust run`) do
    spec = json.loads(Path(spec_path).read_text())
    refs_path = Path(spec_path + ".references.json")
    references = ReferenceRuns(json.loads(refs_path.read_text())) if refs_path.exists() else None
    start = spec["seeds"][0]
    loaded: dict = {}
    run_spec(dict(spec, seeds=[start, 1]), data, _loaded=loaded, references=references)   # imports, compiles
    _measured_runs(spec, data, loaded, references, start + 1, reps)


def _measured_runs(spec, data, loaded, references, start, reps) -> None:
    """The runs whose samples count (`MEASURED_FRAME`): the warm-up's one-off imports and kernel
    loads are left out, as a run job pays them once for all its seeds."""
    from dpclust.pipeline.run_job import run_spec

    for i in range(reps):
        run_spec(dict(spec, seeds=[start + i, 1]), data, _loaded=loaded, references=references)


def _record_references(spec: dict, runs, data: Path, reps: int, out: Path) -> None:
    """The recorded runs `spec` reads, for the seeds the worker runs (none: no file)."""
    from dpclust.pipeline.run_job import run_spec
    from estimate_full_protocol import _reference_specs

    refs = _reference_specs(spec, runs)
    out.unlink(missing_ok=True)
    if refs:
        start = spec["seeds"][0]
        out.write_text(json.dumps([run_spec(dict(r, seeds=[start, reps + 1]), str(data)) for r in refs]))


def _gemm_rates() -> dict[str, float]:
    """GFLOP/s of this core (one thread) on a 2000² float64 product and on MNIST's assignment shape
    (10 × 784 centres times 256-row blocks of 70,000 rows), the best of three."""
    import numpy as np

    rng = np.random.default_rng(0)
    A, B = rng.random((2000, 2000)), rng.random((2000, 2000))
    X, C = rng.random((70_000, 784)), rng.random((10, 784))

    def best(f, flops):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        return flops / min(times) / 1e9

    return {"float64 2000 x 2000 product": best(lambda: A @ B, 2 * 2000 ** 3),
            "MNIST assignment, k = 10 (256-row blocks)":
                best(lambda: [C @ X[i:i + 256].T for i in range(0, 70_000, 256)], 2 * 10 * 784 * 70_000)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("estimate", nargs="?", help="the estimator's --json output")
    parser.add_argument("--data-dir", help="the processed data the estimator prepared (its --data-dir)")
    parser.add_argument("--cover", type=float, default=0.6, help="share of the estimate to sample (costliest first)")
    parser.add_argument("--after", type=float, default=0.0,
                        help="skip the costliest groups that make up this share (extends an earlier --cover)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds of runs to sample per group (about)")
    parser.add_argument("--rate", type=int, default=100, help="py-spy samples per second")
    parser.add_argument("--py-spy", default=shutil.which("py-spy"), help="the py-spy executable")
    parser.add_argument("--estimate-commit", default=None,
                        help="the commit the estimate was made at (default: that of the committed "
                             "benchmarks/results/estimate_full_protocol.json)")
    parser.add_argument("--summary", help="also write the shares, each group's floor and the GEMM rates here "
                        "(JSON; benchmarks/results/where_cpu_goes.json is the committed one)")
    parser.add_argument("--run-one", nargs=3, metavar=("SPEC", "DATA", "REPS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_one:
        _run_one(args.run_one[0], args.run_one[1], int(args.run_one[2]))
        return 0
    if not args.estimate or not args.data_dir:
        parser.error("give the estimator's --json output and its --data-dir")
    if not args.py_spy:
        parser.error("py-spy not found: pip install py-spy, or pass --py-spy PATH")

    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan
    from estimate_full_protocol import group_of, middle_block

    rows = [r for r in json.loads(Path(args.estimate).read_text()) if not r["skipped"]]
    total = sum(r["cpu_s"] for r in rows)
    rows.sort(key=lambda r: -r["cpu_s"])
    chosen, covered, before = [], 0.0, 0.0
    for r in rows:
        if before + covered >= args.cover * total:
            break
        if before < args.after * total:
            before += r["cpu_s"]
            continue
        chosen.append(r)
        covered += r["cpu_s"]
    the_plan = plan(load_config(REPO / "config", overrides={"preset": "full"}))
    jobs = defaultdict(list)
    for job in the_plan.runs:
        jobs[group_of(job)].append(job)
    data_dir = Path(args.data_dir)
    sampled = []
    print(f"{len(chosen)} groups, {covered / 3600:.2f} of the estimate's {total / 3600:.2f} CPU-hours "
          f"({100 * covered / total:.0f}%" + (f", after the costliest {100 * before / total:.0f}%" if before else "")
          + ")\n")
    names = [name for name, _ in CATEGORIES] + [OTHER]
    print("group (paper/item/algorithm/dataset/k), est. CPU min: " + ", ".join(names))
    with tempfile.TemporaryDirectory() as tmp:
        for r in chosen:
            group = tuple(r["group"])
            job = middle_block(jobs[group])
            spec_path = Path(tmp) / "spec.json"
            spec_path.write_text(json.dumps(job.spec))
            data = data_dir / "processed" / f"{job.dataset}.h5"
            if not data.exists():
                print(f"  {'/'.join(map(str, group)):66s} not sampled: {data} is missing")
                continue
            reps = max(1, min(50, math.ceil(args.seconds / max(r["per_seed_s"], 1e-3))))
            _record_references(job.spec, the_plan.runs, data, reps, Path(f"{spec_path}.references.json"))
            raw = Path(tmp) / "out.raw"
            subprocess.run([args.py_spy, "record", "--native", "-r", str(args.rate), "-f", "raw", "-o", str(raw),
                            "--", sys.executable, __file__, "--run-one", str(spec_path), str(data), str(reps)],
                           check=True, capture_output=True)
            counts = categorise(raw)
            if not counts:   # (no sample inside the algorithm: nothing to say of this group)
                print(f"  {'/'.join(map(str, group)):66s} not sampled: no sample inside the algorithm's runs")
                continue
            n = sum(counts.values())
            sampled.append((group, r["cpu_s"], counts))
            print(f"  {'/'.join(map(str, group)):66s} {r['cpu_s'] / 60:6.1f}: "
                  + ", ".join(f"{100 * counts[name] / n:4.1f}" for name in names), flush=True)
    summary = summarise(sampled)
    for part, label in (("all", "every sampled group"), ("papers", "the five papers and the baselines"),
                        ("leaderboard", "the leaderboard")):
        hours = sum(h for _, h in summary[part].values())
        if not hours:
            continue
        print(f"\n{label} ({hours:.2f} CPU-hours sampled): share weighted by estimated CPU time, CPU-hours")
        for name in names:
            share, h = summary[part][name]
            print(f"  {name:24s} {100 * share:5.1f}%  {h:5.2f}")
    rates = _gemm_rates()
    print("\nthis core, one thread:")
    for name, rate in rates.items():
        print(f"  {name:45s} {rate:6.1f} GFLOP/s")
    if args.summary:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True).stdout.strip() or None
        committed = REPO / "benchmarks" / "results" / "estimate_full_protocol.json"
        estimate_commit = args.estimate_commit or (json.loads(committed.read_text())["commit"]
                                                   if committed.exists() else None)
        groups = floors(sampled)
        changed_since(groups, the_plan.config["algorithms"], estimate_commit)
        Path(args.summary).write_text(json.dumps({
            "commit": commit, "estimate_commit": estimate_commit, "estimate_cpu_hours": round(total / 3600, 3),
            "sampled_cpu_hours": round(covered / 3600, 3), "cover": args.cover, "after": args.after,
            "seconds_per_group": args.seconds, "groups": groups,
            "parts": {part: {name: [round(share, 4), round(h, 3)] for name, (share, h) in summary[part].items()}
                      for part in summary},
            "gemm_gflops": {name: round(rate, 1) for name, rate in rates.items()}}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
