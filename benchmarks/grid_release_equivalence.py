"""The grid release (d0ea793) through the equivalence harness, with every random draw paired.

    .venv/bin/python benchmarks/grid_release_equivalence.py OUT --mirror ../shared/datasets
        [--preset quick] [--algorithm A ...] [--cell TEXT ...] [--cells-from LABELS.txt] [--seeds 30]
        [--markdown OUT.md] [--alpha A] [--cpu-cap-hours H] [--jobs N] [--list]

The secure mechanisms release round(value + noise) on a power-of-two grid of the noise scale
(`dpclust.mechanisms.release_on_grid`); before d0ea793 they released fl(value + noise), the same noise
doubles. `dpclust.audit.floating_point.legacy_releases` makes every release the legacy one again, in
this process, so the change can be measured at today's code with nothing else different and every
draw paired by seed: each planned cell of the preset (of the named algorithms, or whose label
contains a `--cell` text) runs `--seeds` seeds from its own first seed twice, once with the legacy
release (OUT/before) and once as the pipeline runs it (OUT/after), and the two directories go
through `benchmarks/equivalence.py --paired` on the costs (`cost_kmeans`, `cost_kmedian`, `nicv`),
its 0.5 % margin and α unchanged (docs/EQUIVALENCE.md).

A cell whose probe run (its first seed, legacy release) makes no release through the grid is left out
(it cannot move), and so is a cell that reads other runs (`reference_runs`) or whose data cannot be
had. The comparison between two commits (docs/EQUIVALENCE.md, d0ea793) had the preset's 2-6 runs a
cell, too few to show 0.5 % where a last-bit change can flip a discrete choice; this adds the runs.
`--list` prints the matching cells and what `--seeds` paired seeds of each would cost (the committed
run prices, `dpclust.pipeline.run_prices`), and runs nothing: a plan to declare before its runs.
`--cpu-cap-hours` keeps the cells cheapest first (by those prices, ties by label) while their paired seeds
fit in the cap; the others are not run, and are listed (and written to OUT/not_run.txt) as "not run: CPU cap".
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

COST_METRICS = ("cost_kmeans", "cost_kmedian", "nicv")


def cells_of(the_plan, algorithms: list[str] | None, texts: list[str] | None) -> dict[tuple, object]:
    """The first planned block of every selected cell of the paper's runs (no replication look), by the
    harness's cell key (`equivalence.cell_key`)."""
    from equivalence import cell_key, cell_label

    out: dict[tuple, object] = {}
    for job in the_plan.runs:
        spec = job.spec
        if job.round or spec.get("reference_runs") or job.references:
            continue
        if algorithms and job.algorithm not in algorithms:
            continue
        key = cell_key({**spec, "paper": job.paper, "item": job.item, "group": job.group})
        if texts and not any(text in cell_label(key) for text in texts):
            continue
        out.setdefault(key, job)
    return out


def run_cell(spec: dict, data: str, seeds: int, loaded: dict) -> tuple[dict, dict] | None:
    """(before, after) records of `seeds` seeds from the spec's first seed, or None when the first seed
    makes no release through the grid. `loaded` caches the transformed data across cells, one entry per
    (processed file, transform, registry entry): `run_spec`'s `_loaded` holds ONE data set (a run job's
    batch of blocks on one data set), so each data set gets its own."""
    from dpclust.audit.floating_point import legacy_releases
    from dpclust.pipeline.run_job import run_spec

    start = spec["seeds"][0]
    cache = loaded.setdefault((str(data), spec["transform"], json.dumps(spec["dataset_entry"], sort_keys=True)), {})
    with legacy_releases() as calls:
        run_spec(dict(spec, seeds=[start, 1]), data, _loaded=cache)
    if not calls["release"]:
        return None
    with legacy_releases():
        before = run_spec(dict(spec, seeds=[start, seeds]), data, _loaded=cache)
    after = run_spec(dict(spec, seeds=[start, seeds]), data, _loaded=cache)
    for record in (before, after):
        check_data(record, data)
    return before, after


#: the transformed data of this process, one entry per data set (`run_cell`); a worker of `--jobs` has its own
_LOADED: dict = {}


def _run_and_write(task) -> bool:
    """Run one cell (`run_cell`) and write its pair of records; False when it makes no grid release."""
    from dpclust.pipeline.run_job import write_json_atomic

    label, spec, data, seeds, targets = task
    pair = run_cell(spec, data, seeds, _LOADED)
    if pair is None:
        return False
    for target, record in zip(targets, pair):
        target.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(record, target)
    print(f"{label}: {seeds} paired seeds", flush=True)
    return True


def check_data(record: dict, data: str) -> None:
    """Refuse a record that did not run on the cell's own processed file (its content hash and shape)."""
    from dpclust.data.store import processed_info

    info = processed_info(data)
    got = (record.get("dataset_sha256"), record.get("n"), record.get("d"))
    want = (info.get("sha256"), info.get("n"), info.get("d"))
    if got != want:
        raise RuntimeError(f"{record.get('dataset')}: the runs used data (sha256, n, d) = {got}, but the cell's file "
                           f"{data} holds {want}; a look must run each cell on its own data")


def already_run(key: tuple, seeds: int, targets: list[Path], data: str | None = None) -> bool:
    """True when an earlier invocation with the same OUT wrote this cell's `seeds` paired seeds on both
    sides, on the cell's own data `data` when given (a look killed half-way resumes: each cell's pair is
    written when the cell ends)."""
    import equivalence
    from dpclust.pipeline.records import load_records

    if not all(t.exists() for t in targets):
        return False
    try:
        records = [load_records([t])[0] for t in targets]
    except (OSError, ValueError, KeyError, IndexError):
        return False                                  # a corrupt or foreign file: run the cell again
    if not all(equivalence.cell_key(r) == key and len(r.get("runs") or []) == seeds for r in records):
        return False
    try:
        for r in records if data is not None else ():
            check_data(r, data)
    except RuntimeError:
        return False                                  # run on other data (a look before 2026-12-03's fix)
    return True


def under_cap(cells: dict, seeds: int, cap_hours: float | None) -> tuple[dict, list[str]]:
    """(the cells whose `seeds` paired seeds fit in `cap_hours` CPU-hours by the committed run prices,
    taken cheapest first with ties by label; the labels of the others, sorted). No cap: every cell."""
    import equivalence
    from dpclust.pipeline.run_prices import price_s

    if cap_hours is None:
        return cells, []
    kept, left, spent = {}, [], 0.0
    for key, job in sorted(cells.items(), key=lambda kv: (price_s(kv[1]), equivalence.cell_label(kv[0]))):
        cost = 2 * seeds * price_s(job)
        if spent + cost <= cap_hours * 3600:
            kept[key], spent = job, spent + cost
        else:
            left.append(equivalence.cell_label(key))
    return kept, sorted(left)


def list_cells(cells: dict, seeds: int) -> int:
    """One line per cell: its label, its price per run and the CPU of `seeds` paired seeds (two runs a
    seed), then the total; the prices are the committed table's, so the plan is the commit's."""
    import equivalence
    from dpclust.pipeline.run_prices import price_s

    total = 0.0
    for key, job in sorted(cells.items(), key=lambda kv: equivalence.cell_label(kv[0])):
        price = price_s(job)
        total += 2 * seeds * price
        print(f"{equivalence.cell_label(key)}\t{price:.4g} CPU-s a run\t{2 * seeds * price:.0f} CPU-s")
    print(f"{len(cells)} cells, {seeds} paired seeds each: {total:.0f} CPU-s ({total / 3600:.2f} CPU-h) "
          f"by the committed run prices (data preparation not included)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="where OUT/before and OUT/after (run records) are written")
    parser.add_argument("--mirror", default=os.environ.get("DPCLUST_DATA_MIRROR"))
    parser.add_argument("--preset", default="quick", choices=["full", "quick", "test"])
    parser.add_argument("--algorithm", action="append", default=None, help="only this algorithm (repeatable)")
    parser.add_argument("--cell", action="append", default=None,
                        help="only the cells whose label contains this text (repeatable)")
    parser.add_argument("--cells-from", type=Path, default=None,
                        help="only the cells labelled in this file, one label a line as the harness prints it "
                             "(e.g. the cells a report left not shown: a look declared before it runs)")
    parser.add_argument("--seeds", type=int, default=30, help="paired seeds per cell (each run twice)")
    parser.add_argument("--data-dir", default=None, help="where processed files are (default: a temp dir)")
    parser.add_argument("--markdown", default=None, help="also write the harness's report here")
    parser.add_argument("--alpha", type=float, default=None,
                        help="level of each one-sided test (default the harness's; lower it for a cell looked at "
                             "before, e.g. half for a second look)")
    parser.add_argument("--cpu-cap-hours", type=float, default=None,
                        help="run only the cheapest cells whose paired seeds fit in this many CPU-hours by the "
                             "committed run prices; list the others as not run (a cap declared before the look)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="cells run at once, each in a process of its own (one thread each)")
    parser.add_argument("--list", action="store_true",
                        help="print the matching cells and the CPU of --seeds paired seeds each; run nothing")
    args = parser.parse_args(argv)

    import equivalence
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan
    from estimate_full_protocol import _prepare

    config = load_config(REPO / "config", overrides={"preset": args.preset})
    the_plan = plan(config)
    cells = cells_of(the_plan, args.algorithm, args.cell)
    if args.cells_from is not None:
        wanted = {line.strip() for line in args.cells_from.read_text(encoding="utf-8").splitlines() if line.strip()}
        cells = {key: job for key, job in cells.items() if equivalence.cell_label(key) in wanted}
        unknown = wanted - {equivalence.cell_label(key) for key in cells}
        if unknown:
            parser.error(f"--cells-from {args.cells_from}: {len(unknown)} label(s) name no planned cell of the "
                         f"{args.preset} preset, e.g. {sorted(unknown)[0]!r}; copy the labels from a harness report")
    cells, capped = under_cap(cells, args.seeds, args.cpu_cap_hours)
    for label in capped:
        print(f"{label}: not run: CPU cap ({args.cpu_cap_hours:g} CPU-h by the committed run prices)")
    if args.list:
        return list_cells(cells, args.seeds)
    if capped:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "not_run.txt").write_text("".join(f"{label}\n" for label in capped), encoding="utf-8")
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="dpclust-grid-"))
    paths = _prepare(config, {job.dataset for job in cells.values()}, data_dir, args.mirror, False)
    cells = {key: job for key, job in cells.items() if job.dataset in paths}
    if not cells:
        parser.error("no planned cell matches (--algorithm, --cell, available data)")
    resumed, t0, cpu0 = 0, time.perf_counter(), time.process_time()
    start_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_children0 = start_children.ru_utime + start_children.ru_stime
    todo = []
    for i, (key, job) in enumerate(sorted(cells.items(), key=lambda kv: equivalence.cell_label(kv[0]))):
        targets = [args.out / side / "runs" / f"{i:04d}.json" for side in ("before", "after")]
        if already_run(key, args.seeds, targets, paths[job.dataset]):
            resumed += 1
            continue
        spec = dict(job.spec, paper=job.paper, item=job.item, group=job.group)
        todo.append((equivalence.cell_label(key), spec, paths[job.dataset], args.seeds, targets))
    if args.jobs > 1 and len(todo) > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(min(args.jobs, len(todo))) as pool:
            done = list(pool.imap_unordered(_run_and_write, todo))
    else:
        done = [_run_and_write(task) for task in todo]
    skipped = sum(not ran for ran in done)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - cpu0 + children.ru_utime + children.ru_stime - cpu_children0
    print(f"{len(cells) - skipped - resumed} cells run, {resumed} kept from an earlier invocation, {skipped} "
          f"without a grid release; {cpu:.0f} CPU-s, {time.perf_counter() - t0:.0f} s")
    alpha = {} if args.alpha is None else {"alpha": args.alpha}
    report = equivalence.build_report(args.out / "before", args.out / "after", paired=True,
                                      metrics=COST_METRICS, **alpha)
    print(equivalence.format_summary(report))
    if args.markdown:
        Path(args.markdown).write_text(equivalence.format_markdown(
            report, f"The grid release, {args.seeds} paired seeds a cell (legacy release vs grid, one commit)"),
            encoding="utf-8")
    (args.out / "report.json").write_text(json.dumps(equivalence.jsonable(report), indent=1), encoding="utf-8")
    return 0 if report["accepted"] else 1


if __name__ == "__main__":
    sys.exit(main())
