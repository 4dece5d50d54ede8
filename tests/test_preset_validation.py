"""Preset overrides are validated like the items they are merged over (dpclust.pipeline.configuration).

Each test copies the real config/ to a temporary directory, breaks one value under an item's
`presets.<preset>` and expects one DPClustError line naming the paper, item, preset and key.
"""
import math
from pathlib import Path

import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.pipeline.configuration import PRESETS, load_config

REPO = Path(__file__).resolve().parents[1]


def _edit(cfg_dir, paper, fn):
    path = cfg_dir / "papers" / f"{paper}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    fn(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def _set_group(cfg_dir, paper, item, preset, group, **values):
    """Set `values` under items.<item>.presets.<preset>.runs.<group>."""
    def fn(data):
        presets = data["items"][item].setdefault("presets", {})
        runs = (presets.setdefault(preset, {}) or {}).setdefault("runs", {})
        runs.setdefault(group, {}).update(values)
    _edit(cfg_dir, paper, fn)


def _error(cfg_dir, preset) -> str:
    with pytest.raises(DPClustError) as info:
        load_config(cfg_dir, overrides={"preset": preset})
    message = str(info.value)
    assert "\n" not in message  # one line
    return message


def _names(message, paper, item, preset, *keys):
    assert f"paper {paper!r}" in message, message
    assert f"item {item!r}" in message, message
    assert f"preset {preset!r}" in message, message
    for key in keys:
        assert key in message, message


def test_a_typo_under_a_preset_is_refused(cfg_dir):
    _set_group(cfg_dir, "baselines", "table", "test", "real", repetitons=4)
    message = _error(cfg_dir, "test")
    _names(message, "baselines", "table", "test", "runs/real", "'repetitons' was unexpected", "repetitions")
    # every preset is checked whichever runs: the typo under presets.test stops a full run too
    _names(_error(cfg_dir, "full"), "baselines", "table", "test", "repetitons")


def test_an_infinite_epsilon_is_refused(cfg_dir):
    _set_group(cfg_dir, "su2016", "fig1", "test", "interactive", epsilon=[math.inf])
    message = _error(cfg_dir, "test")
    _names(message, "su2016", "fig1", "test", "runs/interactive/epsilon/0", "inf", "finite")


def test_a_nan_epsilon_is_refused(cfg_dir):
    _set_group(cfg_dir, "su2016", "fig1", "test", "interactive", epsilon=math.nan)
    _names(_error(cfg_dir, "test"), "su2016", "fig1", "test", "runs/interactive/epsilon", "nan", "finite")


def test_a_negative_epsilon_is_refused(cfg_dir):
    _set_group(cfg_dir, "su2016", "fig1", "test", "interactive", epsilon=[0.1, -0.5])
    message = _error(cfg_dir, "test")
    _names(message, "su2016", "fig1", "test", "runs/interactive/epsilon/1", "-0.5", "> 0")


def test_a_zero_epsilon_is_refused(cfg_dir):
    _set_group(cfg_dir, "su2016", "fig1", "test", "interactive", epsilon=0)
    message = _error(cfg_dir, "test")
    _names(message, "su2016", "fig1", "test", "runs/interactive/epsilon", "0 is less than or equal to", "> 0")


def test_k_zero_is_refused(cfg_dir):
    _set_group(cfg_dir, "baselines", "table", "test", "real", k=0)
    message = _error(cfg_dir, "test")
    _names(message, "baselines", "table", "test", "runs/real/k", "0 is less than the minimum of 1")


def test_k_zero_in_a_list_is_refused(cfg_dir):
    _set_group(cfg_dir, "baselines", "table", "quick", "real", k=[2, 0])
    _names(_error(cfg_dir, "quick"), "baselines", "table", "quick", "runs/real/k/1", "minimum of 1")


def test_k_above_n_is_refused(cfg_dir):
    n_iris = yaml.safe_load((cfg_dir / "datasets.yaml").read_text(encoding="utf-8"))["datasets"]["iris"]["n"]
    _set_group(cfg_dir, "baselines", "table", "test", "real", datasets=["s1", "iris"], k=[2, n_iris + 1])
    message = _error(cfg_dir, "test")
    _names(message, "baselines", "table", "test", "runs/real/k", f"k = {n_iris + 1}", f"n = {n_iris}", "'iris'")
    # k = n is allowed
    _set_group(cfg_dir, "baselines", "table", "test", "real", k=[2, n_iris])
    load_config(cfg_dir, overrides={"preset": "test"})


def test_k_above_n_of_a_dataset_family_is_refused(cfg_dir):
    _set_group(cfg_dir, "su2016", "fig2", "test", "interactive", datasets={"family": "su_synth"}, k=10**6)
    message = _error(cfg_dir, "test")
    _names(message, "su2016", "fig2", "test", "runs/interactive/k", "k = 1000000", "'su_synth_")


def test_k_from_the_registry_above_n_is_refused(cfg_dir):
    path = cfg_dir / "datasets.yaml"
    registry = yaml.safe_load(path.read_text(encoding="utf-8"))
    s1 = registry["datasets"]["s1"]
    s1["paper_k"]["su2016"] = s1["n"] + 1
    path.write_text(yaml.safe_dump(registry, allow_unicode=True), encoding="utf-8")
    message = _error(cfg_dir, "test")
    assert "paper_k.su2016" in message and "'s1'" in message and f"k = {s1['n'] + 1}" in message, message
    assert "paper 'su2016'" in message and "preset " in message, message


def test_repetitions_not_a_number_is_refused(cfg_dir):
    _set_group(cfg_dir, "baselines", "table", "test", "real", repetitions="four")
    message = _error(cfg_dir, "test")
    _names(message, "baselines", "table", "test", "runs/real/repetitions", "'four' is not of type 'integer'",
           "integer >= 1")


def test_a_preset_group_missing_a_required_key_is_refused(cfg_dir):
    _set_group(cfg_dir, "baselines", "table", "test", "extra", repetitions=2)
    _names(_error(cfg_dir, "test"), "baselines", "table", "test", "runs/extra", "required")


@pytest.mark.parametrize("preset", PRESETS)
def test_the_shipped_presets_load(preset):
    config = load_config(REPO / "config", overrides={"preset": preset})
    assert config["preset"] == preset
    assert config["paper_configs"]
