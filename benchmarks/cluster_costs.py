"""Measure what run jobs cost (wall seconds, peak memory) and write the table that sizes SLURM jobs.

    # 1. processed datasets (from the mirror), e.g. in a scratch copy of the repository:
    snakemake --cores 2 data/processed/s1.h5 ...        (or run the quick preset once)
    # 2. time every run job of a preset, one process each, two at a time (as the workflow runs them):
    .venv/bin/python benchmarks/cluster_costs.py measure --preset quick --data-dir DIR --raw raw.tsv
    #    and the largest job (seeds x k) of each (paper, algorithm, dataset) of the full protocol:
    .venv/bin/python benchmarks/cluster_costs.py measure --preset full --largest --data-dir DIR --raw raw.tsv
    #    datasets unavailable here (no mirror file): shape-matched stand-ins, measured the same way
    .venv/bin/python benchmarks/cluster_costs.py standins --data-dir DIR --out-dir STANDINS
    .venv/bin/python benchmarks/cluster_costs.py measure --preset quick --data-dir DIR --standin-dir STANDINS \
        --only-standins --raw raw.tsv
    # 3. summarise into the table dpclust.pipeline.cluster_resources reads:
    .venv/bin/python benchmarks/cluster_costs.py summarize raw.tsv --out profiles/slurm/costs.tsv
    #    or merge a few more measurements into it (e.g. a grid's largest epsilon, where memory peaks):
    .venv/bin/python benchmarks/cluster_costs.py measure --preset full --match 'fig2/balcan/skin' \
        --epsilon 2 --max-seeds 1 --data-dir DIR --raw more.tsv
    .venv/bin/python benchmarks/cluster_costs.py summarize more.tsv --update profiles/slurm/costs.tsv
    #    (--unmeasured --largest: the largest job of each (algorithm, dataset) the table has no row for)

`measure` runs exactly the command of the workflow's `run` rule (`python -m dpclust.pipeline run ...`, one
BLAS thread) and records its wall time, CPU time (user + system) and peak resident memory (from
wait4). The costs use CPU time: for these single-threaded processes it is their wall time on an
idle core, and unlike wall time it does not grow with whatever else the machine runs. Jobs whose
dataset is unavailable here (no mirror file) are skipped (listed on stderr), unless `--standin-dir`
holds a stand-in for them: seeded Gaussian blobs of the registry's n x d (`standins`), so that the
cost of jobs on data that cannot be had offline (HIGGS, Covertype, Gowalla, ...) is measured at its
real size too (column `data`: real or stand-in; the results on stand-ins mean nothing, only their
cost is used). `summarize` keeps, per (paper, algorithm, dataset, k), the largest cost per seed,
(cpu - base_s) / seeds over the row's jobs (every epsilon), and the largest peak memory; base_s is
the process start-up (interpreter, imports, record), the smallest cost measured. Raw files written
before CPU time was recorded (no `cpu_s`) count with their wall time; the table's header says which.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RAW_FIELDS = ["preset", "paper", "item", "group", "dataset", "algorithm", "k", "epsilon", "seeds",
              "wall_s", "cpu_s", "peak_mb", "status", "data"]


def _available(path: Path) -> bool:
    from dpclust.data.processed import processed_info

    return path.exists() and bool(processed_info(path).get("available", False))


def standins(args) -> None:
    """Shape-matched stand-ins (n x d of config/datasets.yaml) for every planned dataset unavailable
    in --data-dir: 20 seeded Gaussian blobs (sd 0.05) in [0, 1]^d, written in row chunks."""
    import numpy as np

    from dpclust.data import load_registry
    from dpclust.data.processed import write_processed_chunks
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    config_dir = Path(args.config_dir).resolve()
    registry = load_registry(config_dir / "datasets.yaml")
    names = sorted({j.dataset for preset in ("full", "quick", "test")
                    for j in plan(load_config(config_dir, overrides={"preset": preset})).runs})
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        if _available(Path(args.data_dir) / f"{name}.h5") or (out_dir / f"{name}.h5").exists():
            continue
        entry = registry.dataset(name)
        n, d = int(entry["n"]), int(entry["d"])
        centers = np.random.default_rng([7, d]).uniform(0.1, 0.9, size=(20, d))

        def chunks(n=n, d=d, centers=centers, rows=262_144):
            for i, start in enumerate(range(0, n, rows)):
                rng = np.random.default_rng([7, i])
                m = min(rows, n - start)
                X = centers[rng.integers(0, len(centers), m)] + 0.05 * rng.standard_normal((m, d))
                yield np.clip(X, 0.0, 1.0), None

        t = time.perf_counter()
        write_processed_chunks(out_dir / f"{name}.h5", chunks(),
                               {"name": name, "source": "stand-in (benchmarks/cluster_costs.py)"}, n=n, d=d)
        print(f"stand-in {name}: {n} x {d} in {time.perf_counter() - t:.1f} s", file=sys.stderr)


def _measure_one(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode(errors="replace")[-2000:]
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err}")
    proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0  # ru_maxrss: KiB on Linux


def measure(args) -> None:
    from dpclust.pipeline.configuration import fmt_epsilon, load_config
    from dpclust.pipeline.planning import plan

    config_dir = Path(args.config_dir).resolve()
    config = load_config(config_dir, overrides={"preset": args.preset})
    jobs = plan(config).runs
    if args.match:
        jobs = [j for j in jobs if re.search(args.match, j.path)]
    if args.epsilon:
        jobs = [j for j in jobs if j.epsilon is not None and any(abs(j.epsilon - e) < 1e-12 for e in args.epsilon)]
    if args.unmeasured:   # what the table has no row for: its requests are scaled from other data
        from dpclust.pipeline import cluster_resources

        table = cluster_resources.load_costs(args.table)
        jobs = [j for j in jobs if not cluster_resources.estimate(j, table).basis.startswith("measured")]
    if args.largest:
        best = {}
        for j in jobs:
            key = (j.paper, j.algorithm, j.dataset)
            if key not in best or j.seed_count * j.k > best[key].seed_count * best[key].k:
                best[key] = j
        jobs = list(best.values())
    data_dir = Path(args.data_dir).resolve()
    standin_dir = Path(args.standin_dir).resolve() if args.standin_dir else None
    real = {d: _available(data_dir / f"{d}.h5") for d in {j.dataset for j in jobs}}

    def data_path(dataset: str) -> tuple[Path, str]:
        if real[dataset] or standin_dir is None or not (standin_dir / f"{dataset}.h5").exists():
            return data_dir / f"{dataset}.h5", "real"
        return standin_dir / f"{dataset}.h5", "stand-in"

    skipped = sorted({j.dataset for j in jobs if not (real[j.dataset] or data_path(j.dataset)[1] == "stand-in")})
    if skipped:
        print(f"skipped (no data here and no stand-in): {', '.join(skipped)}", file=sys.stderr)
    jobs = [j for j in jobs if j.dataset not in skipped]
    if args.only_standins:
        jobs = [j for j in jobs if data_path(j.dataset)[1] == "stand-in"]
    print(f"{len(jobs)} run jobs to measure ({args.preset}{', largest per group' if args.largest else ''})",
          file=sys.stderr)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    raw = Path(args.raw)
    new_file = not raw.exists()
    lock = threading.Lock()
    pending = list(jobs)
    tmp = Path(tempfile.mkdtemp(prefix="dpclust-costs-"))
    done = [0]

    with open(raw, "a", newline="") as fh:
        writer = csv.DictWriter(fh, RAW_FIELDS, delimiter="\t")
        if new_file:
            writer.writeheader()

        def worker(slot: int) -> None:
            while True:
                with lock:
                    if not pending:
                        return
                    job = pending.pop(0)
                out = tmp / f"{slot}.json"
                path, kind = data_path(job.dataset)
                spec = job.spec   # the block's complete spec (the workflow's run job passes its batch's)
                seeds = job.seed_count
                if args.max_seeds and seeds > args.max_seeds:  # per-seed cost from fewer seeds
                    seeds = args.max_seeds
                    spec["seeds"] = [spec["seeds"][0], seeds]
                cmd = [sys.executable, "-m", "dpclust.pipeline", "run", "--spec", json.dumps(spec),
                       "--data", str(path), "--out", str(out)]
                try:
                    wall, cpu, peak = _measure_one(cmd, env, REPO)
                    status = json.loads(out.read_text()).get("status", "?")
                except RuntimeError as exc:   # one failed job is reported, the others are still measured
                    print(f"  FAILED {job.path} k={job.k} eps={fmt_epsilon(job.epsilon)}: {exc}"[-1500:],
                          file=sys.stderr)
                    wall = cpu = peak = float("nan")
                    status = "failed"
                row = dict(preset=args.preset, paper=job.paper, item=job.item, group=job.group,
                           dataset=job.dataset, algorithm=job.algorithm, k=job.k,
                           epsilon=fmt_epsilon(job.epsilon), seeds=seeds, wall_s=f"{wall:.3f}",
                           cpu_s=f"{cpu:.3f}", peak_mb=f"{peak:.1f}", status=status, data=kind)
                with lock:
                    writer.writerow(row)
                    fh.flush()
                    done[0] += 1
                    if done[0] % 25 == 0 or cpu > 60:
                        print(f"  {done[0]}/{len(jobs)}  {job.path}: {cpu:.1f} s CPU, {wall:.1f} s, {peak:.0f} MB",
                              file=sys.stderr)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


COLUMNS = ["paper", "algorithm", "dataset", "k", "jobs", "seeds_max", "cost_max_s", "sec_per_seed", "peak_mb", "data"]


def read_raw(paths) -> list[dict]:
    """The measurements with status ok, each with its cost: CPU seconds, or wall where not recorded."""
    rows = []
    for path in paths:
        with open(path, newline="") as fh:
            rows += [r for r in csv.DictReader(fh, delimiter="\t") if r["status"] == "ok"]
    for r in rows:  # cost = CPU seconds (robust to other load on the machine); wall where not recorded
        r["cost_s"] = float(r.get("cpu_s") or r["wall_s"])
        r["data"] = r.get("data") or "real"   # raw files written before the column: real data
    return rows


def _cost_kind(rows: list[dict]) -> str:
    n_cpu = sum(1 for r in rows if r.get("cpu_s"))
    if n_cpu == len(rows):
        return "CPU seconds (user + system; for these single-threaded runs, their wall time on an idle core)"
    if n_cpu == 0:
        return "wall seconds (no CPU time recorded; on a loaded machine these err long)"
    return f"CPU seconds for {n_cpu} jobs, wall seconds for {len(rows) - n_cpu} (recorded without CPU time)"


def _presets(rows: list[dict]) -> str:
    return ", ".join(sorted({r["preset"] for r in rows}))


def _grouped(rows: list[dict], base_s: float) -> dict[tuple, dict]:
    """One table row per (paper, algorithm, dataset, k) from its measurements."""
    groups = defaultdict(list)
    for r in rows:
        groups[(r["paper"], r["algorithm"], r["dataset"], int(r["k"]))].append(r)
    return {key: {"jobs": len(rs), "seeds_max": max(int(r["seeds"]) for r in rs),
                  "cost_max_s": max(r["cost_s"] for r in rs),
                  "sec_per_seed": max(max(0.0, r["cost_s"] - base_s) / int(r["seeds"]) for r in rs),
                  "peak_mb": max(float(r["peak_mb"]) for r in rs),
                  "data": set(r["data"] for r in rs)}
            for key, rs in groups.items()}


def _format(groups: dict[tuple, dict]) -> list[str]:
    lines = ["\t".join(COLUMNS)]
    for (paper, alg, ds, k), g in sorted(groups.items()):
        lines.append("\t".join([paper, alg, ds, str(k), str(g["jobs"]), str(g["seeds_max"]),
                                f"{g['cost_max_s']:.2f}", f"{g['sec_per_seed']:.4g}", f"{g['peak_mb']:.0f}",
                                "/".join(sorted(g["data"]))]))
    return lines


def summary_table(rows: list[dict]) -> str:
    """The cost table (profiles/slurm/costs.tsv) from measurements alone."""
    if not rows:
        raise SystemExit("no measurements with status ok")
    base_s = min(r["cost_s"] for r in rows)
    base_mb = min(float(r["peak_mb"]) for r in rows)
    out = [
        "# Measured cost of dpclust run jobs, one row per (paper, algorithm, dataset, k): read by",
        "# dpclust.pipeline.cluster_resources to size SLURM requests. Written by benchmarks/cluster_costs.py from",
        f"# {len(rows)} jobs of the {_presets(rows)} preset(s), each one"
        " process with one BLAS thread, two at a time, on a 2-core machine.",
        f"# cost: {_cost_kind(rows)}.",
        f"# base_s {base_s:.3f}  (process start-up: the smallest cost measured)",
        f"# base_mb {base_mb:.0f}  (the smallest peak RSS measured)",
        "# sec_per_seed: largest (cost - base_s) / seeds over the row's jobs (every epsilon);"
        " cost_max_s: largest cost; peak_mb: largest peak RSS;",
        "# data: real, or stand-in (seeded blobs of the dataset's n x d where it could not be had offline).",
    ]
    return "\n".join(out + _format(_grouped(rows, base_s))) + "\n"


def updated_table(table_text: str, rows: list[dict], note: str = "") -> str:
    """`table_text` (a cost table) with more measurements merged in: a row measured again keeps the
    larger of its old and new costs and peaks (its jobs add up), a new (paper, algorithm, dataset, k)
    gets a row, every other row stays as it was; base_s and base_mb stay the table's (a few large jobs
    say nothing about start-up). One header line records what was merged."""
    if not rows:
        raise SystemExit("no measurements with status ok")
    lines = table_text.splitlines()
    header = [line for line in lines if line.startswith("#")]
    body = [line for line in lines if line.strip() and not line.startswith("#")]
    base = {}
    for line in header:
        parts = line.lstrip("# ").split()
        if len(parts) >= 2 and parts[0] in ("base_s", "base_mb"):
            base[parts[0]] = float(parts[1])
    if "base_s" not in base or not body or body[0].split("\t") != COLUMNS:
        raise SystemExit("the table to update has no '# base_s' line or not the columns " + " ".join(COLUMNS))
    groups = {}
    for r in csv.DictReader(body, delimiter="\t"):
        groups[(r["paper"], r["algorithm"], r["dataset"], int(r["k"]))] = {
            "jobs": int(r["jobs"]), "seeds_max": int(r["seeds_max"]), "cost_max_s": float(r["cost_max_s"]),
            "sec_per_seed": float(r["sec_per_seed"]), "peak_mb": float(r["peak_mb"]),
            "data": set(r["data"].split("/"))}
    new = _grouped(rows, base["base_s"])
    for key, g in new.items():
        old = groups.get(key)
        if old is None:
            groups[key] = g
            continue
        old["jobs"] += g["jobs"]
        old["data"] |= g["data"]
        for field in ("seeds_max", "cost_max_s", "sec_per_seed", "peak_mb"):
            old[field] = max(old[field], g[field])
    added = (f"# + {len(rows)} jobs of the {_presets(rows)} preset(s) merged in (summarize --update: a row"
             f" measured again keeps its larger cost and peak), {len(new)} rows, cost: {_cost_kind(rows)}"
             + (f"; {note}" if note else "") + ".")
    return "\n".join(header + [added] + _format(groups)) + "\n"


def summarize(args) -> None:
    rows = read_raw(args.raw)
    if args.update:
        path = Path(args.update)
        text = updated_table(path.read_text(encoding="utf-8"), rows, args.note or "")
        out = Path(args.out) if args.out else path
    else:
        text = summary_table(rows)
        out = Path(args.out) if args.out else None
    if out is None:
        sys.stdout.write(text)
        return
    out.write_text(text)
    n_rows = sum(1 for line in text.splitlines() if line and not line.startswith("#")) - 1
    print(f"wrote {out}: {n_rows} rows", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--preset", default="quick", choices=["full", "quick", "test"])
    m.add_argument("--config-dir", default=str(REPO / "config"))
    m.add_argument("--data-dir", required=True, help="directory of processed <dataset>.h5 files")
    m.add_argument("--raw", required=True, help="TSV to append one row per measured job to")
    m.add_argument("--jobs", type=int, default=2)
    m.add_argument("--match", help="only run jobs whose output path matches this regular expression")
    m.add_argument("--largest", action="store_true",
                   help="only the largest job (seeds x k) of each (paper, algorithm, dataset)")
    m.add_argument("--standin-dir", help="stand-ins (from `standins`) for datasets unavailable in --data-dir")
    m.add_argument("--only-standins", action="store_true", help="only jobs on stand-in data")
    m.add_argument("--max-seeds", type=int, help="run at most this many of a job's seeds")
    m.add_argument("--unmeasured", action="store_true",
                   help="only jobs of an (algorithm, dataset) the --table has no row for (their requests are "
                        "scaled from other data by n x d)")
    m.add_argument("--table", default=str(REPO / "profiles" / "slurm" / "costs.tsv"),
                   help="the table --unmeasured reads")
    m.add_argument("--epsilon", type=float, action="append",
                   help="only jobs at this epsilon (repeatable): e.g. a grid's largest, where memory peaks")
    t = sub.add_parser("standins")
    t.add_argument("--config-dir", default=str(REPO / "config"))
    t.add_argument("--data-dir", required=True)
    t.add_argument("--out-dir", required=True)
    s = sub.add_parser("summarize")
    s.add_argument("raw", nargs="+")
    s.add_argument("--out", help="where to write the table (default: stdout, or the --update table)")
    s.add_argument("--update", help="merge the measurements into this existing table instead of writing a new one")
    s.add_argument("--note", help="with --update: what the merged measurements were, for the header line")
    args = ap.parse_args()
    {"measure": measure, "summarize": summarize, "standins": standins}[args.cmd](args)


if __name__ == "__main__":
    main()
