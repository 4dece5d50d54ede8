"""Estimate what the full protocol (the default config) costs on this machine, before running it.

    .venv/bin/python benchmarks/estimate_full_protocol.py --mirror ../shared/datasets [--all-datasets]
        [--preset full] [--budget-s 0.5] [--epsilon-points 3] [--paper P ...] [--top 15]
        [--data-dir DIR] [--jobs 2] [--cache FILE]

For every (algorithm, dataset, transform, k, settings) the blocks of the plan use, the script times
(in CPU seconds of its single-threaded worker, so other work on the machine barely moves it) a
sample of real runs (a block's own spec, one thread, data loaded once per dataset as a run job
does) at the smallest, the middle and the largest ε of those blocks (`--epsilon-points`), and
extrapolates to every seed of every block that shares it: a block's time per run is interpolated
between the two sampled ε around its own, linearly in log ε (many algorithms cost more at larger ε:
more PrivGene rounds, larger candidate sets). Each sample is one call of 1 seed and one of as many
seeds as `--budget-s` allows, which separates a run's cost from a block's (one call of the runner per
block of seeds: its record header). It adds the measured process overhead once per run job
(a batch of blocks, shared by the groups it runs). `--paper` restricts the estimate to some papers.
`--jobs 2` times on two processes at once, as `snakemake --cores 2` runs two jobs. With `--cache`
a timing is kept while the algorithm's code is unchanged (`dpclust.pipeline.codehash`), so after a speed-up
only the changed algorithms are timed again. It prints a line per sample as it goes, then the
estimated CPU-hours, the wall time on 2 and 8 cores, the algorithms and the groups that cost most.

Datasets that cannot be had offline are skipped, unless `--all-datasets` is given: they are then
timed on a stand-in of the registry's n × d drawn uniformly in the public box (timing only; such
data never reach a result). Numbers are estimates: runs whose cost depends on the data's structure
(convergence) may differ on the real data.
"""
from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _prepare(config, names, data_dir: Path, mirror: str | None, all_datasets: bool) -> dict[str, str]:
    """Processed files of the datasets (prepared from the mirror when missing); stand-ins for the
    unavailable ones with --all-datasets."""
    from dpclust.data import fetch_source, prepare_dataset
    from dpclust.data.processed import write_processed
    from dpclust.data.store import content_id

    registry = config["registry"]
    paths = {}
    for name in sorted(names):
        out = data_dir / "processed" / f"{name}.h5"
        if not out.exists():
            for source in registry.sources_for(name):
                if not (data_dir / "raw" / source / "manifest.json").exists():
                    fetch_source(source, raw_dir=data_dir / "raw", mirror=mirror, registry=registry, log=lambda _: None)
            prepare_dataset(name, raw_dir=data_dir / "raw", out_path=out, registry=registry, log=lambda _: None)
        if content_id(out).startswith("unavailable"):
            if not all_datasets:
                continue
            entry = registry.dataset(name)
            standin = data_dir / "standin" / f"{name}.h5"
            if not standin.exists():
                lo, hi = entry.get("bounds") or [0.0, 1.0]
                n, d = int(entry["n"]), int(entry["d"])
                rng = np.random.default_rng(0)
                X = np.concatenate([rng.uniform(lo, hi, size=(min(n - i, 1_000_000), d))
                                    for i in range(0, n, 1_000_000)])
                write_processed(standin, X, None, {"name": name, "source": "stand-in (timing only)"})
            paths[name] = str(standin)
            continue
        paths[name] = str(out)
    return paths


def _process_overhead(spec: dict, data: str) -> float:
    """Seconds one `python -m dpclust.pipeline run` process costs beyond its runs (interpreter, imports, I/O)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "dpclust.pipeline", "run", "--spec", json.dumps(dict(spec, seeds=[0, 1])),
               "--data", data, "--allow-unavailable", "--out", str(out)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)   # CPU, as the runs
        runs = sum(r["wall_time_s"] for r in json.loads(out.read_text())["runs"])
    return max(0.0, total - runs)


def _epsilon_points(values: list, points: int) -> list:
    """The ε values to time among `values`, the ε of a sample key's blocks in ascending order (one per
    block, None for a non-private block): `points` of them spread over the blocks, both ends when
    points >= 2 and the middle block's (values[len // 2], the one point timed with points = 1)."""
    if None in values or points <= 1 or len(set(values)) == 1:
        return [values[len(values) // 2]]
    idx = {int(i * (len(values) - 1) / (points - 1) + 0.5) for i in range(points)}   # half up: len // 2
    return sorted({values[i] for i in idx})


def _interpolate(epsilon, timed: dict) -> float:
    """Seconds per run at `epsilon` from the times at the sampled ε (`timed`: ε -> s/run), linear in
    log ε between the sampled neighbours; a single sample (or a non-private run) is used as is."""
    if epsilon is None or len(timed) == 1:
        return next(iter(timed.values()))
    xs = sorted(timed)
    e = min(max(float(epsilon), xs[0]), xs[-1])
    return float(np.interp(np.log(e), np.log(xs), [timed[x] for x in xs]))


def group_of(job) -> tuple:
    """The group a run job's block counts in: (paper, item, algorithm, dataset, k)."""
    return (job.paper, job.item, job.algorithm, job.dataset, job.k)


def middle_block(jobs: list):
    """The block at the middle ε of a group's blocks (ε ascending, a non-private block last): the
    one block the profiling benchmarks run of a group."""
    ordered = sorted(jobs, key=lambda j: (j.epsilon is None, j.epsilon or 0.0))
    return ordered[len(ordered) // 2]


def _sample_key(spec: dict) -> tuple:
    """What a run's cost depends on: the algorithm, the data (and its transform), k and the settings.
    Items that run the same (algorithm, dataset, k, settings) at other ε or seeds share one sample."""
    return (spec["function"], spec["dataset"], spec["transform"], int(spec["k"]),
            json.dumps(spec["settings"], sort_keys=True))


def _cache_key(code: str, key: tuple) -> str:
    """A timing is reused while the algorithm's code (its module and every dpclust module it
    imports, `dpclust.pipeline.codehash`) and the sample key are unchanged."""
    # "cpu2|": CPU seconds per run and per block (earlier caches held one number per run)
    return "cpu2|" + code + "|" + json.dumps(list(key))


#: seeds of the recorded runs a `reference_runs` sample gets (they are run, untimed, before it)
REFERENCE_SEEDS = 20


def _reference_specs(spec: dict, runs) -> list[dict]:
    """The planned specs of the runs a sample's `reference_runs` reads: each named algorithm at the
    sample's item, dataset, k and ε (one block of each; the worker sets its seeds)."""
    out = []
    for algorithm in sorted(set((spec.get("reference_runs") or {}).get("runs", {}).values())):
        out.append(next(j.spec for j in runs if j.spec["algorithm"] == algorithm and j.item == spec["item"]
                        and j.dataset == spec["dataset"] and int(j.spec["k"]) == int(spec["k"])
                        and j.epsilon == spec["epsilon"]))
    return out


def _time_samples(task) -> list:
    """Worker: time the sample specs of one data set (loaded once), one thread each."""
    data, items, budget_s, quiet = task
    from dpclust.pipeline.heap import retain_freed_memory
    from dpclust.pipeline.run_job import ReferenceRuns, run_spec

    retain_freed_memory()   # as the workflow's run jobs (`dpclust run`) do

    loaded: dict[str, dict] = {}
    warm: set[str] = set()
    out = []
    for key, spec, seeds, refs in items:
        cache = loaded.setdefault(spec["transform"], {})
        start, count = spec["seeds"]
        references = None
        if refs:   # a group that reads recorded runs (`reference_runs`): record them first, not timed
            count = min(count, REFERENCE_SEEDS)
            references = ReferenceRuns([run_spec(dict(r, seeds=[start, count]), data, _loaded=cache) for r in refs])
        if spec["function"] not in warm:  # first use: pays one-off imports, not timed
            run_spec(dict(spec, seeds=[start, 1]), data, _loaded=cache, references=references)
            warm.add(spec["function"])
        # one block is one `run_spec` call: a per-call cost (the record's header: versions, commit,
        # seed derivation) plus its seeds. A call of 1 seed, then one of m seeds (as many as the
        # budget allows) separate the two: the workflow's blocks run hundreds of cheap seeds per call.
        # CPU time of this (single-threaded) process, not wall time, which also counts the waits for
        # the cores when other work runs beside the estimate
        t0 = time.process_time()
        run_spec(dict(spec, seeds=[start, 1]), data, _loaded=cache, references=references)
        t_one = time.process_time() - t0
        m = min(count - 1, int(budget_s / max(t_one, 1e-4)))
        if m >= 2:
            t0 = time.process_time()
            run_spec(dict(spec, seeds=[start + 1, m]), data, _loaded=cache, references=references)
            t_m = time.process_time() - t0
            per_seed = max((t_m - t_one) / (m - 1), t_m / m / 100)   # (a floor against timer noise)
            per_call = max(t_one - per_seed, 0.0)
        else:                   # dear runs: the per-call cost is noise beside one seed's
            per_seed, per_call = t_one, 0.0
        out.append((list(key), [per_seed, per_call]))
        if not quiet:
            eps = "" if key[-1] is None else f" ε={key[-1]:g}"
            print(f"  {key[0].rsplit('.', 1)[-1]} {key[1]} k={key[3]}{eps}: {per_seed:.4f} s/run + "
                  f"{per_call:.4f} s/block ({seeds} runs share this key)", flush=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("DPCLUST_DATA_MIRROR"))
    parser.add_argument("--preset", default="full", choices=["full", "quick", "test"])
    parser.add_argument("--all-datasets", action="store_true", help="time unavailable datasets on stand-ins")
    parser.add_argument("--budget-s", type=float, default=0.5, help="seconds of sampled runs per sample key and ε")
    parser.add_argument("--epsilon-points", type=int, default=3,
                        help="ε values timed per sample key (smallest, ..., largest); 1: the middle ε only")
    parser.add_argument("--paper", action="append", default=None, help="estimate only this paper (repeatable)")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--data-dir", default=None, help="where processed files are (default: a temp dir)")
    parser.add_argument("--json", default=None, help="also write the per-group estimates here")
    parser.add_argument("--summary", default=str(SUMMARY), help="where the totals of a whole-protocol "
                        "estimate (every paper, offline data) are written ('' for nowhere)")
    parser.add_argument("--quiet", action="store_true", help="no line per sampled key")
    parser.add_argument("--jobs", type=int, default=1, help="timing processes (the workflow runs one job a core)")
    parser.add_argument("--cache", default=None, help="JSON of timings to reuse while an algorithm's code is unchanged")
    parser.add_argument("--prices", default=None, metavar="TSV",
                        help="also merge the per-run CPU prices of every sample into this table (the looks' "
                             "CPU caps read benchmarks/results/run_prices.tsv: dpclust.pipeline.run_prices)")
    parser.add_argument("--priced-only", action="store_true",
                        help="time only the blocks whose price a look's CPU cap reads (run_prices.priced_blocks); "
                             "with --prices, to refresh the price table without a whole estimate")
    parser.add_argument("--unpriced-only", action="store_true",
                        help="with --priced-only and --prices: only the blocks the table has no price for (a look or "
                             "a setting added or edited since: its keys are new)")
    parser.add_argument("--summarize", default=None, metavar="GROUPS_JSON",
                        help="time nothing: write --summary from the per-group rows an earlier run wrote (--json)")
    args = parser.parse_args(argv)
    if args.summarize:
        write_summary(Path(args.summary), args.preset, json.loads(Path(args.summarize).read_text()))
        return 0

    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    config = load_config(REPO / "config", overrides={"preset": args.preset})
    the_plan = plan(config)
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="dpclust-estimate-"))
    paths = _prepare(config, the_plan.datasets, data_dir, args.mirror, args.all_datasets)
    groups: dict[tuple, list] = defaultdict(list)
    if args.priced_only:
        from dpclust.pipeline.run_prices import priced_blocks

        pool = list({(job.path, job.cell): job for job in priced_blocks(the_plan)}.values())
        if args.unpriced_only:
            from dpclust.pipeline.run_prices import load_prices, sample_key

            if not args.prices:
                parser.error("--unpriced-only needs --prices TSV")
            known = load_prices(args.prices)
            # a dataset this machine cannot load is not timed (unless --all-datasets: on its stand-in), so
            # its blocks keep the SLURM table's fallback price
            pool = [job for job in pool if sample_key(job.spec) not in known]
    else:
        pool = the_plan.runs
    planned = [job for job in pool if not args.paper or job.paper in args.paper]
    if not planned:
        parser.error(f"no run job of paper(s) {args.paper} in preset {args.preset}")
    for job in planned:
        groups[group_of(job)].append(job)
    # one process per run job (a batch of blocks, dpclust.pipeline.run_plan.RunBatch): its start-up is shared
    # by the groups whose blocks it runs
    groups_of_batch: dict[str, set] = defaultdict(set)
    for key, jobs in groups.items():
        for job in jobs:
            groups_of_batch[job.path].add(key)
    # timing samples per (algorithm, data, k, settings), at --epsilon-points ε of its blocks
    by_key: dict[tuple, list] = defaultdict(list)
    for job in planned:
        if job.dataset in paths:
            by_key[_sample_key(job.spec)].append(job)
    from dpclust.pipeline.codehash import code_hash

    def code_of(function: str) -> str:
        return code_hash(function.split(":")[0])

    cache = json.loads(Path(args.cache).read_text()) if args.cache and Path(args.cache).exists() else {}
    per_seed: dict[tuple, list] = {}          # sample key + (ε,) -> [seconds per run, seconds per block]
    todo: dict[str, list] = defaultdict(list)   # data set -> its sample specs (one worker loads it once)
    for key, jobs in by_key.items():
        values = sorted((j.epsilon for j in jobs), key=lambda e: (e is None, e or 0.0))
        for eps in _epsilon_points(values, args.epsilon_points):
            spec = next(j.spec for j in jobs if j.epsilon == eps)
            point = key + (eps,)
            cached = cache.get(_cache_key(code_of(spec["function"]), point))
            if cached is not None:
                per_seed[point] = cached
            else:
                todo[spec["dataset"]].append((point, spec, sum(j.seed_count for j in jobs),
                                              _reference_specs(spec, the_plan.runs)))
    n_samples = sum(len(v) for v in todo.values()) + len(per_seed)
    first = next(iter(by_key.values()))[0].spec
    overhead = _process_overhead(first, paths[first["dataset"]])
    t_start = time.perf_counter()
    n_todo = sum(len(v) for v in todo.values())
    print(f"{n_samples} timing samples ({len(by_key)} keys): {n_samples - n_todo} from the cache (same code), "
          f"{n_todo} to time on {args.jobs} process(es)", flush=True)
    work = [(paths[name], items, args.budget_s, args.quiet) for name, items in
            sorted(todo.items(), key=lambda kv: -len(kv[1]))]
    done = 0
    # one fresh worker per dataset, as the workflow runs one process per run job: a worker reused for
    # every dataset keeps each one's freed memory (`retain_freed_memory`), so its peak is no job's
    with multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=1) as pool:
        for results in pool.imap_unordered(_time_samples, work):
            for key, seconds in results:
                per_seed[tuple(key)] = seconds
                fn = key[0]
                cache[_cache_key(code_of(fn), tuple(key))] = seconds
            done += len(results)
            print(f"[{done}/{n_todo} timed, {time.perf_counter() - t_start:.0f} s]", flush=True)
            if args.cache:
                Path(args.cache).write_text(json.dumps(cache, indent=0, sort_keys=True))
    if args.prices:
        write_prices(Path(args.prices), {point: seconds for point, (seconds, _) in per_seed.items()})
    timed_at: dict[tuple, dict] = defaultdict(dict)   # sample key -> {ε: seconds per run}
    call_at: dict[tuple, dict] = defaultdict(dict)    # sample key -> {ε: seconds per block (call)}
    for point, (seconds, call) in per_seed.items():
        timed_at[point[:-1]][point[-1]] = seconds
        call_at[point[:-1]][point[-1]] = call
    rows = []
    for key, jobs in sorted(groups.items()):
        seeds = sum(j.seed_count for j in jobs)
        if key[3] not in paths:
            rows.append({"group": key, "jobs": len(jobs), "seeds": seeds, "cpu_s": 0.0, "skipped": True})
            continue
        runs = sum(_interpolate(j.epsilon, timed_at[_sample_key(j.spec)]) * j.seed_count
                   + _interpolate(j.epsilon, call_at[_sample_key(j.spec)]) for j in jobs)
        cpu = runs + (overhead or 0.0) * sum(1 / len(groups_of_batch[p]) for p in {j.path for j in jobs})
        rows.append({"group": key, "jobs": len(jobs), "seeds": seeds, "per_seed_s": runs / seeds, "cpu_s": cpu,
                     "skipped": False})
    total = sum(r["cpu_s"] for r in rows)
    skipped = sorted({r["group"][3] for r in rows if r["skipped"]})
    print(f"\npreset {args.preset}{' (' + ', '.join(args.paper) + ')' if args.paper else ''}: "
          f"{len({j.path for j in planned})} run jobs ({len(planned)} blocks) in {len(groups)} groups; "
          f"{n_samples} timing samples ({n_todo} timed now, on {args.jobs} process(es), in "
          f"{time.perf_counter() - t_start:.0f} s); per-job process overhead "
          f"{overhead or 0:.2f} s")
    if skipped:
        print(f"skipped (data unavailable here; use --all-datasets for stand-ins): {', '.join(skipped)}")
    print(f"estimated run CPU time: {total / 3600:.2f} CPU-hours; wall ≈ {total / 2 / 60:.0f} min on 2 cores, "
          f"{total / 8 / 60:.0f} min on 8 cores (run jobs only)")
    by_paper: dict[str, float] = defaultdict(float)
    for r in rows:
        by_paper[r["group"][0]] += r["cpu_s"]
    print("\nby paper (the leaderboard and the baselines table are beyond the papers): CPU-hours, share")
    for name, cpu in sorted(by_paper.items(), key=lambda kv: -kv[1]):
        print(f"  {name:30s} {cpu / 3600:8.2f}  {100 * cpu / max(total, 1e-9):5.1f}%")
    by_algorithm: dict[str, float] = defaultdict(float)
    for r in rows:
        by_algorithm[r["group"][2]] += r["cpu_s"]
    print("\nby algorithm: CPU minutes, share")
    for name, cpu in sorted(by_algorithm.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {name:30s} {cpu / 60:8.1f}  {100 * cpu / max(total, 1e-9):5.1f}%")
    print(f"\ntop {args.top} groups (paper, item, algorithm, dataset, k): CPU minutes, share")
    for r in sorted(rows, key=lambda r: -r["cpu_s"])[: args.top]:
        print(f"  {'/'.join(map(str, r['group'])):70s} {r['cpu_s'] / 60:8.1f}  "
              f"{100 * r['cpu_s'] / max(total, 1e-9):5.1f}%"
              f"  ({r['jobs']} jobs, {r['seeds']} runs, {r.get('per_seed_s', 0):.3f} s/run)")
    if args.json:
        Path(args.json).write_text(json.dumps([dict(r, group=list(r["group"])) for r in rows], indent=1))
    # the replication looks run only for claims the paper's runs leave open: counted apart, at their caps
    caps = {t.key: t.replication["cpu_hours"] for t in the_plan.replicated}
    if caps:
        print(f"\nreplication looks (not in the total): at most {sum(caps.values()):g} CPU-hours, the caps of "
              + ", ".join(f"{k} {v:g}" for k, v in caps.items()))
    if args.summary and not args.paper and not args.all_datasets and not args.priced_only:
        write_summary(Path(args.summary), args.preset, [dict(r, group=list(r["group"])) for r in rows],
                      n_samples, n_todo, replication_caps=caps)
    return 0


def write_prices(path: Path, per_run: dict[tuple, float]) -> None:
    """Merge the timed CPU seconds per run (`per_run`: sample key + (ε,) -> s) into the price table
    (dpclust.pipeline.run_prices), keeping the rows of samples not timed here (another preset's)."""
    from dpclust.pipeline.run_prices import COLUMNS, settings_id

    rows = {}
    if path.exists():
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
        for row in csv.DictReader(lines, delimiter="\t"):
            rows[tuple(row[c] for c in COLUMNS[:-1])] = row["cpu_s_per_run"]
    for (function, dataset, transform, k, settings, eps), seconds in per_run.items():
        key = (function, dataset, transform, str(int(k)), settings_id(json.loads(settings)),
               "" if eps is None else f"{float(eps):g}")
        rows[key] = f"{seconds:.4g}"
    head = ["# CPU seconds of one run per timing sample (function, dataset, transform, k, settings id, ε),",
            "# start-up and data loading excluded: the price the adaptive looks' CPU caps charge",
            "# (dpclust.pipeline.run_prices). Written by benchmarks/estimate_full_protocol.py --prices",
            "# --priced-only, once per preset (quick, full), and with --all-datasets for the datasets no",
            "# mirror holds (timed on stand-ins of their n x d): one single-threaded process per core, CPU time.",
            "\t".join(COLUMNS)]
    body = ["\t".join([*key, value]) for key, value in sorted(rows.items())]
    path.write_text("\n".join(head + body) + "\n", encoding="utf-8")


#: the committed record of the last whole-protocol estimate (the performance issue's target reads it;
#: benchmarks/performance_page.py renders it)
SUMMARY = REPO / "benchmarks" / "results" / "estimate_full_protocol.json"
PAPERS = ("su2016", "balcan2017", "nguyen2021", "cohenaddad2022", "lushen2020")


def write_summary(path: Path, preset: str, rows: list[dict], n_samples: int | None = None,
                  n_timed: int | None = None, top: int = 10, replication_caps: dict | None = None) -> dict:
    """Write what the estimate printed, from its per-group rows (`--json`), in CPU-hours: the total,
    the five papers, the leaderboard (the baselines table is in the total only), each part and item, the
    dearest algorithms and groups, and the datasets it could not time."""
    def hours(seconds: float) -> float:
        return round(seconds / 3600, 3)

    by_paper: dict[str, float] = defaultdict(float)
    by_item: dict[str, float] = defaultdict(float)
    by_algorithm: dict[str, float] = defaultdict(float)
    for r in rows:
        by_paper[r["group"][0]] += r["cpu_s"]
        by_item[f"{r['group'][0]}/{r['group'][1]}"] += r["cpu_s"]
        by_algorithm[r["group"][2]] += r["cpu_s"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or None
    summary = {"commit": commit, "preset": preset, "total_cpu_hours": hours(sum(by_paper.values())),
               "papers_cpu_hours": hours(sum(v for k, v in by_paper.items() if k in PAPERS)),
               "leaderboard_cpu_hours": hours(by_paper.get("leaderboard", 0.0)),
               "by_part_cpu_hours": {k: hours(v) for k, v in sorted(by_paper.items())},
               # an item that reads another's runs (`runs_from`) has none of its own: the runs count
               # where they are planned (a part of the protocol by items, `--config 'items=[...]'`)
               "by_item_cpu_hours": {k: hours(v) for k, v in sorted(by_item.items())},
               "top_algorithms_cpu_hours": {k: hours(v) for k, v in
                                            sorted(by_algorithm.items(), key=lambda kv: -kv[1])[:top]},
               "top_groups": [{"group": "/".join(map(str, r["group"])), "cpu_hours": hours(r["cpu_s"]),
                               "runs": r["seeds"]} for r in sorted(rows, key=lambda r: -r["cpu_s"])[:top]],
               "skipped_datasets": sorted({r["group"][3] for r in rows if r.get("skipped")}),
               "timing_samples": n_samples, "timed_now": n_timed,
               # the most the replication looks may add (their declared caps), apart from the total
               "replication_cap_cpu_hours": round(sum((replication_caps or {}).values()), 3),
               "what": "run jobs only (audits, aggregation and figures not included); offline datasets"}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return summary


if __name__ == "__main__":
    sys.exit(main())
