"""Item modules are found by convention (dpclust.pipeline.item_modules): the config names no step
function, every item's module exposes `render` (and `aggregate`, `checks` where it has them), and
an item without its module is refused with one line naming the file to add."""
import importlib

import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.pipeline.configuration import PRESETS, load_config
from dpclust.pipeline.item_modules import defined_steps, item_module
from dpclust.pipeline.run_plan import plan_runs


@pytest.mark.parametrize("preset", PRESETS)
def test_every_item_module_exposes_its_steps_under_fixed_names(repo, preset):
    plan = plan_runs(load_config(repo / "config", overrides={"preset": preset}))
    assert plan.items
    for target in plan.items:
        assert target.module == item_module(target.paper, target.item)
        module = importlib.import_module(target.module)
        assert callable(module.render), target.module
        # what the planner reads from the syntax tree is what the module really binds
        for step in ("aggregate", "render", "checks"):
            bound = callable(getattr(module, step, None))
            assert (step in defined_steps(target.module)) == bound, (target.module, step)
        assert target.has_checks == ("checks" in defined_steps(target.module))
    # items with claims have a checks step; Figures 2(a-c) of Balcan et al. show panels only
    keys = {(t.paper, t.item): t.has_checks for t in plan.items}
    assert keys.get(("su2016", "fig1")) is True
    if ("balcan2017", "fig2a") in keys:
        assert keys[("balcan2017", "fig2a")] is False


def test_no_config_names_a_step_function(repo):
    for path in sorted((repo / "config" / "papers").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert "module" not in data, path
        for name, item in (data.get("items") or {}).items():
            assert not {"module", "aggregate", "render", "checks"} & set(item), (path.name, name)


def test_a_step_function_named_in_the_config_is_refused(cfg_dir):
    path = cfg_dir / "papers" / "baselines.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["items"]["table"]["render"] = "render_table"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(DPClustError) as info:
        load_config(cfg_dir)
    assert "'render' was unexpected" in str(info.value)


def test_an_item_without_its_module_is_refused_naming_the_file(cfg_dir):
    path = cfg_dir / "papers" / "baselines.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["items"]["table_copy"] = data["items"]["table"]
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(DPClustError) as info:
        plan_runs(load_config(cfg_dir))
    message = str(info.value)
    assert "\n" not in message
    assert "baselines/table_copy" in message and "src/dpclust/pipeline/items/baselines/table_copy.py" in message
