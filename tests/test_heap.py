"""dpclust.pipeline.heap: the compute commands keep freed memory for reuse, and that changes no result."""
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from dpclust.pipeline import cli, heap

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config"
GLIBC = platform.libc_ver()[0] == "glibc"

#: Runs `dpclust run` in a fresh process, with the heap setting applied first or not.
RUN = """
import sys
from dpclust.pipeline.heap import retain_freed_memory
if sys.argv[1] == "retain" and not retain_freed_memory():
    sys.exit(9)
from dpclust.pipeline.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture(scope="module")
def shuttle_h5(prepared_from_mirror):
    return prepared_from_mirror("shuttle")


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's (mallopt); elsewhere it is not applied")
@pytest.mark.parametrize("switch, applied", [(None, True), ("1", True), ("0", False)])
def test_applies_on_glibc_unless_switched_off(switch, applied):
    env = {k: v for k, v in os.environ.items() if k != "DPCLUST_KEEP_FREED_MEMORY"}
    if switch is not None:
        env["DPCLUST_KEEP_FREED_MEMORY"] = switch
    done = subprocess.run([sys.executable, "-c", "from dpclust.pipeline.heap import retain_freed_memory as r; "
                           "raise SystemExit(0 if r() else 1)"], env=env, check=False)
    assert done.returncode == (0 if applied else 1)


@pytest.mark.slow
@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's (mallopt); elsewhere it is not applied")
@pytest.mark.parametrize("algorithm", ["su2016.gkm3k",      # many small blocks: block temporaries
                                       "baselines.kmeanspp"])   # whole-data temporaries, pass after pass
def test_results_are_the_same_bytes(shuttle_h5, tmp_path, algorithm):
    records = []
    for mode in ("default", "retain"):
        out = tmp_path / f"{mode}.json"
        args = ["run", "--config-dir", str(CONFIG), "--dataset", "shuttle", "--algorithm", algorithm,
                "--k", "5", "--epsilon", "1.0" if algorithm != "baselines.kmeanspp" else "none", "--seed", "3",
                "--repetitions", "2",
                "--transform", "minmax_pm1", "--data", str(shuttle_h5), "--out", str(out)]
        done = subprocess.run([sys.executable, "-c", RUN, mode, *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        record = json.loads(out.read_text())
        for run in record["runs"]:
            run.pop("wall_time_s")
        records.append(record)
    assert records[0]["runs"] and records[0] == records[1]


def test_only_a_process_of_its_own_applies_it(monkeypatch, tmp_path):
    """`main()` from the command line (argv None) applies it for run and audit; a caller's own
    process calling main(argv) keeps its allocator as it was."""
    calls = []
    monkeypatch.setattr(heap, "retain_freed_memory", lambda: calls.append(1) or True)
    bad = ["run", "--config-dir", str(CONFIG), "--spec", "{}", "--data", str(tmp_path / "missing.h5"),
           "--out", str(tmp_path / "r.json")]
    cli.main(bad)
    assert calls == []
    monkeypatch.setattr(sys, "argv", ["dpclust", *bad])
    cli.main()
    assert calls == [1]
    monkeypatch.setattr(sys, "argv", ["dpclust", "list", "algorithms"])
    cli.main()
    assert calls == [1]
