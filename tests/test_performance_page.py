"""benchmarks/performance_page.py: docs/PERFORMANCE.md is generated from the benchmarks' own output
(benchmarks/results/), and the workflow logs what each local run cost for it."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from dpclust.pipeline import status

from .conftest import load_benchmark

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def page():
    return load_benchmark("performance_page")


def _estimate(**kw) -> dict:
    est = {"commit": "abc1234", "preset": "full", "total_cpu_hours": 4.5, "papers_cpu_hours": 2.9,
           "leaderboard_cpu_hours": 1.4, "by_part_cpu_hours": {"su2016": 2.9, "leaderboard": 1.4, "baselines": 0.2},
           "top_algorithms_cpu_hours": {"su2016.eugkm": 1.1}, "top_groups": [
               {"group": "su2016/fig1/su2016.eugkm/s1/15", "cpu_hours": 0.4, "runs": 30}],
           "skipped_datasets": ["image"], "what": "run jobs only"}
    return dict(est, **kw)


def test_the_page_shows_the_estimate_against_its_targets_and_the_measured_runs(page, tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "estimate_full_protocol.json").write_text(json.dumps(_estimate()))
    log = status.record_invocation(tmp_path / "logs", time.time() - 1800, "quick", "0123456789abcdef",
                                   tmp_path / "no-summary.csv", now=time.time())
    page.add_run(log, tmp_path)
    text = page.render(tmp_path)
    assert "commit abc1234" in text and "| total | 4.50 | ≤ 4.0 | no |" in text
    assert "| the five papers | 2.90 | ≤ 3.0 | yes |" in text and "| the leaderboard | 1.40 | ≤ 1.0 | no |" in text
    assert "su2016/fig1/su2016.eugkm/s1/15" in text and "Not timed (data unavailable offline): image." in text
    assert "| quick | 0123456 |" in text and "| 30.0 min |" in text


def test_the_page_shows_where_the_cpu_goes_and_each_groups_floor(page, tmp_path):
    (tmp_path / "estimate_full_protocol.json").write_text(json.dumps(_estimate()))
    (tmp_path / "where_cpu_goes.json").write_text(json.dumps({
        "commit": "def5678", "estimate_commit": "abc1234", "estimate_cpu_hours": 4.5, "sampled_cpu_hours": 2.0,
        "cover": 0.6, "after": 0.0,
        "seconds_per_group": 3.0, "gemm_gflops": {"float64 2000 x 2000 product": 40.0},
        "groups": [{"group": "su2016/fig1/su2016.eugkm/s1/15", "part": "papers", "cpu_hours": 2.0, "samples": 100,
                    "shares": {"BLAS (OpenBLAS)": 0.5, "NumPy C core": 0.2, "NumPy random": 0.1,
                               "Python interpreter": 0.2}, "floor_cpu_hours": 1.6}]}))
    text = page.render(tmp_path)
    assert "each costly group's floor (commit def5678)" in text and "(commit abc1234); the shares" in text
    assert "| su2016/fig1/su2016.eugkm/s1/15 | 2.00 | 50 | 30 | 0 | 0 | 0 | 20 | 1.60 |" in text
    assert "2.00 CPU-hours estimated, 1.60 at the floor (20.0 % is the interpreter's)" in text
    assert "float64 2000 x 2000 product 40.0 GFLOP/s" in text


def test_the_page_shows_float32_labels_against_float64_and_where_they_do_not_pay(page, tmp_path):
    row = {"data": "MNIST 60,000 x 784", "k": 10, "ceiling": 0.66, "ratio": 1.03, "same_labels": True,
           "redone_share": 0.003, "lloyd_step_ratio": 1.14}
    (tmp_path / "float32_labels.json").write_text(json.dumps({
        "commit": "def5678", "rows": [row, dict(row, k=50, ratio=0.65, lloyd_step_ratio=0.76)]}))
    text = page.render(tmp_path)
    assert "## Float32 labels with a certificate (commit def5678)" in text
    assert "| MNIST 60,000 x 784 | 10 | 0.66 | 1.03 | yes | 0.300 % | 1.14 |" in text
    assert "slower with them in 1 of 2 cases, MNIST at k = 10 (the leaderboard's) among them (1.14)" in text


def _resumed_checkout(root: Path) -> Path:
    """A checkout whose full run took two invocations: three jobs' benchmarks, two Snakemake logs, a
    claim summary of two holds."""
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for rel, row in (("runs/a/b.tsv", "100.0\t0:01:40\t300.0\t0\t0\t0\t0\t0\t99\t95.5"),
                     ("aggregate/a/fig1.tsv", "3.0\t0:00:03\t1024.0\t0\t0\t0\t0\t0\t90\t2.5"),
                     ("checks/summary.tsv", "0.1\t0:00:00\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA")):
        f = root / "logs" / "benchmarks" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(header + row + "\n")
    logs = root / ".snakemake" / "log"
    logs.mkdir(parents=True)
    for name, span in (("2026-11-30T100000.000001.snakemake.log", 600), ("2026-12-01T090000.5.snakemake.log", 60)):
        f = logs / name
        f.write_text("log")
        start = time.mktime(time.strptime(name.split(".")[0], "%Y-%m-%dT%H%M%S"))
        os.utime(f, (start + span, start + span))
    (root / "results" / "full" / "checks").mkdir(parents=True)
    (root / "results" / "full" / "checks" / "summary.csv").write_text("kind,result\npaper,holds\npaper,holds\n")
    return root


def test_a_run_resumed_over_several_invocations_is_summed_from_its_jobs(page, tmp_path):
    root = _resumed_checkout(tmp_path / "checkout")
    got = page.measured_run(root, "full")
    assert got["cpu_s"] == 98.0 and got["wall_s"] == 660.0 and got["jobs"] == 3 and got["segments"] == 2
    assert got["peak_bytes"] == 1024 * 2 ** 20 and got["claims"] == "the papers' claims: 2 checked: holds 2"
    out = page.add_measured(root, "full", tmp_path / "results")
    assert json.loads(out.read_text())["cpu_s"] == 98.0
    text = page.render(tmp_path / "results")
    assert "| full | unknown" in text and "ran in 2 Snakemake invocations" in text and "its 3 jobs'" in text


def test_a_run_done_in_one_invocation_is_measured_as_the_workflow_logged_it(page, tmp_path):
    """One invocation at the checkout's commit: its invocation log (Snakemake's own CPU included) is
    what the run cost, not the sum of its jobs' benchmarks, and no "stopped and resumed" sentence."""
    import subprocess

    root = _resumed_checkout(tmp_path / "checkout")
    sorted((root / ".snakemake" / "log").glob("*.log"))[0].unlink()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    logged = {"preset": "full", "commit": head, "finished_utc": "2026-12-01T04:40:33Z", "wall_s": 70.0,
              "cpu_s": 120.0, "peak_bytes": 2 ** 30, "claims": "x"}
    (root / "logs" / "invocations").mkdir(parents=True)
    (root / "logs" / "invocations" / "2026-12-01T044033Z.json").write_text(json.dumps(logged))
    assert page.measured_run(root, "full") == logged
    logged["commit"] = "another"                          # a log of another commit: summed from the jobs
    (root / "logs" / "invocations" / "2026-12-01T044033Z.json").write_text(json.dumps(logged))
    assert page.measured_run(root, "full")["cpu_s"] == 98.0


def test_the_workflow_logs_what_a_run_cost(tmp_path):
    started = time.time() - 60
    out = status.record_invocation(tmp_path, started, "test", "c0ffee", None, now=started + 60)
    got = json.loads(out.read_text())
    assert got["preset"] == "test" and got["commit"] == "c0ffee" and got["wall_s"] == 60.0
    assert got["cpu_s"] > 0 and got["peak_bytes"] > 0 and got["finished_utc"].endswith("Z")


def test_a_file_that_is_not_an_invocation_log_is_refused(page, tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"preset": "quick"}))
    with pytest.raises(SystemExit, match="not a workflow invocation log"):
        page.add_run(bad, tmp_path)


def test_the_committed_page_is_the_generated_one(page):
    """docs/PERFORMANCE.md is exactly what the script makes of benchmarks/results/ (never hand-edited)."""
    if not (REPO / "benchmarks" / "results" / "estimate_full_protocol.json").exists():
        pytest.skip("no estimate committed yet")
    assert (REPO / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8") == page.render()


def _summary(path: Path, verdict: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("kind,paper,item,claim,result,quantity,ci_low,ci_high,why\n"
                    f"paper,su2016,fig1,GkM is the worst,{verdict},1.5,1.2,1.8,cells 3 of 3\n"
                    "paper,su2016,fig1,DPLloyd is best,holds,2.0,1.5,2.5,cells 2 of 2\n")
    return path


def _finished_full_run(tmp_path: Path) -> tuple[Path, Path]:
    """(a checkout whose full run finished, with its results page and a claim summary where GkM's
    claim does not hold, the quick run's summary where it holds)."""
    root = _resumed_checkout(tmp_path / "checkout")
    _summary(root / "results" / "full" / "checks" / "summary.csv", "does not hold")
    (root / "results" / "full" / "RESULTS.md").write_text("# Results of the full preset\n\n## The papers' claims\n")
    return root, _summary(tmp_path / "quick" / "summary.csv", "holds")


def test_a_published_run_becomes_its_docs_page_with_its_cost_and_its_verdicts_beside_another_runs(page, tmp_path):
    root, quick = _finished_full_run(tmp_path)
    results = tmp_path / "results"
    written = page.publish(root, "full", quick, results=results)
    assert sorted(p.name for p in written) == ["full.compare.md", "full.json", "full.results.md"]
    text = page.render_results("full", results)
    assert text.startswith("# The full preset, run end to end\n") and "do not edit by hand" in text
    assert "| full | unknown |" in text and "| 11.0 min | 1.6 min | 1.07 GB |" in text
    assert "ran in 2 Snakemake invocations" in text
    assert "## Its verdicts beside the quick run's" in text
    assert "### Checks whose verdict differs (1: the papers' claims and ours, by kind)" in text
    assert "| su2016 | fig1 | GkM is the worst | paper | holds | does not hold |" in text
    assert "## Its results page" in text and "### The papers' claims" in text
    assert "Results of the full preset" not in text        # its title: the page's own title replaces it
    assert str(tmp_path) not in text                       # no local path in a committed page
    page.publish(root, "full", None, results=results)      # published again without a comparison: none is kept
    assert not (results / "runs" / "full.compare.md").exists() and "Its verdicts beside" not in page.render_results(
        "full", results)
    assert page.results_page_path("full").name == "FULL_PROTOCOL.md"
    assert page.results_page_path("quick").name == "RESULTS_QUICK.md"


def test_runs_of_some_papers_are_published_as_parts_of_the_presets_page(page, tmp_path):
    """A run limited to some papers (a part of the full protocol one session can finish) is published
    with its papers: the page shows each part with its commit, cost and verdicts, names the papers no
    part covers, and a newer part replaces an older one that shares a paper."""
    root, quick = _finished_full_run(tmp_path)
    with open(quick, "a") as fh:
        fh.write("paper,nguyen2021,fig1,Ours is lower,holds,0.1,0.0,0.2,cells 1 of 1\n")
    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    (results / "estimate_full_protocol.json").write_text(json.dumps(_estimate()))
    with pytest.raises(SystemExit, match="does not name"):
        page.publish(root, "full", quick, results=results, part=["nguyen2021"])
    written = page.publish(root, "full", quick, results=results, part=["su2016"])
    assert sorted(p.name for p in written) == ["full.su2016.compare.md", "full.su2016.json", "full.su2016.results.md"]
    assert page.published_presets(results) == ["full"] and page.published_runs("full", results) == ["full.su2016"]
    text = page.render_results("full", results)
    assert text.startswith("# The full preset, run in parts\n")
    missing = [part for part in (
        "do not edit by hand", "## Part: su2016 (commit unknown)", "### What the run cost",
        "| full (su2016) | unknown |",
        "Estimated for su2016 (commit abc1234, run jobs only): 2.90 CPU-hours; measured (every job): 0.03",
        "#### Checks whose verdict differs (1: ") if part not in text]
    assert not missing
    assert "nguyen2021" not in (results / "runs" / "full.su2016.compare.md").read_text()   # cut to the part
    assert ("Not yet run in a published part: baselines (estimated 0.20 CPU-hours), balcan2017" in text
            and "leaderboard (estimated 1.40 CPU-hours)" in text and "git show 51a7532:" in text)
    assert "#### The papers' claims" in text and str(tmp_path) not in text
    assert "| full (su2016) |" in page.render(results)
    page.publish(root, "full", None, results=results, part=["su2016", "balcan2017"])   # shares su2016: replaces it
    assert page.published_runs("full", results) == ["full.balcan2017+su2016"]
    assert not (results / "runs" / "full.balcan2017+su2016.compare.md").exists()
    page.publish(root, "full", None, results=results)                                  # a whole run: replaces all
    assert page.published_runs("full", results) == ["full"]
    assert page.render_results("full", results).startswith("# The full preset, run end to end\n")


def test_a_run_of_some_items_of_a_paper_is_published_as_an_item_part(page, tmp_path):
    """A run of some items (`--config 'items=[paper/item, ...]'`) is published with `--part paper/item`:
    claims of another item are refused, the comparison is cut to its items, the page names the items no
    part covers yet, and a newer part replaces an older one only where they share an item or paper."""
    root, quick = _finished_full_run(tmp_path)
    with open(quick, "a") as fh:
        fh.write("paper,su2016,fig3,Noise dominates,holds,0.1,0.0,0.2,cells 1 of 1\n")
    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    (results / "estimate_full_protocol.json").write_text(json.dumps(dict(
        _estimate(), by_item_cpu_hours={"su2016/fig1": 2.1, "su2016/fig3": 0.8})))
    with pytest.raises(SystemExit, match=r"claims of \['su2016/fig1'\], which --part su2016/fig3 does not name"):
        page.publish(root, "full", quick, results=results, part=["su2016/fig3"])
    written = page.publish(root, "full", quick, results=results, part=["su2016/fig1", "su2016/fig5"])
    assert sorted(p.name for p in written) == ["full.su2016-fig1+su2016-fig5.compare.md",
                                               "full.su2016-fig1+su2016-fig5.json",
                                               "full.su2016-fig1+su2016-fig5.results.md"]
    assert "fig3" not in (results / "runs" / "full.su2016-fig1+su2016-fig5.compare.md").read_text()
    text = page.render_results("full", results)
    items = [i for i in page._paper_items("su2016") if i not in ("fig1", "fig5")]
    assert f"su2016 (items {', '.join(items)})" in text
    assert "## Part: su2016/fig1, su2016/fig5 (commit unknown)" in text
    assert "Estimated for su2016/fig1, su2016/fig5" not in text and "Estimated for su2016/fig1 (" in text
    _summary(root / "results" / "full" / "checks" / "summary.csv", "holds").write_text(
        "kind,paper,item,claim,result,quantity,ci_low,ci_high,why\n"
        "paper,su2016,fig3,Noise dominates,holds,0.1,0.0,0.2,cells 1 of 1\n")
    page.publish(root, "full", None, results=results, part=["su2016/fig3"])          # another item: both stay
    assert page.published_runs("full", results) == ["full.su2016-fig1+su2016-fig5", "full.su2016-fig3"]
    page.publish(root, "full", None, results=results, part=["su2016"])               # the whole paper: replaces both
    assert page.published_runs("full", results) == ["full.su2016"]
    assert page.overlaps(["su2016/fig1"], ["su2016/fig1", "su2016/fig2"])
    assert not page.overlaps(["su2016/fig1"], ["su2016/fig2", "balcan2017"])


def test_an_unfinished_run_is_not_published(page, tmp_path):
    with pytest.raises(SystemExit, match="has not finished"):
        page.publish(_resumed_checkout(tmp_path / "checkout"), "full", results=tmp_path / "results")


def test_the_committed_results_pages_are_the_generated_ones(page):
    """Each published run's docs page is exactly what the script makes of benchmarks/results/runs/."""
    presets = page.published_presets()
    if not presets:
        pytest.skip("no run published yet")
    for preset in presets:
        assert page.results_page_path(preset).read_text(encoding="utf-8") == page.render_results(preset)


def test_the_full_page_tallies_the_papers_claims_over_all_its_parts(page, tmp_path):
    """The page of a preset run in parts sums each paper's verdicts over the parts that ran it, and lists
    every not decidable claim with its runs and why it stopped, read from the parts' results pages."""
    runs = tmp_path / "runs"
    runs.mkdir()
    pages = {
        "full.a": ("abc1234", ["a"], "| a | 2 | 1 | 0 | 1 | 0 |",
                   "| fig1 | X \\| Y beats Z | not decidable | 1 [0, 2] | 3 | rule | why | robust | 4× (look 2) |",
                   "| fig1 | X \\| Y beats Z | not decidable | 4× (look 2) | cap: CPU | 0.1 |"),
        "full.a-fig9+b": ("def5678", ["a/fig9", "b"], "| a | 1 | 1 | 0 | 0 | 0 |\n| b | 1 | 0 | 1 | 0 | 0 |",
                          "| fig9 | W holds | holds | 1 | 1 | rule | | | 1× |", ""),
    }
    for key, (commit, part, tally, claim, look) in pages.items():
        (runs / f"{key}.json").write_text(json.dumps({"commit": commit, "part": part, "cpu_s": 3600.0,
                                                      "wall_s": 1800.0, "peak_bytes": 1.5e9}))
        (runs / f"{key}.results.md").write_text(
            "# Results\n\n## The papers' claims\n\n| paper | claims | holds | does not hold | not decidable | "
            f"not evaluable |\n|---|---|---|---|---|---|\n{tally}\n\n### a\n\n| item | claim | result | quantity [CI] "
            f"| cells | rule | why | sensitivity | runs |\n|---|---|---|---|---|---|---|---|---|\n{claim}\n\n"
            "## Claims decided in replication looks\n\n| item | claim | result | runs | stopped | added CPU-h (item) |"
            f"\n|---|---|---|---|---|---|\n{look}\n")
    keys = sorted(pages)
    lines = page.all_parts_section(keys, [json.loads((runs / f"{k}.json").read_text()) for k in keys], runs)
    text = "\n".join(lines)
    assert "| a | a (abc1234); a/fig9, b (def5678) | 3 | 2 | 0 | 1 | 0 |" in text
    assert "| b | a/fig9, b (def5678) | 1 | 0 | 1 | 0 | 0 |" in text
    assert "| all |  | 4 | 2 | 1 | 1 | 0 |" in text
    assert "Not decidable (1)" in text and "| a | fig1 | X \\| Y beats Z | 4× (look 2) | cap: CPU |" in text
    assert "What the 2 parts cost together: 2.00 CPU-hours (every job), 60.0 min of wall time" in text
    assert "largest process 1.50 GB." in text                 # no estimate given: none quoted
