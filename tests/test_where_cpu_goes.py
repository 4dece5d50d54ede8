"""benchmarks/where_cpu_goes.py: how py-spy's samples are put in libraries, and how the groups'
estimates are spread over them (the CPU-hours the summary prints)."""
from __future__ import annotations

from collections import Counter

import pytest

from .conftest import load_benchmark


@pytest.fixture(scope="module")
def where():
    return load_benchmark("where_cpu_goes")


def test_samples_go_to_the_library_of_their_innermost_frame_inside_the_algorithm(where, tmp_path):
    run = ("_measured_runs (benchmarks/where_cpu_goes.py:120);run_spec (dpclust/pipeline/run_job.py:300);"
           "_runs (dpclust/pipeline/run_job.py:252);eugkm (dpclust/su2016/eugkm.py:300)")
    warm_up = "run_spec (dpclust/pipeline/run_job.py:300);_runs (dpclust/pipeline/run_job.py:252)"
    raw = tmp_path / "out.raw"
    raw.write_text("\n".join([
        f"{run};dgemm_kernel (libopenblas64_p-r0.so) 7",
        f"{run};bincount (numpy/_core/_multiarray_umath.cpython-311.so) 5",
        f"{run};random_standard_normal (numpy/random/_generator.cpython-311.so) 2",
        f"{run};sums (dpclust/su2016/eugkm.py:230) 3",
        f"{run};__memmove_avx_unaligned (libc.so.6) 1",
        f"{run};mystery (libfoo.so) 1",
        "load (dpclust/data/store.py:10);read (libhdf5.so) 50",          # outside the algorithm: left out
        f"{warm_up};_compile_bytecode (<frozen importlib._bootstrap_external>:729) 40",   # the warm-up: out
    ]) + "\n")
    counts = where.categorise(raw)
    assert counts == Counter({"BLAS (OpenBLAS)": 7, "NumPy C core": 5, "NumPy random": 2,
                              "Python interpreter": 3, "libc / libm": 1, where.OTHER: 1})


def test_each_groups_estimate_is_spread_over_its_libraries_and_parts_kept_apart(where):
    blas, interp = "BLAS (OpenBLAS)", "Python interpreter"
    sampled = [(("su2016", "fig1", "su2016.eugkm", "adult_num", 5), 3600.0, Counter({blas: 3, interp: 1})),
               (("leaderboard", "table", "su2016.pgkm", "mnist70k", 10), 7200.0, Counter({blas: 1}))]
    summary = where.summarise(sampled)
    assert summary["papers"][blas] == pytest.approx((0.75, 0.75))
    assert summary["papers"][interp] == pytest.approx((0.25, 0.25))
    assert summary["leaderboard"][blas] == pytest.approx((1.0, 2.0))
    assert summary["all"][blas] == pytest.approx((2.75 / 3, 2.75))
    assert summary["all"][interp] == pytest.approx((0.25 / 3, 0.25))
    assert sum(hours for _, hours in summary["all"].values()) == pytest.approx(3.0)


def test_a_groups_floor_is_its_estimate_without_the_interpreters_share(where):
    sampled = [(("su2016", "fig1", "su2016.hybrid", "lifesci", 3), 1800.0,
                Counter({"other native": 8, "Python interpreter": 2})),
               (("lushen2020", "fig7", "lushen2020.privgene", "lifesci", 3), 3600.0, Counter({"BLAS (OpenBLAS)": 5}))]
    got = where.floors(sampled)
    assert [g["group"] for g in got] == ["lushen2020/fig7/lushen2020.privgene/lifesci/3",
                                         "su2016/fig1/su2016.hybrid/lifesci/3"]
    assert got[0]["floor_cpu_hours"] == 1.0 and got[0]["shares"] == {"BLAS (OpenBLAS)": 1.0}
    assert got[1]["cpu_hours"] == 0.5 and got[1]["floor_cpu_hours"] == 0.4 and got[1]["samples"] == 10
    assert got[1]["shares"] == {"other native": 0.8, "Python interpreter": 0.2} and got[1]["part"] == "papers"


def test_groups_whose_code_changed_since_the_estimate_are_marked(where):
    """A group whose algorithm imports a file whose code changed since the estimate's commit is marked
    (its CPU-hours are the older code's); the others are not. Code as the code hashes see it: a
    docstring or comment edit is no change."""
    import subprocess
    from pathlib import Path

    from dpclust.pipeline.codehash import code_text
    from dpclust.pipeline.configuration import load_config

    repo = Path(__file__).resolve().parents[1]
    swap = "src/dpclust/balcan2017/local_swap.py"

    def show(rev):
        return subprocess.run(["git", "show", f"{rev}:{swap}"], cwd=repo, capture_output=True, text=True).stdout

    history = subprocess.run(["git", "log", "--format=%H", "--", swap], cwd=repo, capture_output=True, text=True,
                             check=True).stdout.split()
    last = next(h for h in history if code_text(show(h)) != code_text(show(f"{h}^") or "pass"))  # a code change
    algorithms = load_config(repo / "config", overrides={"preset": "full"})["algorithms"]
    groups = [{"group": "cohenaddad2022/fig2/balcan2017.balcan_kmedian/skin/40"},
              {"group": "su2016/fig1/su2016.dplloyd/adult_num/5"}]
    where.changed_since(groups, algorithms, f"{last}^")
    assert groups[0]["code_changed_since_estimate"] is True
    where.changed_since(groups, algorithms, "HEAD")                          # nothing since: nothing marked
    assert [g["code_changed_since_estimate"] for g in groups] == [False, False]
    assert code_text('"""doc."""\nx = 1  # why\n') == code_text("x = 1\n") != code_text("x = 2\n")
    where.changed_since(groups, algorithms, f"{last}^")
    where.changed_since(groups, algorithms, None)                          # no commit: left as they are
    assert groups[0]["code_changed_since_estimate"] is True
