"""A new user's faults and bad inputs each get one line naming the thing and the fix.

The cases of docs' first-contact catalogue (bad config values, a missing or broken config file, a
bad `--spec`, bad estimator input) that used to end in a traceback, a misleading line or silence.
Each test breaks one thing in a copy of config/ (or calls the CLI, the preflight or an estimator
directly: no Snakemake run, no pipeline job) and checks the message's words.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.pipeline import status
from dpclust.pipeline.cli import check_snakemake_args, main
from dpclust.pipeline.configuration import load_config, resolve_algorithm

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def config():
    return load_config(REPO / "config", overrides={"preset": "test"})


def _one_line(fn, *args, **kwargs) -> str:
    with pytest.raises(DPClustError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message, message
    return message


def _set_test_group(cfg_dir, paper, item, group, **values):
    """Set `values` under items.<item>.presets.test.runs.<group> of config/papers/<paper>.yaml."""
    path = cfg_dir / "papers" / f"{paper}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    runs = data["items"][item].setdefault("presets", {}).setdefault("test", {}).setdefault("runs", {})
    runs.setdefault(group, {}).update(values)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def _test_error(cfg_dir) -> str:
    return _one_line(load_config, cfg_dir, overrides={"preset": "test"})


# --- config files -------------------------------------------------------------------------------
def test_a_missing_config_yaml_is_named(cfg_dir):
    (cfg_dir / "config.yaml").unlink()
    # Snakemake skips a missing `configfile:` and hands over only the preset's keys
    message = _one_line(load_config, cfg_dir, base={"preset": "test"})
    assert "config.yaml does not exist" in message and "restore it" in message, message


def test_a_config_dir_that_does_not_exist_is_named(tmp_path):
    message = _one_line(load_config, tmp_path / "confg")
    assert "config directory" in message and "confg does not exist" in message, message
    assert "restore" not in message, message


def test_a_data_mirror_that_is_no_directory_is_refused(cfg_dir, tmp_path):
    message = _one_line(load_config, cfg_dir, overrides={"preset": "test", "data_mirror": str(tmp_path / "nope")})
    assert "'data_mirror'" in message and "is not a directory" in message and "null" in message, message


def test_a_yaml_error_is_one_line_with_its_place(cfg_dir):
    path = cfg_dir / "papers" / "baselines.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("seed_block: 2}}", "seed_block: 2}", 1), encoding="utf-8")
    message = _test_error(cfg_dir)
    assert "baselines.yaml: not valid YAML at line" in message and "column" in message, message


def test_a_misspelt_top_level_key_names_the_right_one(cfg_dir):
    message = _one_line(load_config, cfg_dir, overrides={"download": {"timeout": 3}})
    assert "'timeout' was unexpected" in message and "did you mean timeout_s?" in message, message


# --- run groups ----------------------------------------------------------------------------------
@pytest.mark.parametrize("key, value, hint", [
    ("epsilon", "0.5", "write it without quotes"),
    ("repetitions", "2", "write it without quotes"),
    ("epsilon", "1e-3", "YAML reads 1e-3 as a string: write 1.0e-3"),  # PyYAML's reading of 1e-3, quoted or not
])
def test_a_number_written_as_a_string_says_how_to_write_it(cfg_dir, key, value, hint):
    item, group = ("fig3", "block_size") if key == "epsilon" else ("table", "real")
    _set_test_group(cfg_dir, "su2016" if key == "epsilon" else "baselines", item, group, **{key: value})
    message = _test_error(cfg_dir)
    assert f"runs/{group}/{key}" in message and hint in message, message


@pytest.mark.parametrize("delta", ["n^-", "1/n^2"])
def test_a_malformed_delta_says_the_allowed_forms_not_a_regex(cfg_dir, delta):
    _set_test_group(cfg_dir, "su2016", "fig3", "block_size", delta=delta)
    message = _test_error(cfg_dir)
    assert "runs/block_size/delta" in message and "is not of the allowed form" in message, message
    assert "'n^-1.5'" in message and "'c/n'" in message and "[0-9" not in message, message


def test_a_delta_the_pattern_admits_but_no_number_is_refused_when_planning(cfg_dir):
    _set_test_group(cfg_dir, "su2016", "fig3", "block_size", delta="1e/n")
    message = _test_error(cfg_dir)
    assert "runs/block_size/delta" in message and "'1e/n' is not a number" in message, message
    assert "'0.1/n'" in message, message


def test_a_delta_of_n_above_one_on_a_dataset_is_refused_when_planning(cfg_dir):
    _set_test_group(cfg_dir, "su2016", "fig3", "block_size", datasets=["s1"], delta="9000/n")
    message = _test_error(cfg_dir)
    assert "runs/block_size/delta" in message and "dataset 's1'" in message, message
    assert "1.8 for n = 5000" in message and "0 <= delta < 1" in message, message


def test_params_for_an_algorithm_the_group_does_not_run_are_refused(cfg_dir):
    # the group is a sweep, which used to drop these params without a word
    _set_test_group(cfg_dir, "su2016", "fig3", "block_size", params={"su2016.gkmm": {"block_restarts": 2}})
    message = _test_error(cfg_dir)
    assert "runs/block_size/params" in message and "'su2016.gkmm' is not one of the group's algorithms" in message
    assert "did you mean su2016.gkm" in message, message


def test_a_bare_dataset_name_shows_the_list_form(cfg_dir):
    _set_test_group(cfg_dir, "baselines", "table", "real", datasets="iris")
    message = _test_error(cfg_dir)
    assert "runs/real/datasets" in message and "list of (string | {family: ...})" in message, message


def test_a_misspelt_group_name_in_a_preset_names_the_item_groups(cfg_dir):
    _set_test_group(cfg_dir, "baselines", "table", "reel", repetitions=2)
    message = _test_error(cfg_dir)
    assert "preset 'test'" in message and "no run group 'reel'" in message, message
    assert "did you mean real?" in message and "required key" in message, message


def test_an_unknown_algorithm_names_close_matches(config):
    message = _one_line(resolve_algorithm, config, "baselines.loyd", where="baselines/table/runs/real")
    assert "unknown algorithm 'baselines.loyd'; did you mean baselines.lloyd" in message, message


# --- python -m dpclust.pipeline run ----------------------------------------------------------------
RUN = ["run", "--dataset", "iris", "--k", "3", "--transform", "minmax_pm1"]


@pytest.mark.parametrize("args, words", [
    (["run", "--spec", "@/no/such/spec.json"], ["--spec @/no/such/spec.json", "cannot read", "@FILE"]),
    (["run", "--spec", "{}"], ["--spec names no dataset", "--dataset"]),
    ([*RUN, "--algorithm", "su2016.dplloid", "--epsilon", "1"],
     ["--algorithm: unknown algorithm 'su2016.dplloid'", "did you mean su2016.dplloyd"]),
    ([*RUN, "--algorithm", "baselines.lloyd", "--epsilon", "1"],
     ["--epsilon 1", "baselines.lloyd is not private", "--epsilon none"]),
])
def test_cli_run_bad_input_is_one_error_line(tmp_path, capsys, args, words):
    out = tmp_path / "run.json"
    assert main([*args, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    for word in words:
        assert word in err, err
    assert not out.exists()


# --- scripts/run.sh's preflight ----------------------------------------------------------------
@pytest.mark.parametrize("argv, words", [
    (["-n", "--configfile", "config/tset.yaml"], ["--configfile config/tset.yaml: no such file", "config/test.yaml"]),
    (["-n", "--configfile=config/tset.yaml"], ["--configfile config/tset.yaml: no such file"]),
    (["-n", "--configfile", "config/test.yaml", "results/test/RESULTS.md"],
     ["'results/test/RESULTS.md' (a target?)", "put targets before --configfile"]),
    (["-n", "results/full/RESULTS.md", "--configfile", "config/test.yaml"],
     ["target results/full/RESULTS.md is a file of the full preset", "test preset", "results/test/RESULTS.md"]),
])
def test_preflight_names_a_bad_configfile(cfg_dir, monkeypatch, argv, words):
    monkeypatch.chdir(cfg_dir.parent)
    message = _one_line(check_snakemake_args, ["--", *argv])
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("name, edit, words", [
    ("test.yaml", lambda t: t + "\tbase_seed: 1\n", ["config/test.yaml: not valid YAML at line", "indent with spaces"]),
    ("config.yaml", lambda t: t.replace("leaderboard, audit]", "leaderboard, audit"),
     ["config/config.yaml: not valid YAML at line"]),
    ("config.yaml", None, ["config/config.yaml does not exist", "restore it"]),
])
def test_preflight_names_a_broken_config_file(cfg_dir, monkeypatch, name, edit, words):
    monkeypatch.chdir(cfg_dir.parent)
    path = cfg_dir / name
    if edit is None:
        path.unlink()
    else:
        path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    message = _one_line(check_snakemake_args, ["--", "-n", "--configfile", "config/test.yaml"])
    for word in words:
        assert word in message, message


def test_preflight_passes_the_shipped_config(monkeypatch):
    monkeypatch.chdir(REPO)
    check_snakemake_args(["--", "-n", "--configfile", "config/test.yaml"])
    check_snakemake_args(["--", "--cores", "2"])
    check_snakemake_args(["--", "-n", "results/test/RESULTS.md", "--configfile", "config/test.yaml"])


def test_run_script_stops_at_a_missing_configfile_before_snakemake(tmp_path):
    work = tmp_path / "work"
    (work / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "run.sh", work / "scripts" / "run.sh")
    shutil.copytree(REPO / "config", work / "config")
    (work / "Snakefile").write_text("")
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / ".venv" / "bin" / "python").symlink_to(sys.executable)
    env = dict(os.environ, DPCLUST_SKIP_SETUP="1",
               PYTHONPATH=os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(["bash", "scripts/run.sh", "-n", "--configfile", "config/tset.yaml"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("error: --configfile config/tset.yaml: no such file (the presets: "
                                   "config/quick.yaml, config/test.yaml; the full protocol needs no --configfile)")


# --- the data mirror from the environment ------------------------------------------------------
def test_a_mirror_that_is_no_directory_is_named_when_a_source_must_be_fetched(config, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(status, "_resolving", lambda hosts, timeout=0: set())
    status.fetch_attempts(config["registry"], ["iris"], tmp_path / "raw", str(tmp_path / "no_mirror"))
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpclust: the data mirror") and "is not a directory; ignoring it" in err, err
    assert "DPCLUST_DATA_MIRROR" in err and "unset it" in err and "\n" not in err, err
    # nothing to fetch: nothing to say
    raw = tmp_path / "raw2" / "iris"
    raw.mkdir(parents=True)
    (raw / "manifest.json").write_text(json.dumps({"status": "ok", "attempt": "mirror"}))
    status.fetch_attempts(config["registry"], ["iris"], tmp_path / "raw2", str(tmp_path / "no_mirror"))
    assert capsys.readouterr().err == ""


# --- estimators --------------------------------------------------------------------------------
X = np.random.default_rng(0).uniform(0, 1, (20, 2))


@pytest.mark.parametrize("data, words", [
    (X[:, 0], ["DPLloyd: X must be a 2-D array", "got shape (20,)", "X.reshape(-1, 1)"]),
    ([["a", "b"]] * 5, ["DPLloyd: X must be numeric", "encode or drop the non-numeric columns"]),
    (np.empty((0, 2)), ["0 sample(s)", "DPLloyd"]),
])
def test_estimator_bad_x_is_one_dpclust_error(data, words):
    from dpclust.estimators import DPLloyd

    message = _one_line(DPLloyd(3, settings={"bounds": [0, 1]}).fit, data)
    for word in words:
        assert word in message, message
    assert f"{X[0, 0]:.4f}"[:5] not in message, message  # the data are not printed
