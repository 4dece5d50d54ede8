"""The whole Snakemake workflow, from nothing, in a temporary copy of the repository.

One copy goes through a user's life (each test builds on the state the previous ones left):

1. offline with no mirror (downloads pointed at an unroutable local address): the test preset runs
   to completion, every item renders ("data unavailable" panels), the claim summary is written;
2. the mirror is set: exactly the sources that became available are fetched, and exactly their
   datasets' jobs re-run;
3. nothing re-runs without an edit (also after new timestamps, without the mirror, after moving);
4. each kind of edit re-runs exactly what depends on it, asserted as exact sets of jobs:
   (a) an algorithm setting, (b) a claim threshold, (c) a dataset's registry entry, (d) a parser,
   (e) nothing, plus a caption and a Python module;
5. a deleted or corrupt processed file is rebuilt and re-runs nothing else; result files follow
   the umask; no absolute path of the machine appears in results; the report builds.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.helpers import SNAKEMAKE, copy_project, project_env, timeless

from dpclust.api import DPClustError
from dpclust.pipeline import replication
from dpclust.pipeline.codehash import closure
from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan
from dpclust.pipeline.resolve import function_module

REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.workflow]
#: how long a held-back data job waits: s1's data job takes about 0.3 s here, a few seconds on a loaded
#: machine (the hold is idle time on the suite's critical path)
HOLD_S = 8
UNROUTABLE = "http://127.0.0.1:9"  # the discard port: every download is refused at once
JOB_HEADER = re.compile(r"^(?:local)?(rule|checkpoint) (\w+):$")
#: a race's directory is named by the hash of what it depends on (workflow/rules/common.smk
#: race_fingerprint): jobs are compared with it written `*`
RACE_DIR = re.compile(r"(/racing/[^/]+/[^/]+/)[0-9a-f]{16}/")


def _env(work: Path, mirror=None, offline=False, slow_prepare=None) -> dict:
    env = project_env(work)
    if slow_prepare:
        env["PYTHONPATH"] = _slow_prepare_hook(work, slow_prepare) + os.pathsep + env["PYTHONPATH"]
    if mirror:
        env["DPCLUST_DATA_MIRROR"] = str(mirror)
    if offline:
        for key in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            env[key] = UNROUTABLE
        env.pop("no_proxy", None)
        env.pop("NO_PROXY", None)
    return env


def _slow_prepare_hook(work: Path, dataset: str) -> str:
    """A directory holding a `sitecustomize` that makes the process preparing `dataset` wait
    `HOLD_S` (any other process goes on at once), so that another data checkpoint finishes while this
    one is still running: the moment at which Snakemake re-plans the jobs that read the finished one."""
    hook = work.parent / f"slow_prepare_{dataset}"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(
        "import time\n"
        "with open('/proc/self/cmdline', 'rb') as fh:\n"
        "    argv = fh.read().split(b'\\0')\n"
        f"if b'prepare' in argv and {dataset.encode()!r} in argv:\n"
        f"    time.sleep({HOLD_S})\n")
    return str(hook)


def _snakemake(work: Path, *args, mirror=None, offline=False, check=True, timeout=1500, slow_prepare=None):
    # `--workflow-profile none`: the job blocks `jobs_of` reads (the repository's profile keeps them
    # off the console, see tests/test_workflow_dry.py)
    out = subprocess.run([*SNAKEMAKE, "-s", str(work / "Snakefile"), "-d", str(work), "--cores", "2",
                          "--workflow-profile", "none",
                          "--configfile", str(work / "config" / "test.yaml"), *args],
                         cwd=work, env=_env(work, mirror, offline, slow_prepare), capture_output=True, text=True,
                         timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{out.stdout[-4000:]}\n{out.stderr[-6000:]}")
    return out


def jobs_of(text: str) -> set[tuple[str, str]]:
    """(rule, first output) of every job a Snakemake run or dry run printed."""
    jobs, rule = set(), None
    for line in text.splitlines():
        m = JOB_HEADER.match(line.strip())
        if m:
            if rule is not None:
                jobs.add((rule, ""))
            rule = m.group(2)
            continue
        if rule is not None and line.strip().startswith("output:"):
            first = line.split("output:", 1)[1].split(",")[0].strip()
            first = RACE_DIR.sub(r"\1*/", first)
            jobs.add((rule, first.removesuffix(" (update)")))  # Snakemake marks `update` outputs so
            rule = None
    if rule is not None:
        jobs.add((rule, ""))
    return {j for j in jobs if j[0] != "all"}


def _dry(work, **kw) -> set[tuple[str, str]]:
    out = _snakemake(work, "-n", **kw)
    return jobs_of(out.stdout + out.stderr)


def _real(work, **kw) -> set[tuple[str, str]]:
    out = _snakemake(work, **kw)
    return jobs_of(out.stdout + out.stderr)


def _plan(work) -> "object":
    return plan(load_config(work / "config", overrides={"preset": "test"}))


def _item_jobs(p, items, work=None) -> set[tuple[str, str]]:
    """The item jobs that re-run for `items`; `work`: after a real run there (its replication looks,
    all of them, re-run too; a dry run stops at the first decision, a checkpoint)."""
    out = set()
    for t in items:
        out.add(("aggregate", t.table))
        out.add(("render", t.figure_stem + ".png"))
        out |= _race_jobs(p, t, work)
        if t.has_checks:
            out.add(("check_claims", t.checks_stem + ".html"))
            out |= _replication_jobs(p, t, work)
    if any(t.has_checks for t in items):
        out.add(("summarize_claims", p.summary_stem + ".html"))
    if any(t.has_checks for t in items) or {t.table for t in items} & set(p.results_page_inputs().values()):
        out.add(("results_page", p.results_page))   # reads the summary, the leaderboard and the audit
    return out


def _replication_jobs(p, t, work=None) -> set[tuple[str, str]]:
    if not t.replication:
        return set()
    where = f"{p.config['results_dir']}/replication/{t.key}"
    if work is None:
        return {("replication_decision", f"{where}/decision0.json")}
    looks = len(list((work / where).glob("decision*.json"))) - 1
    return ({("replication_decision", f"{where}/decision{j}.json") for j in range(looks + 1)}
            | {("replication_look", f"{where}/look{j}.table.csv") for j in range(1, looks + 1)})


def _race_jobs(p, t, work=None) -> set[tuple[str, str]]:
    """The race of the runs `t` reads (dpclust.pipeline.racing): its first look, decision and final
    list (a dry run stops at the first decision, a checkpoint), or, after a real run in `work`, every
    look of its latest race."""
    if not t.race:
        return set()
    where = f"{p.config['results_dir']}/racing/{t.paper}/{t.race_owner}"
    looks = 1
    if work is not None:
        races = sorted((work / where).glob("*/final.json"), key=lambda f: f.stat().st_mtime)
        looks = len(list(races[-1].parent.glob("decision*.json"))) if races else 1
    return ({("race_look", f"{where}/*/look{j}.json") for j in range(looks)}
            | {("race_decision", f"{where}/*/decision{j}.json") for j in range(looks)}
            | {("race_final", f"{where}/*/final.json")})


def _downstream(p, run_paths, datasets=(), work=None) -> set[tuple[str, str]]:
    """The run jobs of `run_paths` and every item job that reads one of them or, itself, one of
    the processed `datasets`; `work`: after a real run there, with the replication looks and the
    added runs of the `datasets` (see `_item_jobs`)."""
    run_paths = set(run_paths)
    items = [t for t in p.items if any(j.path in run_paths for j in t.runs) or set(t.data_inputs) & set(datasets)]
    out = {("run", path) for path in run_paths} | _item_jobs(p, items, work)
    if work is not None:
        for t in items:
            # the blocks each replication look ran: those of the claims and cells its decision left open
            where = work / f"{p.config['results_dir']}/replication/{t.key}"
            looks = len(list(where.glob("decision*.json"))) - 1
            for look in range(1, max(looks, 0) + 1):
                decision = json.loads((where / f"decision{look - 1}.json").read_text())
                out |= {("run", j.path) for j in replication.look_jobs(t.replication, t.rounds[look - 1],
                                                                        decision["open"], decision.get("open_cells"))
                        if j.dataset in set(datasets)}
            # the racing looks' runs of those datasets that the decisions asked for (their files exist)
            out |= {("run", j.path) for r in t.race_rounds for j in r
                    if j.dataset in set(datasets) and (work / j.path).exists()}
    return out


def _edit_yaml(path: Path, fn):
    data = yaml.safe_load(path.read_text())
    fn(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


class _Edited:
    """Edit a file for the duration of a with-block."""

    def __init__(self, path: Path, edit):
        self.path, self.edit = path, edit

    def __enter__(self):
        self.original = self.path.read_text()
        self.edit(self.path)
        return self

    def __exit__(self, *exc):
        self.path.write_text(self.original)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("wf"))


@pytest.fixture(scope="module")
def offline_run(work):
    """The README's command on a machine with no network and no mirror."""
    return _snakemake(work, offline=True)


@pytest.fixture(scope="module")
def mirror_run(work, offline_run, mirror):
    """The same project once the mirror is set: the missing data appear, their jobs re-run."""
    before = {d: (work / "data" / "processed" / f"{d}.json").read_text() for d in _plan(work).datasets}
    out = _snakemake(work, mirror=mirror)
    return before, out


def test_offline_without_mirror_completes_with_unavailable_panels(work, offline_run):
    p = _plan(work)
    for out in p.outputs:
        path = work / out
        assert path.exists() and path.stat().st_size > 0, f"missing {out}"
    text = offline_run.stdout + offline_run.stderr
    assert "dataset(s) unavailable" in text and "the papers' claims:" in text  # the final summary
    assert re.search(r"this invocation: .* wall, .* CPU-\w+ \(user \+ system .*largest process", text)
    records = [yaml.safe_load((work / "data" / "processed" / f"{d}.json").read_text()) for d in p.datasets]
    real = [r for r in records if not r["name"].startswith(("su_synth", "synth"))]
    assert real and not any(r["available"] for r in real), "offline, no real dataset can be had"
    assert any(r["available"] for r in records), "synthetic datasets are generated offline"
    assert "DPCLUST_DATA_MIRROR" in records[0]["reason"] or any("DPCLUST_DATA_MIRROR" in r["reason"] for r in real)


def test_setting_the_mirror_fetches_and_reruns_exactly_the_new_data(work, mirror_run, mirror):
    before, out = mirror_run
    p = _plan(work)
    became = {d for d in p.datasets
              if (work / "data" / "processed" / f"{d}.json").read_text() != before[d]}
    assert {"s1", "iris", "shuttle"} <= became
    assert not any(d.startswith("su_synth") for d in became)
    ran = jobs_of(out.stdout + out.stderr)
    expected = _downstream(p, [j.path for j in p.runs if j.dataset in became], became, work=work)
    expected |= {("prepare_dataset", f"data/processed/{d}.json") for d in p.datasets if
                 set(p.config["registry"].sources_for(d))
                 & {s for dd in became for s in p.config["registry"].sources_for(dd)}}
    fetched = {job for job in ran if job[0] == "fetch_source"}
    assert {Path(o).parent.name for _, o in fetched} >= {"sipu_s1", "iris"}
    assert ran - fetched == expected


def test_items_read_the_processed_data_they_name(work, mirror_run):
    """An item that reads processed files (Su et al.'s Table 1) gets each dataset's own file, not a
    neighbour's (the aggregate job's data inputs also hold every dataset its runs read)."""
    import pandas as pd

    table = pd.read_csv(work / "results" / "test" / "tables" / "su2016" / "table1.csv")
    ok = table[table["status"] == "ok"]
    assert len(ok) > 0 and (ok["N"] == ok["paper_N"]).any()
    assert ok.set_index("name").loc["s1", "N"] == 5000


def test_nothing_reruns_without_an_edit(work, mirror_run, mirror):
    assert _dry(work, mirror=mirror) == set()  # (e)
    for path in list((work / "src").rglob("*.py")) + list((work / "config").rglob("*.yaml")) + [work / "Snakefile"]:
        os.utime(path)  # a fresh checkout gives every file a new mtime
    assert _dry(work, mirror=mirror) == set()
    assert _dry(work) == set(), "unsetting the mirror must not re-fetch (sources that are ok stay ok)"


def test_replication_looks_run_in_order_once(work, mirror_run, mirror):
    """su2016 fig3 declares replication in the test preset (looks at 2× and 3×): the checkpoint asked
    for each look in turn, the last decision says why it stopped, the summary says how many runs each
    claim used, and a second invocation runs no round again."""
    target = _plan(work).item("su2016", "fig3")
    where = work / "results" / "test" / "replication" / "su2016" / "fig3"
    decisions = [json.loads((where / f"decision{j}.json").read_text())
                 for j in range(len(target.rounds) + 1) if (where / f"decision{j}.json").exists()]
    assert decisions and [d["look"] for d in decisions] == list(range(len(decisions)))
    assert all(d["next"] for d in decisions[:-1]) and not decisions[-1]["next"]
    assert decisions[-1]["stopped"], "the last decision says why the looks stopped"
    looks = len(decisions) - 1
    for look in range(1, looks + 1):
        assert (where / f"look{look}.csv").exists()
    # fig3's cells name their runs: each look ran the open cells' blocks only (settled cell by cell)
    assert all(cells is not None for d in decisions[:-1] for cells in d["open_cells"].values())
    added = [path for look in range(1, looks + 1)
             for path in target.look_files(look, decisions[look - 1]["open"], decisions[look - 1]["open_cells"])]
    assert added and all((work / path).exists() for path in added)
    assert set(added) <= {path for look in range(1, looks + 1)
                          for path in target.look_files(look, decisions[look - 1]["open"])}
    assert not (where / f"look{looks + 1}.csv").exists()
    summary = _csv_rows(work / "results" / "test" / "checks" / "summary.csv")
    fig3 = [r for r in summary if r["item"] == "fig3" and r["kind"] == "paper"]
    assert fig3 and all(r["runs"].startswith(("1×", "2×", "3×")) and r["stopped"] for r in fig3)
    stamps = {path: (work / path).stat().st_mtime_ns for path in added}
    assert not {job for job in _real(work, mirror=mirror) if job[0] in ("run", "replication_look")}
    assert stamps == {path: (work / path).stat().st_mtime_ns for path in stamps}


def test_the_race_runs_each_look_once_and_a_lost_look_record_alone(work, mirror_run, mirror):
    """The test preset's leaderboard race (dpclust.pipeline.racing: one k-means cell of two methods, 2
    runs, cap 4): look 0 leaves the cell open, look 1 runs one job per contending method (its batch of
    the open blocks), the `best` item says how the cell stopped. A deleted look record and one cut
    short are made again, the same bytes, and nothing else runs; then nothing runs."""
    import pandas as pd

    from dpclust.pipeline import racing

    results = work / "results" / "test"
    races = (results / "racing/leaderboard/table").glob("*/final.json")
    race = sorted(races, key=lambda f: f.stat().st_mtime)[-1].parent      # the mirror run's race
    look0 = json.loads((race / "decision0.json").read_text())
    cell = racing.cell_id("kmeans", "iris", 3, 1.0)
    assert look0["next"] and set(look0["open"]) == {cell}          # the k-median cell has one method
    added = sorted(p.relative_to(results / "runs/leaderboard/table").as_posix()
                   for p in results.glob("runs/leaderboard/table/*.round*/*/*.json") if "released" not in p.name)
    assert added == sorted(f"kmeans.round1/iris/{a}.json" for a in look0["open"][cell])
    assert not (race / "decision2.json").exists()
    assert sorted(json.loads((race / "final.json").read_text())["runs"]) == [
        f"results/test/runs/leaderboard/table/{a}" for a in added]                  # what the items read
    runs = pd.read_csv(results / "tables/leaderboard/table.csv").set_index("algorithm")["n"]
    assert all(runs[a] == 4 for a in look0["open"][cell]) and runs["cohenaddad2022.hst"] == 2
    row = pd.read_csv(results / "tables/leaderboard/best.csv").set_index("objective").loc["kmeans"]
    assert row["stopped"] in ("separated at look 1", "cap reached at look 1") and row["best_runs"] == 4

    before = {f.name: f.read_bytes() for f in race.glob("*.json")}
    stamps = {path: (results / "runs/leaderboard/table" / path).stat().st_mtime_ns for path in added}
    where = "results/test/racing/leaderboard/table/*"
    for look, damage in ((0, lambda f: f.unlink()), (1, lambda f: f.write_bytes(f.read_bytes()[:-3]))):
        damage(race / f"look{look}.json")
        out = _snakemake(work, mirror=mirror)
        assert look == 0 or f"racing/leaderboard/table/{race.name}/look1.json is not a whole record" in out.stderr
        assert jobs_of(out.stdout + out.stderr) == {("race_look", f"{where}/look{look}.json"),
                                                    ("race_decision", f"{where}/decision{look}.json")}
        assert {f.name: f.read_bytes() for f in race.glob("*.json")} == before
    assert stamps == {path: (results / "runs/leaderboard/table" / path).stat().st_mtime_ns for path in stamps}
    assert _dry(work, mirror=mirror) == set()


def _csv_rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_a_moved_project_reruns_nothing(work, mirror_run, mirror, tmp_path_factory):
    moved = tmp_path_factory.mktemp("moved") / "elsewhere"
    shutil.copytree(work, moved, symlinks=True)  # copy2 keeps the timestamps, .snakemake included
    assert _dry(moved, mirror=mirror) == set()


def test_a_setting_edit_reruns_exactly_its_runs_and_items(work, mirror_run, mirror):  # (a)
    paper = work / "config" / "papers" / "su2016.yaml"

    def edit(path):
        def fn(data):
            entry = data["algorithms"]["su2016.dplloyd"]
            entry.setdefault("settings", {})["iterations"] = 7
        _edit_yaml(path, fn)

    p = _plan(work)
    expected = _downstream(p, [j.path for j in p.runs if j.algorithm == "su2016.dplloyd"])
    with _Edited(paper, edit):
        assert _dry(work, mirror=mirror) == expected
        assert not any(run.startswith("results/test/runs/balcan2017") for _, run in expected)


def test_a_threshold_edit_rechecks_only_that_item(work, mirror_run, mirror):  # (b)
    paper = work / "config" / "papers" / "baselines.yaml"
    p = _plan(work)
    target = p.item("baselines", "table")
    with _Edited(paper, lambda path: _edit_yaml(path, lambda d: d["items"]["table"]["claims"].update(
            max_geomean_ratio=1.05))):
        assert _dry(work, mirror=mirror) == {("check_claims", target.checks_stem + ".html"),
                                             ("summarize_claims", p.summary_stem + ".html"),
                                             ("results_page", p.results_page)}


def test_a_batch_edit_reruns_only_that_groups_runs_under_their_new_files(work, mirror_run, mirror):
    """`batch: k` cuts a group's run jobs per k: those jobs (new files) and their items run; nothing else."""
    paper = work / "config" / "papers" / "baselines.yaml"
    with _Edited(paper, lambda path: _edit_yaml(path, lambda d: d["items"]["table"]["runs"]["real"].update(batch="k"))):
        p = _plan(work)
        moved = {j.path for j in p.runs if (j.paper, j.item, j.group) == ("baselines", "table", "real")}
        assert moved and all(re.fullmatch(r".+\.k\d+", Path(path).parent.name) for path in moved)
        assert _dry(work, mirror=mirror) == _downstream(p, moved)


def test_a_caption_edit_rerenders_only_that_item(work, mirror_run, mirror):
    paper = work / "config" / "papers" / "baselines.yaml"
    target = _plan(work).item("baselines", "figure")
    with _Edited(paper,
                 lambda path: _edit_yaml(path, lambda d: d["items"]["figure"].update(caption="Another caption."))):
        assert _dry(work, mirror=mirror) == {("render", target.figure_stem + ".png")}


def test_a_registry_edit_reprepares_its_data_and_reruns_exactly_its_runs(work, mirror_run, mirror):  # (c)
    """Shuttle: the real dataset with the fewest runs in the test preset (the edit is run twice)."""
    registry = work / "config" / "datasets.yaml"
    p = _plan(work)
    expected = {("prepare_dataset", "data/processed/shuttle.json")} | _downstream(
        p, [j.path for j in p.runs if j.dataset == "shuttle"], ["shuttle"])
    assert len(expected) > 3

    def rename_a_column(data):
        data["datasets"]["shuttle"]["columns"][0] = "time_renamed"

    with _Edited(registry, lambda path: _edit_yaml(path, rename_a_column)):
        dry = _dry(work, mirror=mirror)
        # the data job is a checkpoint: a dry run lists it; its readers are re-planned once it has run
        assert ("prepare_dataset", "data/processed/shuttle.json") in dry and dry <= expected
        assert _real(work, mirror=mirror) == expected
    ran = _real(work, mirror=mirror)  # back to the original entry: the same jobs once more
    assert ("prepare_dataset", "data/processed/shuttle.json") in ran


def test_a_parser_edit_reprepares_only_its_datasets(work, mirror_run, mirror):  # (d)
    parser = work / "src" / "dpclust" / "data" / "parsers" / "sipu.py"
    p = _plan(work)
    sipu = {d for d in p.datasets if p.config["registry"].dataset(d).get("parser") == "sipu"}
    assert "s1" in sipu
    assert "birch2_12k" in sipu
    expected = {("prepare_dataset", f"data/processed/{d}.json") for d in sipu}
    # birch2_12k's data job is held back HOLD_S, so that s1's finishes while it runs and Snakemake
    # re-plans s1's readers then (lushen2020's table 2 reads both): a reader must not see the
    # running job's data as changed or missing (seen in CI as a race: extra item jobs re-ran)
    with _Edited(parser, lambda path: path.write_text(path.read_text() + "\n_EDITED = 1\n")):
        assert _dry(work, mirror=mirror) == expected
        # same content: nothing downstream re-runs
        assert _real(work, mirror=mirror, slow_prepare="birch2_12k") == expected
    assert _real(work, mirror=mirror, slow_prepare="birch2_12k") == expected


def test_a_module_edit_reruns_exactly_its_dependents(work, mirror_run, mirror):
    p = _plan(work)
    items_module = work / "src" / "dpclust" / "pipeline" / "items" / "baselines" / "common.py"
    with _Edited(items_module, lambda path: path.write_text(path.read_text() + "\n_EDITED = 1\n")):
        dry = _dry(work, mirror=mirror)
        assert dry == _item_jobs(p, [p.item("baselines", "table"), p.item("baselines", "figure")])
    config = p.config
    dependent = {name for name, e in config["algorithms"].items()
                 if "dpclust.baselines" in closure(function_module(e["function"]))}
    expected = _downstream(p, [j.path for j in p.runs if j.algorithm in dependent])
    expected |= _item_jobs(p, [t for t in p.items if t.module and "dpclust.baselines" in closure(t.module)])
    with _Edited(work / "src" / "dpclust" / "baselines.py",
                 lambda path: path.write_text(path.read_text() + "\n_EDITED = 1\n")):
        assert _dry(work, mirror=mirror) == expected
    for planner in ("planning.py", "run_plan.py", "configuration.py"):
        with _Edited(work / "src" / "dpclust" / "pipeline" / planner,
                     lambda path: path.write_text(path.read_text() + "\n_EDITED = 1\n")):
            assert _dry(work, mirror=mirror) == set(), f"editing the planner ({planner}) re-runs nothing"


def test_a_claims_engine_edit_rechecks_the_items_and_reruns_no_run(work, mirror_run, mirror):
    """The claims engine is in every item's checks, in no run's code, and not in what hashes the race's
    decisions: editing it decides the claims again and re-runs no run, a race look's runs included."""
    races = {path.parent.name for path in (work / "results" / "test" / "racing").rglob("final.json")}
    engine = work / "src" / "dpclust" / "pipeline" / "verdicts.py"
    with _Edited(engine, lambda path: path.write_text(path.read_text() + "\n_EDITED = 1\n")):
        out = _snakemake(work, "-n", mirror=mirror)
    dry = jobs_of(out.stdout + out.stderr)
    assert races and ("summarize_claims", _plan(work).summary_stem + ".html") in dry
    assert not {job for job in dry if job[0] == "run"}
    # the race's looks are checked again in the directory of its decisions: the same hash, no new race
    hashes = set(re.findall(r"/racing/[^/\s]+/[^/\s]+/([0-9a-f]{16})/", out.stdout + out.stderr))
    assert hashes and hashes <= races, (hashes, races)


def test_a_style_edit_rerenders_figures_only(work, mirror_run, mirror):
    """The figures' style (dpclust.pipeline.style) is in no aggregate or checks step's code hash."""
    p = _plan(work)
    style = work / "src" / "dpclust" / "pipeline" / "style.py"
    with _Edited(style, lambda path: path.write_text(path.read_text().replace('"font.size": 9', '"font.size": 10'))):
        dry = _dry(work, mirror=mirror)
    assert dry and {rule for rule, _ in dry} == {"render"}
    assert {out for _, out in dry} == {t.figure_stem + ".png" for t in p.items if t.module}


def test_a_deleted_or_corrupt_processed_file_is_rebuilt_alone(work, mirror_run, mirror):
    processed = work / "data" / "processed"
    (processed / "iris.h5").unlink()
    (processed / "s1.h5").write_bytes(b"not an HDF5 file")
    out = _snakemake(work, mirror=mirror)
    assert "data/processed/s1.h5 is truncated or replaced" in out.stderr
    assert jobs_of(out.stdout + out.stderr) == {("prepare_dataset", "data/processed/iris.json"),
                                                 ("prepare_dataset", "data/processed/s1.json")}
    assert _dry(work, mirror=mirror) == set()


def test_a_deleted_run_or_audit_record_is_rebuilt_with_what_reads_it(work, mirror_run, mirror):
    """`rule all` lists every run and audit record: a deleted one is run again (same seed, same
    released outputs), its items aggregated again, and nothing else."""
    p = _plan(work)
    run = next(j.path for j in p.runs if "/su2016/fig1/" in j.path)
    audit = p.audits[0].path
    before = json.loads((work / run).read_text())
    (work / run).unlink()
    (work / audit).unlink()
    dry = _dry(work, mirror=mirror)
    assert ("run", run) in dry and ("audit_run", audit) in dry
    assert {j for j in dry if j[0] != "audit_run" and "/audit" not in j[1]} == _downstream(p, [run])
    _real(work, mirror=mirror)
    after = json.loads((work / run).read_text())
    assert [r["released"] for rec in after["records"] for r in rec["runs"]] == \
        [r["released"] for rec in before["records"] for r in rec["runs"]]
    assert _dry(work, mirror=mirror) == set()


def test_a_damaged_record_is_moved_aside_and_run_again(work, mirror_run, mirror):
    """A record cut short (an interrupted copy) or emptied is not trusted: the next invocation says
    so in one line, moves it aside and runs it again with what reads it (the same record, wall times aside), and nothing
    else; a record that is whole but does not parse fails its reader with one error naming it."""
    from dpclust.pipeline.integrity import load_records, record_intact

    p = _plan(work)
    run = next(j.path for j in p.runs if "/su2016/fig1/" in j.path)
    audit = p.audits[0].path
    run_bytes, audit_bytes = (work / run).read_bytes(), (work / audit).read_bytes()
    assert record_intact(work / run) == (True, "")
    (work / run).write_bytes(run_bytes[: len(run_bytes) // 2])
    (work / audit).write_bytes(b"")
    assert not record_intact(work / run)[0] and not record_intact(work / audit)[0]
    out = _snakemake(work, mirror=mirror)
    assert f"dpclust: {run} is not a whole record" in out.stderr
    jobs = jobs_of(out.stdout + out.stderr)
    assert ("run", run) in jobs and ("audit_run", audit) in jobs
    assert {j for j in jobs if j[0] != "audit_run" and "/audit" not in j[1]} == _downstream(p, [run])
    assert timeless(json.loads((work / run).read_bytes())) == timeless(json.loads(run_bytes))
    assert timeless(json.loads((work / audit).read_bytes())) == timeless(json.loads(audit_bytes))
    assert (work / f"{run}.corrupt").stat().st_size == len(run_bytes) // 2
    assert _dry(work, mirror=mirror) == set()
    # whole-looking but not JSON: the reader names the record and the fix
    bad = work / "bad.json"
    bad.write_text("{not json}\n")
    assert record_intact(bad) == (True, "")
    with pytest.raises(DPClustError, match=r"record .*bad\.json is damaged .* delete it and run the same command"):
        load_records([bad])


def test_a_table_cut_short_is_made_again_with_what_reads_it(work, mirror_run, mirror):
    """A table cut inside a row would be read with empty fields: the next invocation moves it aside
    and aggregates it again (the same bytes: its records are unchanged), then renders and checks
    that item again, and nothing else."""
    p = _plan(work)
    item = p.item("su2016", "fig1")
    whole = (work / item.table).read_bytes()
    (work / item.table).write_bytes(whole[:-5])
    out = _snakemake(work, mirror=mirror)
    assert f"dpclust: {item.table} is not a whole table" in out.stderr
    assert jobs_of(out.stdout + out.stderr) == _item_jobs(p, [item])
    assert (work / item.table).read_bytes() == whole
    assert _dry(work, mirror=mirror) == set()


def test_a_figure_cut_short_is_drawn_again_and_nothing_else_runs(work, mirror_run, mirror):
    """A figure cut short (an interrupted copy) would stay broken, as nothing reads it: the next
    invocation moves it aside and renders that item again (the same bytes), and nothing else."""
    p = _plan(work)
    item = p.item("su2016", "fig1")
    png = work / (item.figure_stem + ".png")
    whole = png.read_bytes()
    png.write_bytes(whole[: len(whole) // 2])
    out = _snakemake(work, mirror=mirror)
    assert f"dpclust: {item.figure_stem}.png is not a whole PNG file" in out.stderr
    assert jobs_of(out.stdout + out.stderr) == {("render", item.figure_stem + ".png")}
    assert png.read_bytes() == whole
    assert _dry(work, mirror=mirror) == set()


def test_result_files_follow_the_umask_and_hold_no_local_paths(work, mirror_run, mirror):
    results = work / "results"
    modes = {oct(p.stat().st_mode & 0o777) for p in results.rglob("*") if p.is_file()}
    assert modes == {oct(0o666 & ~_umask())}, modes
    needles = [str(work), str(mirror), str(Path(mirror).resolve())]
    for path in list(results.rglob("*.csv")) + list(results.rglob("*.md")) + list(results.rglob("*.html")):
        text = path.read_text(errors="replace")
        assert not any(n in text for n in needles), f"{path} names a local path"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_killed_run_resumes_with_the_same_tables(work, mirror_run, mirror, tmp_path_factory):
    """scripts/run.sh after a kill: the stale lock is removed, incomplete files are re-run, and the
    tables equal an uninterrupted run's (wall-time columns aside)."""
    import signal
    import time

    import pandas as pd

    other = copy_project(tmp_path_factory.mktemp("killed"))
    shutil.copytree(REPO / "scripts", other / "scripts")
    p = _plan(work)
    items = [p.item("baselines", "table"), p.item("su2016", "fig1")]
    targets = [t.table for t in items]
    env = _env(other, mirror)
    env["DPCLUST_SKIP_SETUP"] = "1"
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # targets first: --configfile takes every path after it
    cmd = ["bash", str(other / "scripts" / "run.sh"), *targets, "--cores", "2", "--configfile",
           str(other / "config" / "test.yaml")]
    log = other.parent / "first-run.log"
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, cwd=other, env=env, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
    deadline = time.time() + 600
    while time.time() < deadline and len([p for p in (other / "results").rglob("runs/**/*.json")
                                                      if not p.name.endswith(".released.json")]) < 3:
        assert proc.poll() is None, f"scripts/run.sh ended before it could be killed:\n{log.read_text()[-3000:]}"
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)  # as a power cut or `kill -9` would
    proc.wait()
    assert not all((other / t).exists() for t in targets), "the run finished before it was killed"
    assert list((other / ".snakemake" / "locks").iterdir()), "a killed run leaves Snakemake's lock behind"
    out = subprocess.run(cmd, cwd=other, env=env, capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "removing its lock and resuming it" in out.stderr
    for t in targets:
        pd.testing.assert_frame_equal(*(without_wall_time(pd.read_csv(d / t)) for d in (work, other)),
                                      check_exact=True)


WALL = ("wall_time_s", "wall_mean_s", "wall_median_s")


def without_wall_time(frame):
    """A table without its wall-time columns and rows (the only machine-dependent numbers)."""
    def timing(name) -> bool:
        return name in WALL or str(name).startswith("wall_")  # e.g. su2016 Fig. 2's wall_log_mean

    if "metric" in frame:
        frame = frame[~frame["metric"].map(timing)].reset_index(drop=True)
    return frame.drop(columns=[c for c in frame.columns if timing(c)])


def test_report_builds_and_states_the_preset(work, mirror_run, mirror):
    _snakemake(work, "--report", "report.html", mirror=mirror)
    html = (work / "report.html").read_text(encoding="utf-8", errors="replace")
    assert "baselines" in html and len(html) > 100_000
    assert re.search(r"Preset: (<strong>|\*\*)?test\b", html), "the report states the preset it shows"
    # each preset has its own results directory: a report of a preset that has not run refuses
    out = _snakemake(work, "--report", "other.html", "--config", "preset=quick", mirror=mirror, check=False)
    assert out.returncode != 0 and not (work / "other.html").exists()
    assert "dpclust: no results of the quick preset in results/quick/ to report" in out.stderr


def _tree_digest(root: Path) -> dict[str, str]:
    import hashlib
    return {str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(root.rglob("*")) if f.is_file()}


def test_two_presets_share_a_checkout_without_touching_each_other(work, mirror_run, mirror):
    """A quick-preset item built in the checkout that holds the test preset's results: it writes under
    results/quick/ only, and afterwards the test preset is complete and unchanged (nothing to re-run)."""
    before = _tree_digest(work / "results" / "test")
    quick = plan(load_config(work / "config", overrides={"preset": "quick"})).item("balcan2017", "fig1")
    targets = [quick.table, quick.figure_stem + ".png"]
    assert all(t.startswith("results/quick/") for t in targets)
    out = subprocess.run([*SNAKEMAKE, "-s", str(work / "Snakefile"), "-d", str(work), "--cores", "2", *targets,
                          "--configfile", str(work / "config" / "quick.yaml")],
                         cwd=work, env=_env(work, mirror), capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert all((work / t).is_file() for t in targets)
    assert _tree_digest(work / "results" / "test") == before, "a quick run changed the test preset's files"
    assert _dry(work, mirror=mirror) == set(), "the test preset must still be complete"
