"""scripts/run.sh resumes a killed run, and never unlocks a live one.

Each test runs the real scripts/run.sh (copied into a temporary directory, DPCLUST_SKIP_SETUP=1) with a
fake `snakemake` first on PATH that records its arguments. A "live run" is a process whose command
line is snakemake and whose working directory is that directory, as a real one's is: the fake
entry-point script run by Python (as `.venv/bin/snakemake` is), a program named snakemake, or
`python -m snakemake`.
"""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not Path("/proc/self/cwd").exists() or shutil.which("flock") is None,
                                reason="needs Linux /proc and flock")

FAKE = f"""#!{sys.executable}
import os, sys, time
with open(os.environ["FAKE_SNAKEMAKE_LOG"], "a") as fh:
    fh.write(" ".join(sys.argv[1:]) + "\\n")
if "--fake-live" in sys.argv:
    time.sleep(300)
"""


@pytest.fixture
def site(tmp_path):
    """(work dir with scripts/run.sh and a stale lock, bin dir with the fake snakemake, env)."""
    work = tmp_path / "work"
    (work / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "run.sh", work / "scripts" / "run.sh")
    locks = work / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text(str(work / "Snakefile") + "\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "snakemake"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    (tmp_path / "pymod").mkdir()  # `python -m snakemake` runs the same fake
    (tmp_path / "pymod" / "snakemake.py").write_text(FAKE.split("\n", 1)[1])
    env = dict(os.environ, DPCLUST_SKIP_SETUP="1", FAKE_SNAKEMAKE_LOG=str(tmp_path / "calls.log"),
               PATH=os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    env.pop("DPCLUST_PROC_DIR", None)
    return work, bin_dir, env


def _calls(env) -> list[str]:
    path = Path(env["FAKE_SNAKEMAKE_LOG"])
    return path.read_text().splitlines() if path.exists() else []


def _run(work, env, *args, proc_dir=None):
    if proc_dir is not None:
        env = dict(env, DPCLUST_PROC_DIR=str(proc_dir))
    return subprocess.run(["bash", str(work / "scripts" / "run.sh"), *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def live(site, tmp_path):
    """start(how, cwd) starts a fake live snakemake; every one started is killed at the end."""
    work, bin_dir, env = site
    procs = []

    def start(how, cwd):
        cmd = {"entry_point": [str(bin_dir / "snakemake"), "--fake-live"],
               "program_name": ["bash", "-c", "exec -a snakemake sleep 300"],
               "module": [sys.executable, "-u", "-m", "snakemake", "--fake-live"]}[how]
        proc_env = dict(env, PYTHONPATH=str(tmp_path / "pymod"))
        procs.append(subprocess.Popen(cmd, cwd=cwd, env=proc_env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        proc = procs[-1]
        deadline = time.time() + 30
        while True:  # wait until it runs what it will run (exec done, fake started)
            cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
            if b"snakemake" in cmdline[0] or (how != "program_name" and "--fake-live" in " ".join(_calls(env))):
                break
            assert proc.poll() is None and time.time() < deadline, "the fake live snakemake did not start"
            time.sleep(0.05)
        return proc

    try:
        yield start
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)


@pytest.mark.parametrize("how", ["entry_point", "program_name", "module"])
def test_refuses_while_a_snakemake_runs_in_the_directory(site, live, how):
    work, _, env = site
    proc = live(how, work)
    before = _calls(env)
    out = _run(work, env, "--configfile", "config/quick.yaml")
    assert out.returncode == 1, out.stderr
    assert out.stderr.strip() == (f"error: a snakemake run is active in {work} (pid {proc.pid}); "
                                  "wait for it to finish, or stop it first")
    assert _calls(env) == before, "run.sh must not call snakemake (no --unlock, no second scheduler)"
    assert (work / ".snakemake" / "locks" / "0.input.lock").exists(), "the live run's lock was touched"
    assert proc.poll() is None, "the live run must keep running"


def test_refuses_a_second_scheduler_even_without_locks(site, live):
    work, _, env = site
    shutil.rmtree(work / ".snakemake" / "locks")
    proc = live("entry_point", work)
    out = _run(work, env)
    assert out.returncode == 1 and f"(pid {proc.pid})" in out.stderr, out.stderr
    assert _calls(env) == ["--fake-live"]


def test_a_stale_lock_is_removed_and_the_run_resumed(site):
    work, _, env = site
    out = _run(work, env, "--configfile", "config/quick.yaml")
    assert out.returncode == 0, out.stderr
    assert "a previous run was killed; removing its lock and resuming it" in out.stderr
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip() or "1"
    assert _calls(env) == ["--unlock --configfile config/quick.yaml",
                           f"--cores {nproc} --rerun-incomplete --configfile config/quick.yaml"]
    assert (work / ".snakemake" / "locks" / "0.input.lock").exists()  # (the fake --unlock removes nothing)


def test_without_locks_the_run_starts_without_unlocking(site):
    work, _, env = site
    shutil.rmtree(work / ".snakemake" / "locks")
    out = _run(work, env, "--cores", "1")
    assert out.returncode == 0, out.stderr
    assert _calls(env) == ["--rerun-incomplete --cores 1"]


def test_a_snakemake_in_another_directory_does_not_block(site, live, tmp_path):
    work, _, env = site
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    live("entry_point", elsewhere)
    out = _run(work, env, "--cores", "1")
    assert out.returncode == 0, out.stderr
    assert _calls(env)[1:] == ["--unlock --cores 1", "--rerun-incomplete --cores 1"]


def test_without_proc_a_lock_is_never_removed(site, tmp_path):
    work, _, env = site
    out = _run(work, env, proc_dir=tmp_path / "no-proc")
    assert out.returncode == 1
    assert "snakemake --unlock" in out.stderr and "no /proc" in out.stderr and len(out.stderr.splitlines()) == 1
    assert _calls(env) == []
    assert (work / ".snakemake" / "locks" / "0.input.lock").exists()
    # with no lock left there is nothing to decide: the run starts
    shutil.rmtree(work / ".snakemake" / "locks")
    assert _run(work, env, "--cores", "1", proc_dir=tmp_path / "no-proc").returncode == 0
    assert _calls(env) == ["--rerun-incomplete --cores 1"]


def test_a_second_run_script_is_refused_by_the_flock(site):
    work, _, env = site
    import fcntl

    with open(work / ".snakemake" / "dpclust-run.flock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running scripts/run.sh holds it
        out = _run(work, env)
    assert out.returncode == 1 and "another scripts/run.sh is running" in out.stderr, out.stderr
    assert _calls(env) == []


def test_a_real_snakemake_run_is_detected(site):
    """The same refusal with a real Snakemake holding its lock (started as a user would, not by run.sh)."""
    import signal

    work, _, env = site
    real = Path(sys.executable).parent / "snakemake"
    if not real.exists():
        pytest.skip("no snakemake next to this Python")
    shutil.rmtree(work / ".snakemake" / "locks")
    (work / "Snakefile").write_text('rule a:\n    output: "a"\n    shell: "sleep 300; touch a"\n')
    proc = subprocess.Popen([str(real), "--cores", "1"], cwd=work, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 120
        while not list((work / ".snakemake" / "locks").glob("*.lock")):
            assert proc.poll() is None and time.time() < deadline, "snakemake did not start"
            time.sleep(0.1)
        out = _run(work, env, "--cores", "1")
        assert out.returncode == 1, out.stderr
        assert out.stderr.strip() == (f"error: a snakemake run is active in {work} (pid {proc.pid}); "
                                      "wait for it to finish, or stop it first")
        assert _calls(env) == []
        assert list((work / ".snakemake" / "locks").glob("*.lock")), "the live run's lock was touched"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
