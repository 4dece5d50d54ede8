"""Command line: `python -m dpclust.pipeline {run, item, audit, list, data}`.

Imports stay lean on the `run` path (no pandas/matplotlib/sklearn unless an algorithm needs them),
since Snakemake starts one process per job.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

from dpclust import __version__
from dpclust.api import DPClustError

EPILOG = """\
examples:
  python -m dpclust.pipeline run --dataset s1 --algorithm baselines.lloyd --k 15 --epsilon none \\
      --seed 0 --repetitions 3 --transform minmax_pm1 --out /tmp/run.json
  python -m dpclust.pipeline run --dataset s1 --algorithm su2016.dplloyd --k 15 --epsilon 0.5 \\
      --seed 0 --transform minmax_pm1 --param iterations=5 --out /tmp/dplloyd.json
  python -m dpclust.pipeline item baselines table --preset test --workdir /tmp/dpc
  python -m dpclust.pipeline list algorithms
  python -m dpclust.pipeline data fetch sipu_s1 --raw-dir data/raw --mirror ../shared/datasets
  python -m dpclust.pipeline data prepare s1 --raw-dir data/raw --out data/processed/s1.h5

A run record (JSON) holds the resolved settings, seeds, costs (k-means, NICV, k-median),
epsilon/delta actually spent with the ledger of every charge, iterations, wall time, centres,
the dpclust version, git commit, code hash and library versions. Same inputs give the same
record apart from wall_time_s. The full pipeline is `snakemake --cores 8` (see README.md).
"""


def _parse_param(text: str) -> tuple[str, object]:
    import yaml

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise DPClustError(f"--param needs key=value, got {text!r}")
    return key, yaml.safe_load(value)


def _parse_epsilon(text: str):
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise DPClustError(f"--epsilon must be a number or 'none', got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dpclust.pipeline",
        description="dpclust: reproduce five papers on differentially private k-means / k-median.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"dpclust {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run one block of seeds of one algorithm and write a run record",
                         description="Run ALGORITHM on DATASET for seeds SEED .. SEED+REPETITIONS-1 and "
                                     "write one JSON run record. The workflow passes a complete --spec "
                                     "instead (planned by dpclust.pipeline.planning; no config is read then).",
                         epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--spec", help="complete run spec as JSON, or @FILE (the workflow's way; replaces "
                                    "--dataset/--algorithm/--k/--epsilon/... and reads no config); a run "
                                    "batch {\"spec\": ..., \"cells\": [[k, eps, seed, count], ...]} writes "
                                    "every block's record to one file")
    run.add_argument("--data-sha256", default=None,
                     help="with --spec: sha256 of X the workflow planned with (checked on load); for a "
                          "batch, a JSON object {dataset: sha256}")
    run.add_argument("--code-hash", default=None,
                     help="hash of the code the workflow planned the run with (recorded, for provenance)")
    run.add_argument("--reference-records", nargs="*", default=[], metavar="FILE",
                     help="with a batch --spec whose group declares reference_runs: the run files holding the "
                          "recorded runs it reads (the workflow plans them as inputs)")
    run.add_argument("--dataset", help="dataset name from config/datasets.yaml")
    run.add_argument("--data", help="processed HDF5 file (default: DATA_DIR/processed/DATASET.h5)")
    run.add_argument("--data-dir", default="data",
                     help="data directory (default: data); a batch reads DATA_DIR/processed/<dataset>.h5")
    run.add_argument("--algorithm", help="algorithm name, e.g. su2016.dplloyd (see `list algorithms`)")
    run.add_argument("--k", type=int, help="number of centres")
    run.add_argument("--epsilon", help="total privacy budget (> 0), or 'none' for non-private baselines")
    run.add_argument("--delta", default="0", help="delta in [0, 1), or an expression of n such as 'n^-1.5' (default 0)")
    run.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    run.add_argument("--repetitions", type=int, default=1, help="number of consecutive seeds (default 1)")
    run.add_argument("--init-sets", type=int, default=None,
                     help="share initial centres between seeds with equal seed %% INIT_SETS")
    run.add_argument("--transform", default="raw", help="named data transform: minmax_pm1, minmax_01, raw")
    run.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                     help="override one algorithm setting (VALUE is YAML); repeatable")
    run.add_argument("--base-seed", type=int, default=None, help="base seed (default: config base_seed)")
    run.add_argument("--config-dir", default="config", help="config directory (default: config)")
    run.add_argument("--no-centers", action="store_true", help="do not store centres in the record")
    run.add_argument("--out", required=True, help="output JSON file (written atomically)")
    run.add_argument("--allow-unavailable", action="store_true",
                     help="exit 0 when the dataset is unavailable (the record is written either way, with "
                          "status data_unavailable; without this flag the exit code is 3). The Snakemake "
                          "workflow passes it so that figures can draw 'data unavailable' panels")

    item = sub.add_parser("item", help="run one paper item end to end in-process (no Snakemake)")
    item.add_argument("paper")
    item.add_argument("item")
    item.add_argument("--preset", choices=["full", "quick", "test"], default="quick")
    item.add_argument("--workdir", required=True, help="directory for data/ and results/")
    item.add_argument("--config-dir", default=None)
    item.add_argument("--mirror", default=None, help="local mirror of the raw datasets")
    item.add_argument("--opt-in", action="append", default=[], metavar="NAME",
                      help="also plan the run groups declaring `opt_in: NAME` (config key opt_in; repeatable)")

    aud = sub.add_parser("audit", help="run one privacy audit (an algorithm on one neighbouring design) and "
                                       "write its record",
                         description="Run a planned privacy audit (dpclust.pipeline.audit_job): the algorithm many "
                                     "times on two neighbouring datasets, the empirical lower bound on ε with "
                                     "its confidence, and the same with every noise scale halved (power). The "
                                     "workflow passes the complete --spec (dpclust.pipeline.audit_plan.audit_jobs).")
    aud.add_argument("--spec", required=True, help="complete audit spec as JSON, or @FILE")
    aud.add_argument("--code-hash", default=None, help="hash of the code the workflow planned the audit with")
    aud.add_argument("--out", required=True, help="output JSON file (written atomically)")

    lst = sub.add_parser("list", help="list papers/items, algorithms, datasets, or an algorithm's settings")
    lst.add_argument("what", choices=["items", "algorithms", "datasets", "settings"])
    lst.add_argument("name", nargs="?", help="with `settings`: the algorithm (e.g. su2016.dplloyd)")
    lst.add_argument("--config-dir", default=None)

    cmp_ = sub.add_parser("compare-claims", help="compare two runs' claim summaries (e.g. quick vs full "
                                                 "protocol): verdict totals per paper and every claim "
                                                 "whose verdict differs, as Markdown")
    cmp_.add_argument("a", help="first results/checks/summary.csv (e.g. the quick preset's)")
    cmp_.add_argument("b", help="second results/checks/summary.csv (e.g. the full protocol's)")
    cmp_.add_argument("--labels", nargs=2, default=["quick", "full"], metavar=("A", "B"),
                      help="names of the two runs (default: quick full)")

    pre = sub.add_parser("preflight", help="check the config files of a snakemake command line before it runs "
                                           "(scripts/run.sh runs this first)",
                         description="Check what Snakemake reads before dpclust can say a word: config/config.yaml "
                                     "and every --configfile exist and are valid YAML. One error line (exit 2) "
                                     "naming the file and the fix, or nothing (exit 0).")
    pre.add_argument("snakemake_args", nargs=argparse.REMAINDER, metavar="-- SNAKEMAKE_ARGS",
                     help="the arguments snakemake will get")
    pre.add_argument("--config-dir", default="config", help="config directory (default: config)")

    data = sub.add_parser("data", help="download (or copy from a mirror) and prepare datasets")
    data_sub = data.add_subparsers(dest="data_command", required=True, metavar="DATA_COMMAND")
    from dpclust.data.cli import register

    register(data_sub)
    return parser


def _spec_from_args(args) -> dict:
    """A run spec from the human-facing flags (reads config/ like the planner does)."""
    from dpclust.pipeline.configuration import load_config, resolve_algorithm, run_spec_for

    missing = [flag for flag, value in (("--dataset", args.dataset), ("--algorithm", args.algorithm),
                                        ("--k", args.k), ("--epsilon", args.epsilon)) if value is None]
    if missing:
        raise DPClustError(f"give --spec, or all of {', '.join(missing)}")
    if args.repetitions < 1:
        raise DPClustError("--repetitions must be >= 1")
    config = load_config(Path(args.config_dir))
    if args.algorithm not in config["algorithms"]:
        resolve_algorithm(config, args.algorithm, where="--algorithm")  # one error naming close matches
    epsilon = _parse_epsilon(args.epsilon)
    spec = run_spec_for(config, args.dataset, args.algorithm, args.k, epsilon,
                        seeds=(args.seed, args.repetitions), transform=args.transform, delta=args.delta,
                        params=dict(_parse_param(p) for p in args.param), init_sets=args.init_sets,
                        base_seed=args.base_seed, store_centers=not args.no_centers, where="--param")
    if not spec["private"] and epsilon is not None:
        raise DPClustError(f"--epsilon {args.epsilon}: {args.algorithm} is not private (it spends no privacy "
                           "budget, and its record would show an ε it never had): pass --epsilon none")
    return spec


def _load_spec(text: str, flag: str = "--spec") -> dict:
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise DPClustError(f"{flag} {text}: cannot read {text[1:]!r} ({exc.strerror}); give the spec as JSON, "
                               "or @FILE naming an existing file") from None
    try:
        spec = json.loads(text)
    except ValueError as exc:
        raise DPClustError(f"--spec is not valid JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise DPClustError("--spec must be a JSON object")
    return spec


def _planned_ids(text: str | None) -> dict[str, str]:
    """--data-sha256: one content id, or a JSON object {dataset: id} (a batch); ids that are not a
    sha256 (an unavailable marker's) are not checked."""
    if not text:
        return {}
    ids = json.loads(text) if text.lstrip().startswith("{") else {"": text}
    return {name: v for name, v in ids.items() if isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v)}


def _file_sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def cmd_run(args) -> int:
    from dpclust.pipeline.run_job import reference_records, run_batch, run_spec, write_json_atomic

    spec = _load_spec(args.spec) if args.spec else _spec_from_args(args)
    if "cells" not in spec and not isinstance(spec.get("dataset"), str):
        raise DPClustError("--spec names no dataset: a run spec needs 'dataset' (a batch: 'spec' and 'cells'); "
                           "plan it with dpclust.pipeline.planning, or give --dataset, --algorithm, --k and "
                           "--epsilon instead of --spec")
    planned = _planned_ids(args.data_sha256)
    if "cells" in spec:  # a run batch (the workflow's run job: dpclust.pipeline.run_plan.RunBatch)
        datasets = list(dict.fromkeys(cell[0] for cell in spec["cells"]))
        paths = {name: str(Path(args.data_dir) / "processed" / f"{name}.h5") for name in datasets}
        if args.data and len(datasets) == 1:
            paths = {datasets[0]: args.data}
    else:
        datasets = [spec.get("dataset")]
        paths = {datasets[0]: args.data or str(Path(args.data_dir) / "processed" / f"{datasets[0]}.h5")}
        planned = {datasets[0]: planned[""]} if "" in planned else planned
    for name, path in paths.items():
        if not Path(path).exists():
            raise DPClustError(f"processed data file {path} does not exist; run "
                               f"`python -m dpclust.pipeline data prepare {name} ...` or the Snakemake workflow")
    checkpoint = None
    references = reference_records(args.reference_records)
    if "cells" in spec:
        if args.code_hash:  # the workflow's run job: a killed job resumes at its first unfinished block
            from dpclust.pipeline.run_job import BlockCheckpoint

            # the reference records decide the runs as the data do: a kept block of a killed attempt is
            # reused only with the same ones
            reads = dict(planned, **{f"reference:{p}": _file_sha256(p) for p in args.reference_records})
            checkpoint = BlockCheckpoint(args.out, spec, reads, args.code_hash)
        out = run_batch(spec, paths, planned, checkpoint=checkpoint, references=references)
        records = out["records"]
    else:
        out = run_spec(spec, paths[datasets[0]], data_sha256=planned.get(datasets[0]))
        records = [out]
    if args.code_hash:
        for record in records:
            record["code_hash"] = args.code_hash
    write_json_atomic(out, args.out)
    if checkpoint is not None:
        checkpoint.discard()
    for record in records:
        if record.get("status") == "refused":   # a documented limit of the algorithm (api.Refused): not a failure
            print(f"refused: {record.get('algorithm')} on {record.get('dataset')!r} at k = {record.get('k')}, "
                  f"ε = {record.get('epsilon')}: {' '.join(str(record.get('reason') or '').split())}", file=sys.stderr)
    failed = [r for r in records if r.get("status", "ok") not in ("ok", "refused")]
    if failed and not (args.allow_unavailable and all(r["status"] == "data_unavailable" for r in failed)):
        record = failed[0]
        status = record["status"]
        reason = " ".join(str(record.get("reason") or "").split())
        print(f"error: run not done ({status}) for dataset {record.get('dataset')!r}: {reason}; wrote the record to "
              f"{args.out}" + ("; pass --allow-unavailable to exit 0" if status == "data_unavailable" else ""),
              file=sys.stderr)
        return 3
    return 0


def cmd_audit(args) -> int:
    from dpclust.fileio import write_json_atomic
    from dpclust.pipeline.audit_job import run_audit

    record = run_audit(_load_spec(args.spec))
    if args.code_hash:
        record["code_hash"] = args.code_hash
    write_json_atomic(record, args.out)
    return 0


def cmd_item(args) -> int:
    from dpclust.pipeline.local_run import run_item_locally

    run_item_locally(args.paper, args.item, args.workdir, config_dir=args.config_dir,
                     overrides={"preset": args.preset, "opt_in": args.opt_in}, mirror=args.mirror)
    return 0


def cmd_list(args) -> int:
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    config = load_config(args.config_dir)
    if args.what == "algorithms":
        for name, entry in sorted(config["algorithms"].items()):
            print(f"{name:32s} {entry['function']}{'' if entry.get('private', True) else '  (non-private)'}")
    elif args.what == "settings":
        _list_settings(config, args.name)
    elif args.what == "items":
        p = plan(config)
        for t in p.items:
            print(f"{t.key:32s} {t.kind:7s} {len(t.run_files):5d} jobs {len(t.runs):5d} blocks  "
                  f"{t.cfg.get('reproduces', '')}")
        print(f"total run jobs: {len(p.batches)} ({len(p.runs)} blocks of seeds)")
    else:
        for name in sorted(config["registry"].datasets):
            print(name)
    return 0


def _list_settings(config: dict, name: str | None) -> None:
    """Every setting of a configured algorithm: the value it resolves to, the declared default and
    its provenance (a value that differs from the default is an override in its paper's config)."""
    from dpclust.pipeline.configuration import resolve_algorithm
    from dpclust.pipeline.resolve import import_object
    from dpclust.settings import settings_of

    if not name:
        raise DPClustError("`list settings` needs an algorithm name, e.g. su2016.dplloyd (see `list algorithms`)")
    resolved = resolve_algorithm(config, name)
    declared = settings_of(import_object(resolved["function"]))
    print(f"{name}: {resolved['function']} ({'private' if resolved['private'] else 'non-private'})")
    for key, value in resolved["settings"].items():
        setting = declared[key] if declared is not None and key in declared else None
        mark = "" if setting is None or setting.default == value else f"  [override; default {setting.default!r}]"
        source = setting.source if setting is not None else "(undeclared)"
        print(f"  {key} = {value!r}{mark}\n      {source}")


#: what snakemake reads as a config file (anything else after --configfile is most likely a target)
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


def configfiles_of(argv: list[str]) -> list[str]:
    """The config files of a snakemake command line: `--configfile F [F ...]` takes every following
    word up to the next option (as Snakemake does), `--configfile=F` one."""
    files: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--configfile", "--configfiles"):
            i += 1
            while i < len(argv) and not argv[i].startswith("-"):
                files.append(argv[i])
                i += 1
            continue
        if arg.startswith(("--configfile=", "--configfiles=")):
            files.append(arg.split("=", 1)[1])
        i += 1
    return files


def check_snakemake_args(argv: list[str], config_dir: str | Path = "config") -> None:
    """One clear `DPClustError` for what Snakemake itself reports with a traceback or without naming
    the file: a missing or invalid config/config.yaml, a --configfile that does not exist (or a
    target written after --configfile, which Snakemake reads as a config file), a config file that is
    not valid YAML, a target in another preset's results directory."""
    import yaml

    from dpclust.pipeline.configuration import yaml_error

    config_dir = Path(config_dir)
    presets = sorted(str(p) for p in config_dir.glob("*.yaml")
                     if p.name not in ("config.yaml", "datasets.yaml", "names.yaml"))
    main_file = config_dir / "config.yaml"
    argv = [a for a in argv if a != "--"]
    files = configfiles_of(argv)
    loaded: list[dict] = []
    for path in [str(main_file), *files]:
        if not Path(path).is_file():
            if path == str(main_file):
                raise DPClustError(f"{main_file} does not exist: restore it (git checkout -- {main_file}); the "
                                   f"presets ({', '.join(presets)}) only override its values")
            if not path.endswith(CONFIG_SUFFIXES):
                raise DPClustError(f"--configfile reads every word after it as a config file, so {path!r} (a "
                                   "target?) was read as one: put targets before --configfile, e.g. "
                                   f"snakemake {path} --configfile {files[0]}")
            raise DPClustError(f"--configfile {path}: no such file (the presets: {', '.join(presets)}; the full "
                               "protocol needs no --configfile)")
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise DPClustError(yaml_error(path, exc)) from None
        if data is not None and not isinstance(data, dict):
            raise DPClustError(f"{path}: expected a mapping of config keys (key: value) at the top level")
        loaded.append(data or {})
    _check_target_presets(argv, loaded, files)


def _check_target_presets(argv: list[str], loaded: list[dict], files: list[str]) -> None:
    """A target under another preset's results directory (results/full/... in a run of config/test.yaml),
    for which Snakemake says only "No rule to produce"."""
    from dpclust.pipeline.configuration import PRESETS

    config: dict = {}
    for data in loaded:
        config.update(data)
    for i, arg in enumerate(argv):  # --config KEY=VALUE ... (as Snakemake reads it)
        if arg == "--config":
            for word in argv[i + 1:]:
                if word.startswith("-"):
                    break
                key, _, value = word.partition("=")
                config[key] = value
    preset, results = str(config.get("preset", "full")), str(config.get("results_dir", "results")).rstrip("/")
    for arg in argv:
        parts = arg.split("/")
        if arg.startswith(results + "/") and len(parts) > results.count("/") + 2:
            other = parts[results.count("/") + 1]
            if other in PRESETS and other != preset:
                how = "no --configfile" if other == "full" else f"--configfile config/{other}.yaml"
                now = f"--configfile {files[-1]}" if files else "config/config.yaml"
                raise DPClustError(f"target {arg} is a file of the {other} preset, but this run is the {preset} "
                                   f"preset ({now}): run the {other} preset ({how}), or ask for "
                                   f"{results}/{preset}/{'/'.join(parts[results.count('/') + 2:])}")


def cmd_preflight(args) -> int:
    check_snakemake_args(args.snakemake_args, args.config_dir)
    return 0


def cmd_compare_claims(args) -> int:
    from dpclust.pipeline.compare_claims import compare_claims_markdown

    for path in (args.a, args.b):
        if not Path(path).is_file():
            raise DPClustError(f"no claim summary at {path}: run the workflow first (it writes "
                               "results/<preset>/checks/summary.csv)")
    print(compare_claims_markdown(args.a, args.b, tuple(args.labels)), end="")
    return 0


def main(argv=None) -> int:
    """Exit codes: 0 done; 2 bad input (one-line message); 3 a requested run could not be done
    (e.g. its dataset is unavailable; the run record is still written); 1 unexpected error."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if argv is None and args.command in ("run", "audit"):
        # a process of its own that computes (the workflow's run and audit jobs), not a caller's
        # process: freed memory is kept for the next step (speed only, dpclust.pipeline.heap)
        from dpclust.pipeline.heap import retain_freed_memory

        retain_freed_memory()
    try:
        if args.command == "run":
            return cmd_run(args)
        if args.command == "item":
            return cmd_item(args)
        if args.command == "audit":
            return cmd_audit(args)
        if args.command == "list":
            return cmd_list(args)
        if args.command == "compare-claims":
            return cmd_compare_claims(args)
        if args.command == "preflight":
            return cmd_preflight(args)
        return args.func(args)
    except DPClustError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
