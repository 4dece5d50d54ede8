"""Item-level steps: aggregate run records into a table, render it, check the paper's claims.

The Snakemake rules call these through `workflow/scripts/*.py`; `run_item_locally` runs one
item's whole chain in-process (data, runs, table, figure, checks) for development and tests.
"""

from __future__ import annotations

import html
import os
import tempfile
from pathlib import Path

import pandas as pd

from .aggregate import Context, checks_frame, load_records, tidy
from .api import DPClustError
from .workflow import ItemTarget, import_object, load_config, plan


def _paper_module(config: dict, paper: str) -> str | None:
    return config["paper_configs"][paper].get("module")


def _resolve(config: dict, target: ItemTarget, key: str, default=None):
    spec = target.cfg.get(key)
    if not spec:
        return default
    return import_object(spec, _paper_module(config, target.paper))


def _atomic_csv(df: pd.DataFrame, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".csv", dir=path.parent)
    os.close(fd)
    try:
        df.to_csv(tmp, index=False, float_format="%.10g", lineterminator="\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def aggregate_item(config: dict, target: ItemTarget, record_paths, dataset_paths: dict, out_csv) -> pd.DataFrame:
    records = load_records(record_paths)
    func = _resolve(config, target, "aggregate", tidy)
    table = func(records, target.cfg, Context(config=config, dataset_paths=dict(dataset_paths)))
    if not isinstance(table, pd.DataFrame):
        raise DPClustError(f"aggregate of {target.key} returned {type(table).__name__}, not a DataFrame")
    _atomic_csv(table, out_csv)
    return table


def read_table(path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=True)


def caption_text(target: ItemTarget) -> str:
    cfg = target.cfg
    return f"**{cfg['title']}** ({cfg['reproduces']}). {cfg['caption']}"


def render_item(config: dict, target: ItemTarget, table_csv, stem=None) -> None:
    """Render `stem.png`/`stem.pdf` (+ `stem.md`: the table for tables, caption and link for figures)."""
    func = _resolve(config, target, "render")
    if func is None:
        raise DPClustError(f"item {target.key} has no `render` function")
    stem = Path(stem or target.figure_stem)
    func(read_table(table_csv), target.cfg, str(stem))
    if target.kind == "figure":
        stem.with_suffix(".md").write_text(
            f"![{target.cfg['title']}]({stem.name}.png)\n\n{caption_text(target)}\n\nData: "
            f"`{Path(table_csv).as_posix()}`\n", encoding="utf-8")


def check_item(config: dict, target: ItemTarget, table_csv, stem=None) -> pd.DataFrame:
    func = _resolve(config, target, "checks")
    checks = func(read_table(table_csv), target.cfg)
    frame = checks_frame(list(checks))
    stem = Path(stem or target.checks_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    _atomic_csv(frame, stem.with_suffix(".csv"))
    from .plotting import to_markdown

    title = f"Claims of {target.cfg.get('reproduces', target.key)}, checked on our runs"
    stem.with_suffix(".md").write_text(f"**{title}**\n\n" + to_markdown(frame), encoding="utf-8")
    stem.with_suffix(".html").write_text(checks_html(frame, title), encoding="utf-8")
    return frame


def checks_html(frame: pd.DataFrame, title: str) -> str:
    colours = {"holds": "#1b7f3b", "does not hold": "#b3261e", "not evaluable": "#6b6b6b"}
    rows = "".join(
        f"<tr><td>{html.escape(str(r.claim))}</td>"
        f"<td style='color:{colours.get(r.result, '#000')};font-weight:bold'>{html.escape(r.result)}</td>"
        f"<td>{html.escape(str(r.detail))}</td></tr>"
        for r in frame.itertuples(index=False)
    )
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body><h3>{html.escape(title)}</h3><table border='1' cellpadding='4' style='border-collapse:collapse'>"
            f"<tr><th>claim</th><th>result</th><th>detail</th></tr>{rows}</table></body></html>\n")


def summarize_checks(check_csvs, out_stem) -> pd.DataFrame:
    """One table of every claim check of every item: paper, item, claim, result, detail.

    Written as `out_stem.{csv,md,html}`; the report shows it first, so a reader sees at a glance
    which of the papers' claims hold in our runs and which do not.
    """
    frames = []
    for path in sorted(map(str, check_csvs)):
        frame = pd.read_csv(path, keep_default_na=False)
        parts = Path(path).with_suffix("").parts
        frame.insert(0, "item", parts[-1])
        frame.insert(0, "paper", parts[-2])
        frames.append(frame)
    table = (pd.concat(frames, ignore_index=True) if frames
             else pd.DataFrame(columns=["paper", "item", "claim", "result", "detail"]))
    stem = Path(out_stem)
    _atomic_csv(table, stem.with_suffix(".csv"))
    counts = table["result"].value_counts().to_dict() if len(table) else {}
    title = ("Every claim check: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))) if counts else "No claim checks"
    from .plotting import to_markdown

    stem.with_suffix(".md").write_text(f"**{title}**\n\n" + to_markdown(table), encoding="utf-8")
    body = checks_html(table.drop(columns=["paper", "item"]).assign(
        claim=table["paper"] + " / " + table["item"] + ": " + table["claim"]), title)
    stem.with_suffix(".html").write_text(body, encoding="utf-8")
    return table


def run_item_locally(paper: str, item: str, workdir: str | Path, config_dir=None, overrides=None,
                     mirror: str | None = None, log=print) -> ItemTarget:
    """Run every step of one item in-process under `workdir` (no Snakemake)."""
    from .data import fetch_source, load_registry, prepare_dataset
    from .runner import RunRequest, run_block, write_json_atomic

    workdir = Path(workdir)
    config = load_config(config_dir, overrides=overrides)
    config["results_dir"] = str(workdir / "results")
    the_plan = plan(config)
    target = the_plan.item(paper, item)
    registry_path = Path(config["config_dir"]) / "datasets.yaml"
    registry = load_registry(registry_path)
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
    for job in target.runs:
        if Path(job.path).exists():
            continue
        log(f"run {job.path}")
        req = RunRequest(dataset=job.dataset, algorithm=job.algorithm, k=job.k, epsilon=job.epsilon,
                         seeds=list(range(job.seed_start, job.seed_start + job.seed_count)),
                         data_path=dataset_paths[job.dataset], delta=job.delta, transform=job.transform,
                         init_sets=job.init_sets, params=__import__("json").loads(job.params_json),
                         base_seed=int(config["base_seed"]), store_centers=job.store_centers,
                         paper=job.paper, item=job.item, group=job.group, registry_path=str(registry_path))
        write_json_atomic(run_block(req, config["algorithms"]), job.path)
    aggregate_item(config, target, [j.path for j in target.runs], dataset_paths, target.table)
    render_item(config, target, target.table)
    if target.has_checks:
        check_item(config, target, target.table)
    log(f"done: {', '.join(target.outputs)}")
    return target
