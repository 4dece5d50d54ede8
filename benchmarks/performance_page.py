"""Write docs/PERFORMANCE.md from the benchmarks' own output, and each published run's results page
(docs/FULL_PROTOCOL.md for the full protocol): never edit those pages by hand.

    .venv/bin/python benchmarks/performance_page.py [--add-run logs/invocations/<time>.json]
    .venv/bin/python benchmarks/performance_page.py --publish CHECKOUT PRESET [--compare OTHER/summary.csv]

Sources, all under benchmarks/results/ and committed:
* `estimate_full_protocol.json`: the last whole-protocol estimate (benchmarks/estimate_full_protocol.py);
* `where_cpu_goes.json`: where the costliest groups' CPU goes, and their floors at the same arithmetic
  (benchmarks/where_cpu_goes.py --summary);
* `float32_labels.json`: certified float32 labels against the float64 ones
  (benchmarks/bench_float32_labels.py --json);
* `runs/<preset>.json`: the last measured run of each preset, as the workflow logged it
  (`logs/invocations/<time>.json`, written when a local run succeeds; `--add-run` copies one here,
  replacing the earlier run of its preset), or, for a run stopped and resumed over several
  invocations, summed from its jobs' benchmarks (`--add-measured CHECKOUT PRESET`);
* `runs/<preset>.results.md` (and `runs/<preset>.compare.md`): a finished run's own results page
  (`results/<preset>/RESULTS.md`, written by the workflow) and its verdicts beside another run's
  (`--compare`, e.g. the quick preset's `checks/summary.csv`), copied by `--publish CHECKOUT PRESET`,
  which also does `--add-measured`. Each becomes a page in docs/ (`results_page_path`) under a header
  with what the run cost. A run of some papers only (`--config 'papers=[...]'`, e.g. the part of the
  full protocol one working session can finish) is published with `--part PAPER [PAPER ...]` as
  `runs/<preset>.<paper+paper>.*`; a run of some items of a paper (`--config 'items=[paper/item, ...]'`)
  with `--part paper/item ...` (`runs/<preset>.<paper-item+...>.*`). The preset's page then sums the
  papers' claims over its parts (`all_parts_section`) and shows each part with its own commit and
  cost. A part replaces the published parts that share a paper (or, item by item, an item) with it; a
  whole run replaces every published run of its preset.
The targets are the performance issue's: the offline full default ≤ 4.0 CPU-hours, the five papers
≤ 3.0 of it, the leaderboard ≤ 1.0.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from dpclust.pipeline.status import claim_totals

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
PAGE = REPO / "docs" / "PERFORMANCE.md"
TARGETS = {"total_cpu_hours": 4.0, "papers_cpu_hours": 3.0, "leaderboard_cpu_hours": 1.0}


#: where a published run's results page goes (other presets: docs/RESULTS_<PRESET>.md)
RESULTS_PAGES = {"full": REPO / "docs" / "FULL_PROTOCOL.md"}
#: the hand-written page docs/FULL_PROTOCOL.md was before runs were published in parts: its last
#: end-to-end run of the full protocol (fe1d8ec), for the papers no part covers yet
HAND_WRITTEN_FULL_PAGE = "51a7532:docs/FULL_PROTOCOL.md"


def run_key(preset: str, part=None) -> str:
    """The stem of a published run's files: the preset, and for a part its papers or items
    (`full.a+b`, `full.a-fig1+a-fig5`)."""
    return f"{preset}.{'+'.join(entry.replace('/', '-') for entry in part)}" if part else preset


def covers(entry: str, paper: str, item: str | None = None) -> bool:
    """Whether a part's entry (`paper` or `paper/item`) covers the paper's item (its whole paper when
    item is None: only an entry naming the paper alone does)."""
    entry_paper, _, entry_item = entry.partition("/")
    return entry_paper == paper and (not entry_item or entry_item == item)


def overlaps(part: list[str], other: list[str]) -> bool:
    """Whether two parts share a paper (one names it whole) or an item."""
    def pairs(entries):
        return [tuple(e.partition("/")[::2]) for e in entries]
    return any(p == q and (not i or not j or i == j) for p, i in pairs(part) for q, j in pairs(other))


def run_label(run: dict) -> str:
    return f"{run['preset']} ({', '.join(run['part'])})" if run.get("part") else run["preset"]


def _hours(h: float) -> str:
    return f"{h:.2f}"


def _duration(seconds: float) -> str:
    minutes = seconds / 60
    return f"{minutes / 60:.1f} h" if minutes >= 90 else f"{minutes:.1f} min"


def estimate_section(est: dict) -> list[str]:
    met = {k: est[k] <= v for k, v in TARGETS.items()}
    lines = [f"## The full protocol, estimated (commit {est['commit']})", "",
             f"`benchmarks/estimate_full_protocol.py` times sample runs of every planned (algorithm, data, k, "
             f"settings) at up to three ε, in CPU seconds, and extrapolates to every seed: {est['what']}.", "",
             "| part | CPU-hours | target | met |", "|---|---:|---:|---|"]
    for key, label in (("total_cpu_hours", "total"), ("papers_cpu_hours", "the five papers"),
                       ("leaderboard_cpu_hours", "the leaderboard")):
        lines.append(f"| {label} | {_hours(est[key])} | ≤ {TARGETS[key]:.1f} | {'yes' if met[key] else 'no'} |")
    lines += ["", "By part: " + ", ".join(f"{k} {_hours(v)}" for k, v in
                                           sorted(est["by_part_cpu_hours"].items(), key=lambda kv: -kv[1])) + "."]
    if est.get("skipped_datasets"):
        lines += ["", "Not timed (data unavailable offline): " + ", ".join(est["skipped_datasets"]) + "."]
    if est.get("top_algorithms_cpu_hours"):
        lines += ["", "| dearest algorithms | CPU-hours |", "|---|---:|"]
        lines += [f"| {k} | {_hours(v)} |" for k, v in est["top_algorithms_cpu_hours"].items()]
    if est.get("top_groups"):
        lines += ["", "| dearest groups (paper/item/algorithm/dataset/k) | CPU-hours | runs |", "|---|---:|---:|"]
        lines += [f"| {g['group']} | {_hours(g['cpu_hours'])} | {g['runs']} |" for g in est["top_groups"]]
    return lines


#: the page's columns of a sampled group's shares: (heading, the libraries of where_cpu_goes.CATEGORIES)
SHARE_COLUMNS = (("BLAS", ("BLAS (OpenBLAS)",)), ("NumPy", ("NumPy C core", "NumPy random")),
                 ("libc, libm", ("libc / libm",)), ("numba, other native", ("other native",)),
                 ("SciPy, scikit-learn", ("SciPy compiled", "scikit-learn compiled")),
                 ("interpreter", ("Python interpreter",)))


def floors_section(where: dict, top: int = 12) -> list[str]:
    """The groups benchmarks/where_cpu_goes.py sampled: their libraries' shares and floors."""
    groups = where["groups"]
    est = sum(g["cpu_hours"] for g in groups)
    floor = sum(g["floor_cpu_hours"] for g in groups)
    lines = [f"## Where the CPU goes, and each costly group's floor (commit {where['commit']})", "",
             f"`benchmarks/where_cpu_goes.py` ran the {len(groups)} costliest groups it could (the estimate's "
             f"{where['sampled_cpu_hours']:.2f} of {where['estimate_cpu_hours']:.2f} CPU-hours, its share "
             f"{where['cover']:g}) under py-spy's native sampler, about {where['seconds_per_group']:g} s of runs each "
             "after a warm-up, and put each sample in the library it ran in. The CPU-hours are the estimate's "
             f"(commit {where.get('estimate_commit') or 'unknown'}); the shares are the code's at commit "
             f"{where['commit']}: a group marked * runs code changed in between, so its CPU-hours and floor are "
             "the older code's and only its shares are the new code's. "
             "A group's floor at the same arithmetic "
             "is its estimate without the interpreter's share: the rest runs in compiled kernels whose "
             "floating-point operations fix the records' bytes, so going below it is a numerics change, accepted "
             "only through the equivalence harness (docs/EQUIVALENCE.md).", "",
             f"Over these groups: {est:.2f} CPU-hours estimated, {floor:.2f} at the floor "
             f"({100 * (1 - floor / est):.1f} % is the interpreter's)." if est else "", "",
             "| group (paper/item/algorithm/dataset/k) | CPU-hours | "
             + " | ".join(f"{h} %" for h, _ in SHARE_COLUMNS) + " | floor |",
             "|---|---:|" + "---:|" * len(SHARE_COLUMNS) + "---:|"]
    for g in groups[:top]:
        shares = [100 * sum(g["shares"].get(name, 0.0) for name in names) for _, names in SHARE_COLUMNS]
        mark = " *" if g.get("code_changed_since_estimate") else ""
        lines.append(f"| {g['group']}{mark} | {_hours(g['cpu_hours'])} | " + " | ".join(f"{v:.0f}" for v in shares)
                     + f" | {_hours(g['floor_cpu_hours'])} |")
    if where.get("gemm_gflops"):
        lines += ["", "This core, one thread: " + "; ".join(f"{name} {rate:.1f} GFLOP/s"
                                                          for name, rate in where["gemm_gflops"].items()) + "."]
    return lines


def float32_labels_section(bench: dict) -> list[str]:
    """benchmarks/bench_float32_labels.py: certified float32 labels against the float64 ones."""
    rows = bench["rows"]
    slower = [r for r in rows if r["lloyd_step_ratio"] > 1.0]
    mnist10 = [r for r in rows if r["data"].startswith("MNIST") and r["k"] == 10]
    lines = [f"## Float32 labels with a certificate (commit {bench['commit']})", "",
             "`benchmarks/bench_float32_labels.py` times, on one thread, the float64 labels of a labels-only "
             "assignment, uncertified float32 labels (the ceiling of any float32 path), and float32 labels with a "
             "certificate that makes them the float64 labels (a rounding bound on the best/runner-up gap; the "
             "uncertain rows scored again in float64), alone and inside Lloyd's step, whose one-hot sums read the "
             "float64 rows whatever the labels. Ratios are certified / float64: below 1 pays.", "",
             "| data | k | labels: ceiling | labels: certified | same labels | rows redone | Lloyd step |",
             "|---|---:|---:|---:|---|---:|---:|"]
    lines += [f"| {r['data']} | {r['k']} | {r['ceiling']:.2f} | {r['ratio']:.2f} | "
              f"{'yes' if r['same_labels'] else 'no'} | {100 * r['redone_share']:.3f} % | {r['lloyd_step_ratio']:.2f} |"
              for r in rows]
    lines += ["", f"Lloyd's step is slower with them in {len(slower)} of {len(rows)} cases"
              + (f", MNIST at k = 10 (the leaderboard's) among them ({mnist10[0]['lloyd_step_ratio']:.2f})"
                 if mnist10 and mnist10[0] in slower else "")
              + ": reading the rows in float32 for the scores and in float64 for the sums costs more than the "
              "float32 GEMM saves, except at many centres. So the path lives in the benchmark, not in dpclust."]
    return lines


def runs_section(runs: list[dict]) -> list[str]:
    lines = ["## Measured runs", "",
             "The last run of each preset measured end to end, as the workflow logged it (wall time; CPU = user + "
             "system of Snakemake and every job it ran; the largest process).", "",
             "| preset | commit | finished (UTC) | wall | CPU | largest process | claims |",
             "|---|---|---|---:|---:|---:|---|"]
    for r in sorted(runs, key=run_label):
        lines.append(f"| {run_label(r)} | {r['commit'][:7]} | {r['finished_utc']} | {_duration(r['wall_s'])} | "
                     f"{_duration(r['cpu_s'])} | {r['peak_bytes'] / 1e9:.2f} GB | {r.get('claims', '')} |")
    for r in sorted(runs, key=run_label):
        if r.get("segments"):
            lines += ["", f"The {run_label(r)} run ran in {r['segments']} Snakemake invocations (stopped and resumed): "
                      f"its CPU is the sum of its {r['jobs']} jobs' own benchmarks (Snakemake's scheduling and work "
                      "lost in a stopped job not included), its wall the sum of the invocations' spans."]
    return lines


def render(results: Path = RESULTS) -> str:
    lines = ["# Performance", "",
             "Generated by `python benchmarks/performance_page.py` from `benchmarks/results/`; do not edit by hand. "
             "Earlier measurements are in the commit messages.", ""]
    est_path = results / "estimate_full_protocol.json"
    if est_path.exists():
        lines += estimate_section(json.loads(est_path.read_text(encoding="utf-8"))) + [""]
    where_path = results / "where_cpu_goes.json"
    if where_path.exists():
        lines += floors_section(json.loads(where_path.read_text(encoding="utf-8"))) + [""]
    f32_path = results / "float32_labels.json"
    if f32_path.exists():
        lines += float32_labels_section(json.loads(f32_path.read_text(encoding="utf-8"))) + [""]
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((results / "runs").glob("*.json"))]
    if runs:
        lines += runs_section(runs) + [""]
    return "\n".join(lines)


def add_run(record: Path, results: Path = RESULTS) -> Path:
    """Copy a workflow invocation log into `runs/<preset>.json` (the last measured run of its preset)."""
    data = json.loads(record.read_text(encoding="utf-8"))
    missing = {"preset", "commit", "finished_utc", "wall_s", "cpu_s", "peak_bytes"} - set(data)
    if missing:
        raise SystemExit(f"{record}: not a workflow invocation log (missing {sorted(missing)}); "
                         "pass a file from logs/invocations/")
    out = results / "runs" / f"{data['preset']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(record, out)
    return out


def _benchmark_row(path: Path) -> dict[str, float]:
    """The last row of a Snakemake `benchmark:` file (seconds, max_rss in MiB, cpu_time in seconds)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header, row = lines[0].split("\t"), lines[-1].split("\t")
    out = {}
    for key in ("s", "max_rss", "cpu_time"):
        try:
            out[key] = float(row[header.index(key)])
        except (ValueError, IndexError):   # "NA" (a job too short to sample) or a torn file
            out[key] = 0.0
    return out


def _segment(log: Path) -> tuple[float, float]:
    """(start, end) in epoch seconds of one Snakemake invocation, from its log's name and its last
    write (the last event it logged)."""
    stamp = log.name.split(".")[0]                   # 2026-11-30T140415, Snakemake's local time
    start = time.mktime(time.strptime(stamp, "%Y-%m-%dT%H%M%S"))
    return start, log.stat().st_mtime


def measured_run(root: Path, preset: str) -> dict:
    """What a run of `preset` in the checkout `root` cost, from its own logs, however many invocations
    it took (a run stopped and resumed, e.g. across working sessions, writes no invocation log until
    its last segment succeeds): CPU = the sum of every job's `benchmark:` cpu_time (the finished
    jobs; work lost in a killed job and Snakemake's own scheduling are not in it), the largest
    process = the largest job's max_rss, wall = the sum of the invocations' spans (.snakemake/log/:
    each from its start to its log's last line, so a killed invocation counts to its last event).
    For a checkout that ran this one preset (logs/ is not per preset). A run done in one invocation is
    measured as the workflow logged it (`logs/invocations/`: Snakemake's own CPU included)."""
    rows = [_benchmark_row(f) for f in sorted((root / "logs" / "benchmarks").rglob("*.tsv"))]
    segments = [_segment(f) for f in sorted((root / ".snakemake" / "log").glob("*.snakemake.log"))]
    if not rows or not segments:
        raise SystemExit(f"{root}: no job benchmarks (logs/benchmarks/) or Snakemake logs (.snakemake/log/)")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    logs = sorted((root / "logs" / "invocations").glob("*.json"))
    if len(segments) == 1 and len(logs) == 1:
        logged = json.loads(logs[0].read_text(encoding="utf-8"))
        if logged.get("preset") == preset and logged.get("commit") == commit:
            return logged
    summary = root / "results" / preset / "checks" / "summary.csv"
    return {"preset": preset, "commit": commit or "unknown",
            "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(max(end for _, end in segments))),
            "wall_s": round(sum(end - start for start, end in segments), 1),
            "cpu_s": round(sum(r["cpu_time"] for r in rows), 1),
            "peak_bytes": int(max(r["max_rss"] for r in rows) * 2 ** 20),
            "claims": claim_totals(summary) if summary.exists() else "no claim summary written",
            "jobs": len(rows), "segments": len(segments)}


def add_measured(root: Path, preset: str, results: Path = RESULTS) -> Path:
    """Publish `measured_run(root, preset)` as `runs/<preset>.json`."""
    out = results / "runs" / f"{preset}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(measured_run(root, preset), indent=1) + "\n", encoding="utf-8")
    return out


def results_page_path(preset: str) -> Path:
    return RESULTS_PAGES.get(preset, REPO / "docs" / f"RESULTS_{preset.upper()}.md")


def _demoted(markdown: str, levels: int = 1) -> list[str]:
    """A page's lines `levels` heading levels down (its title dropped): it becomes a section of another."""
    lines = markdown.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return ["#" * levels + line if line.startswith("#") else line for line in lines]


def _run_sections(key: str, runs: Path, depth: int = 0) -> list[str]:
    """What the published run `key` cost, its verdicts beside another run's if it was published with
    `--compare`, then its own results page; headings `depth` levels below the page's sections."""
    run = json.loads((runs / f"{key}.json").read_text(encoding="utf-8"))
    h = "#" * (2 + depth)
    lines = [f"{h} What the run cost", "",
             "Wall time; CPU = user + system of Snakemake and every job it ran; the largest process.", ""]
    lines += runs_section([run])[4:] + [""]
    compare = runs / f"{key}.compare.md"
    if compare.exists():
        lines += [f"{h} Its verdicts beside {compare.read_text(encoding='utf-8').splitlines()[0]}", ""]
        lines += _demoted("\n".join(compare.read_text(encoding="utf-8").splitlines()[1:]), depth + 1) + [""]
    lines += [f"{h} Its results page", ""]
    return lines + _demoted((runs / f"{key}.results.md").read_text(encoding="utf-8"), depth + 1)


def _planned_papers() -> list[str]:
    """The papers (and pseudo-papers) the default configuration runs: config/config.yaml's `papers`."""
    import yaml

    return list(yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))["papers"])


def _paper_items(paper: str) -> list[str]:
    """The items of config/papers/<paper>.yaml, in its order."""
    import yaml

    path = REPO / "config" / "papers" / f"{paper}.yaml"
    return list(yaml.safe_load(path.read_text(encoding="utf-8")).get("items") or {})


def _not_covered(parts: list[dict]) -> list[tuple[str, list[str]]]:
    """(paper, its items no part covers) of each planned paper not wholly covered by the parts: all
    its items when no part names it, else the items still missing."""
    entries = [e for run in parts for e in run.get("part") or []]
    out = []
    for paper in _planned_papers():
        if any(covers(e, paper) for e in entries):
            continue
        items = _paper_items(paper)
        left = [i for i in items if not any(covers(e, paper, i) for e in entries)]
        if left:
            out.append((paper, left if len(left) < len(items) else []))
    return out


def render_results(preset: str, results: Path = RESULTS) -> str:
    """The docs page of the published run of `preset` (`runs/<preset>.*`), or of its published parts."""
    runs = results / "runs"
    source = (f"Generated by `python benchmarks/performance_page.py` from `benchmarks/results/runs/{preset}.*`, "
              f"which `--publish CHECKOUT {preset}` copied from the run's checkout; do not edit by hand. "
              "The rubric that decides each claim: docs/VERDICTS.md; the cost of other runs and the "
              "estimate: docs/PERFORMANCE.md.")
    keys = published_runs(preset, results)
    if keys == [preset]:
        lines = [f"# The {preset} preset, run end to end", "", source, ""] + _run_sections(preset, runs)
        return "\n".join(lines).rstrip("\n") + "\n"
    parts = [json.loads((runs / f"{k}.json").read_text(encoding="utf-8")) for k in keys]
    missing = _not_covered(parts) if preset == "full" else []
    lines = [f"# The {preset} preset, run in parts", "", source,
             "", "Each part ran some of the papers (`--config 'papers=[...]'`), or some items of one "
             "(`--config 'items=[paper/item, ...]'`), in a checkout of its own, at the "
             "commit it names; a part's verdicts are those of its commit."]
    commit, by = _estimate_by_part(results)
    if missing:
        named = [f"{p} (items {', '.join(left)})" if left else
                 f"{p} (estimated {_hours(by[p])} CPU-hours)" if p in by else p for p, left in missing]
        lines += ["", f"Not yet run in a published part: {', '.join(named)}."
                  + (f" The last end-to-end run of the whole protocol (commit fe1d8ec) is described in the page "
                     f"this one replaced: `git show {HAND_WRITTEN_FULL_PAGE}`." if preset == "full" else "")]
    lines += all_parts_section(keys, parts, runs, commit, by)
    for key, run in zip(keys, parts):
        lines += ["", f"## Part: {', '.join(run.get('part') or ['all papers'])} (commit {run['commit'][:7]})", ""]
        lines += _part_estimate(run, commit, by) + _run_sections(key, runs, depth=1)
    return "\n".join(lines).rstrip("\n") + "\n"


_TALLY_COLUMNS = ("claims", "holds", "does not hold", "not decidable", "not evaluable")


def markdown_tables(markdown: str) -> list[tuple[str, list[dict[str, str]]]]:
    """(the heading above it, its rows) of every table of a results page, as
    `dpclust.pipeline.results_page` writes them (`plotting.to_markdown`: a `|` inside a cell is `\\|`)."""
    import re

    def cells(line: str) -> list[str]:
        return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]

    out, heading, lines = [], "", markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header, rows = cells(line), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(header, cells(lines[i]))))
                i += 1
            out.append((heading, rows))
            continue
        i += 1
    return out


def all_parts_section(keys: list[str], parts: list[dict], runs: Path, commit: str = "",
                      by: dict[str, float] | None = None) -> list[str]:
    """The papers' claims over every published part together: per paper, the parts (and commits) that
    ran it and its verdicts summed over them; then every not decidable claim with the runs it used and
    why its looks stopped (or the runs it would need), read from each part's results page; then what
    the parts cost together, beside the whole-protocol estimate (`commit`, `by`) for the same parts."""
    tally: dict[str, dict[str, int]] = {}
    ran: dict[str, list[str]] = {}
    undecided = []
    for key, run in zip(keys, parts):
        label = f"{', '.join(run.get('part') or ['all papers'])} ({run['commit'][:7]})"
        tables = markdown_tables((runs / f"{key}.results.md").read_text(encoding="utf-8"))
        why = {}
        for _, rows in tables:
            for row in rows:
                if "stopped" in row or "runs it would need" in row:
                    why[(row["item"], row["claim"])] = row.get("stopped") or row.get("runs it would need", "")
        for heading, rows in tables:
            for row in rows:
                if heading == "The papers' claims" and "paper" in row:
                    counts = tally.setdefault(row["paper"], dict.fromkeys(_TALLY_COLUMNS, 0))
                    for col in _TALLY_COLUMNS:
                        counts[col] += int(row.get(col) or 0)
                    ran.setdefault(row["paper"], []).append(label)
                elif heading in tally and row.get("result") == "not decidable" and "sensitivity" in row:
                    undecided.append({"paper": heading, "item": row["item"], "claim": row["claim"],
                                      "runs": row.get("runs", ""), "stopped": why.get((row["item"], row["claim"]), "")})
    if not tally:
        return []
    totals: dict[str, object] = {col: sum(t[col] for t in tally.values()) for col in _TALLY_COLUMNS}
    per_paper = [{"paper": paper, "parts (commit)": "; ".join(ran[paper]), **tally[paper]} for paper in sorted(tally)]
    per_paper.append({"paper": "all", "parts (commit)": "", **totals})
    lines = ["", "## The papers' claims over all published parts", "",
             "Each paper's claims as decided in the parts that ran it (summed over its parts; our own checks, "
             "the audit and the leaderboard are not counted).", "", *_table(per_paper)]
    if undecided:
        lines += ["", f"Not decidable ({len(undecided)}): the runs each used and why it stopped, or the runs it "
                  "would need (docs/VERDICTS.md, \"Replication\").", "", *_table(undecided)]
    entries = [e for run in parts for e in run.get("part") or []]
    done = [p for p in _planned_papers() if p in (by or {}) and all(
        any(covers(e, p, item) for e in entries) for item in _paper_items(p))]
    lines += ["", f"What the {len(parts)} parts cost together: {_hours(sum(r.get('cpu_s', 0) for r in parts) / 3600)} "
              f"CPU-hours (every job), {_duration(sum(r.get('wall_s', 0) for r in parts))} of wall time (the sum of "
              f"the parts'), largest process {max(r.get('peak_bytes', 0) for r in parts) / 1e9:.2f} GB"
              + (f"; the estimate (commit {commit}, run jobs only) for the papers they cover ({', '.join(done)}): "
                 f"{_hours(sum((by or {})[p] for p in done))} CPU-hours" if done else "") + "."]
    return lines


def _table(rows: Sequence[Mapping[str, object]]) -> list[str]:
    cols = list(rows[0])
    return (["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
            + ["| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |" for r in rows])


def _estimate_by_part(results: Path) -> tuple[str, dict[str, float]]:
    """(commit, paper or paper/item → CPU-hours) of the whole-protocol estimate; ("", {}) without one."""
    est_path = results / "estimate_full_protocol.json"
    if not est_path.exists():
        return "", {}
    est = json.loads(est_path.read_text(encoding="utf-8"))
    return est["commit"], {**(est.get("by_part_cpu_hours") or {}), **(est.get("by_item_cpu_hours") or {})}


def _part_estimate(run: dict, commit: str, by: dict[str, float]) -> list[str]:
    """The whole-protocol estimate's CPU-hours for the part's papers, beside what the part measured."""
    known = [p for p in run.get("part") or [] if p in by]
    if not known:
        return []
    return [f"Estimated for {', '.join(known)} (commit {commit}, run jobs only): "
            f"{_hours(sum(by[p] for p in known))} CPU-hours; measured (every job): "
            f"{_hours(run['cpu_s'] / 3600)} CPU-hours.", ""]


def _summary_items(summary: Path) -> set[tuple[str, str]]:
    """The (paper, item) of every row of a claim summary."""
    import pandas as pd

    if not summary.is_file():
        return set()
    table = pd.read_csv(summary, usecols=["paper", "item"], dtype=str, keep_default_na=False)
    return set(zip(table["paper"], table["item"]))


def publish(root: Path, preset: str, compare: Path | None = None, labels=("quick", "full"),
            results: Path = RESULTS, part=None) -> list[Path]:
    """Publish the finished run of `preset` in the checkout `root`: what it cost (`add_measured`), its
    results page, and with `compare` (another run's checks/summary.csv, cut to the part's papers) its
    verdicts beside that run's. `part`: the papers the run was limited to (their claim summary must
    name no other); it replaces the published parts of `preset` that share a paper with it (a whole
    run replaces every published run of `preset`)."""
    page = root / "results" / preset / "RESULTS.md"
    if not page.is_file():
        raise SystemExit(f"{page}: no results page: the run of {preset} in {root} has not finished")
    summary = root / "results" / preset / "checks" / "summary.csv"
    part = sorted(part) if part else None
    if part:
        stray = sorted({f"{paper}/{item}" for paper, item in _summary_items(summary)
                        if not any(covers(e, paper, item) for e in part)})
        if stray:
            raise SystemExit(f"{summary}: claims of {stray}, which --part {' '.join(part)} does not name: "
                             "name every paper (or paper/item) the run ran")
    runs = results / "runs"
    for key in published_runs(preset, results):      # what this run supersedes
        old = json.loads((runs / f"{key}.json").read_text(encoding="utf-8")).get("part")
        if not part or (old and overlaps(old, part)):
            for f in runs.glob(f"{key}.*"):
                if f.name.removeprefix(key + ".") in ("json", "results.md", "compare.md"):
                    f.unlink()
    key = run_key(preset, part)
    measured = dict(measured_run(root, preset), **({"part": part} if part else {}))
    target_json = runs / f"{key}.json"
    target_json.parent.mkdir(parents=True, exist_ok=True)
    target_json.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
    target = runs / f"{key}.results.md"
    shutil.copyfile(page, target)
    out = [target_json, target]
    if compare is not None:
        import io

        import pandas as pd

        from dpclust.pipeline.compare_claims import compare_claims_markdown

        other = pd.read_csv(compare, dtype=str, keep_default_na=False)
        if part:
            other = other[[any(covers(e, p, i) for e in part) for p, i in zip(other["paper"], other["item"])]]
        comparison = runs / f"{key}.compare.md"
        comparison.write_text(f"the {labels[0]} run's\n" + compare_claims_markdown(
            io.StringIO(other.to_csv(index=False)), summary, labels), encoding="utf-8")
        out.append(comparison)
    return out


def _published_stems(results: Path) -> list[str]:
    return sorted(p.name.removesuffix(".results.md") for p in (results / "runs").glob("*.results.md"))


def published_runs(preset: str, results: Path = RESULTS) -> list[str]:
    """The stems of the published runs of `preset`: the whole run (`preset`) and its parts, sorted."""
    return [stem for stem in _published_stems(results) if stem.split(".")[0] == preset]


def published_presets(results: Path = RESULTS) -> list[str]:
    return sorted({stem.split(".")[0] for stem in _published_stems(results)})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--add-run", type=Path, default=None, help="a logs/invocations/<time>.json to publish")
    parser.add_argument("--add-measured", nargs=2, metavar=("CHECKOUT", "PRESET"), default=None,
                        help="publish what the run of PRESET in CHECKOUT cost, summed from its job benchmarks "
                             "and Snakemake logs (a run resumed over several invocations)")
    parser.add_argument("--publish", nargs=2, metavar=("CHECKOUT", "PRESET"), default=None,
                        help="publish the finished run of PRESET in CHECKOUT: --add-measured, and its results page "
                             "as a page of docs/ (docs/FULL_PROTOCOL.md for full)")
    parser.add_argument("--compare", type=Path, default=None, metavar="SUMMARY_CSV",
                        help="with --publish: another run's checks/summary.csv (e.g. the quick preset's) to set "
                             "the published run's verdicts beside")
    parser.add_argument("--part", nargs="+", default=None, metavar="PAPER",
                        help="with --publish: the run ran these papers only (--config 'papers=[...]'), or these "
                             "items (paper/item: --config 'items=[...]'): publish it as a part of PRESET's page")
    parser.add_argument("--labels", nargs=2, default=("quick", "full"), metavar=("OTHER", "THIS"),
                        help="with --compare: the two runs' names (default: quick full)")
    parser.add_argument("--page", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    if (args.compare or args.part) and not args.publish:
        parser.error("--compare and --part go with --publish")
    if args.publish:
        for path in publish(Path(args.publish[0]), args.publish[1], args.compare, tuple(args.labels),
                            part=args.part):
            print(f"published {path}")
    if args.add_run:
        print(f"published {add_run(args.add_run)}")
    if args.add_measured:
        print(f"published {add_measured(Path(args.add_measured[0]), args.add_measured[1])}")
    args.page.write_text(render(), encoding="utf-8")
    print(f"wrote {args.page}")
    for preset in published_presets():
        path = results_page_path(preset)
        path.write_text(render_results(preset), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
