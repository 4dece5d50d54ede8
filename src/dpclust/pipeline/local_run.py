"""Run every step of one item in-process, without Snakemake (the CLI's `dpclust item`, tests).

Kept apart from `dpclust.pipeline.steps`: the item steps' code hash (a rerun trigger) covers
`dpclust.pipeline.steps`, and must not cover the planner, the data layer or the runner that this uses.
"""
from __future__ import annotations

import os
from pathlib import Path

from dpclust.pipeline.steps import aggregate_item, check_item, render_item


def run_item_locally(paper: str, item: str, workdir: str | Path, config_dir=None, overrides=None,
                     mirror: str | None = None, log=print):
    """Run every step of one item in-process under `workdir` (no Snakemake)."""
    from dpclust.data import fetch_source, prepare_dataset
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan
    from dpclust.pipeline.run_job import reference_records, run_batch, write_json_atomic

    workdir = Path(workdir)
    config = load_config(config_dir, overrides=overrides)
    config["results_dir"] = str(workdir / "results")
    the_plan = plan(config)
    target = the_plan.item(paper, item)
    registry = config["registry"]
    raw_dir = workdir / "data" / "raw"
    dataset_paths = {}
    mirror = mirror or config.get("data_mirror") or os.environ.get("DPCLUST_DATA_MIRROR") or None
    for name in target.datasets:
        out = workdir / "data" / "processed" / f"{name}.h5"
        if not out.exists():
            for source in registry.sources_for(name):
                if not (raw_dir / source / "manifest.json").exists():
                    fetch_source(source, raw_dir=raw_dir, mirror=mirror, registry=registry)
            prepare_dataset(name, raw_dir=raw_dir, out_path=out, registry=registry)
        dataset_paths[name] = str(out)
    paths = target.run_files
    # a batch that reads recorded runs (reference_runs) runs after the batches it reads
    for path in sorted(paths, key=lambda p: bool(the_plan.run(p).reference_files)):
        if Path(path).exists():
            continue
        batch = the_plan.run(path)
        log(f"run {path}")
        write_json_atomic(run_batch(batch.spec, {d: dataset_paths[d] for d in batch.datasets},
                                    references=reference_records(batch.reference_files)), path)
    aggregate_item(target.step_spec("aggregate"), paths,
                   {d: dataset_paths[d] for d in target.data_inputs}, target.table)
    render_item(target.step_spec("render"), target.table, target.figure_stem)
    if target.has_checks:
        check_item(target.step_spec("checks"), target.table, target.checks_stem)
    log(f"done: {', '.join(target.outputs)}")
    return target
