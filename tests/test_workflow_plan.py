"""Config validation and job planning (dpclust.pipeline.planning)."""
import shutil
from pathlib import Path

import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.pipeline.configuration import deep_merge, fmt_epsilon, load_config
from dpclust.pipeline.planning import plan
from dpclust.pipeline.resolve import resolve_delta

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def cfg_dir(tmp_path):
    """A config dir with the real config.yaml/datasets.yaml and only the baselines paper."""
    d = tmp_path / "config"
    (d / "papers").mkdir(parents=True)
    shutil.copy(REPO / "config" / "config.yaml", d / "config.yaml")
    shutil.copy(REPO / "config" / "datasets.yaml", d / "datasets.yaml")
    shutil.copy(REPO / "config" / "papers" / "baselines.yaml", d / "papers" / "baselines.yaml")
    top = yaml.safe_load((d / "config.yaml").read_text())
    top["papers"] = ["baselines"]
    (d / "config.yaml").write_text(yaml.safe_dump(top))
    return d


def _edit_paper(cfg_dir, fn):
    path = cfg_dir / "papers" / "baselines.yaml"
    data = yaml.safe_load(path.read_text())
    fn(data)
    path.write_text(yaml.safe_dump(data))


def test_real_config_validates():
    config = load_config(REPO / "config")
    assert config["preset"] == "full"
    assert "baselines.lloyd" in config["algorithms"]


def test_plan_expands_seed_blocks(cfg_dir):
    config = load_config(cfg_dir)
    p = plan(config)
    table = p.item("baselines", "table")
    group = config["paper_configs"]["baselines"]["items"]["table"]["runs"]["real"]
    n_cells = len(group["datasets"]) * len(group["k"]) * len(group["algorithms"])
    blocks = -(-group["repetitions"] // group["seed_block"])
    assert len(table.runs) == n_cells * blocks
    assert all(j.epsilon is None for j in table.runs)  # non-private: one epsilon token
    assert p.item("baselines", "figure").runs == table.runs  # runs_from shares jobs
    assert len(p.runs) == len(table.runs)
    # one run job (batch) per (dataset, algorithm), holding every (k, block) of it
    assert len(p.runs_by_path) == len(group["datasets"]) * len(group["algorithms"]) == len(table.run_files)
    assert sum(len(b.cells) for b in p.batches) == len(table.runs)


def test_batch_spec_rebuilds_every_block_spec_exactly(cfg_dir):
    from dpclust.pipeline.run_job import batch_cells

    p = plan(load_config(cfg_dir))
    for batch in p.batches:
        assert batch_cells(batch.spec) == [job.spec for job in batch.cells]
        assert batch.datasets == [batch.dataset]


def test_a_family_group_is_one_batch_per_algorithm():
    """Su et al.'s Fig. 2 runs the 81 datasets of a family: 9 run jobs per algorithm, 9 datasets each."""
    from dpclust.pipeline.run_job import batch_cells
    from dpclust.pipeline.run_plan import FAMILY_BATCH

    p = plan(load_config(REPO / "config"))
    fig2 = p.item("su2016", "fig2")
    lloyd = [b for b in p.batches if (b.paper, b.item, b.group, b.algorithm) ==
             ("su2016", "fig2", "interactive", "su2016.dplloyd")]
    assert sorted(b.data for b in lloyd) == sorted(f"su_synth.{i}" for i in range(1, 10))
    datasets = [d for b in lloyd for d in b.datasets]
    assert sorted(datasets) == sorted({j.dataset for j in fig2.runs
                                       if j.algorithm == "su2016.dplloyd" and j.group == "interactive"})
    for batch in lloyd:
        assert len(batch.datasets) == FAMILY_BATCH and all(d.startswith("su_synth_") for d in batch.datasets)
        assert batch_cells(batch.spec) == [job.spec for job in batch.cells]
    assert set(fig2.run_files) >= {b.path for b in lloyd}


@pytest.mark.parametrize("batch_by", ["k", "cell"])
def test_a_group_may_split_a_datasets_batch_per_k_or_cell(cfg_dir, batch_by):
    """`batch: k | cell` changes only which run job runs a block: the same blocks with the same specs,
    one job per (dataset, k) (per (dataset, k, ε) for a private algorithm under `cell`)."""
    from dpclust.pipeline.run_job import batch_cells

    def private_lloyd(d):  # a private algorithm, for the ε of `cell`
        d["algorithms"]["baselines.lloyd"]["private"] = True
        d["items"]["table"]["runs"]["real"].update(epsilon=[0.5, 2.0])

    _edit_paper(cfg_dir, private_lloyd)
    whole = plan(load_config(cfg_dir))
    _edit_paper(cfg_dir, lambda d: d["items"]["table"]["runs"]["real"].update(batch=batch_by))
    split = plan(load_config(cfg_dir))
    assert sorted((j.cell, j.algorithm, j.spec_json) for j in split.runs) == \
        sorted((j.cell, j.algorithm, j.spec_json) for j in whole.runs)
    by_cell = {}
    for batch in split.batches:
        assert batch_cells(batch.spec) == [job.spec for job in batch.cells]
        assert len(batch.datasets) == 1
        keys = {(j.dataset, j.algorithm, j.k) + ((j.epsilon,) if batch_by == "cell" else ()) for j in batch.cells}
        assert len(keys) == 1, "one batch, one (dataset, k[, ε])"
        dataset, algorithm, k, *eps = keys.pop()
        assert batch.data == f"{dataset}.k{k}" + (f".e{eps[0]!r}" if eps and eps[0] is not None else "")
        by_cell.setdefault(batch.data, set()).add(algorithm)
    group = split.config["paper_configs"]["baselines"]["items"]["table"]["runs"]["real"]
    eps_per_k = len(group["epsilon"]) if batch_by == "cell" else 1
    n_private, n_public = 1, len(group["algorithms"]) - 1
    assert len(split.batches) == len(group["datasets"]) * len(group["k"]) * (n_private * eps_per_k + n_public)
    assert len(whole.batches) == len(group["datasets"]) * len(group["algorithms"])


def test_a_family_group_cannot_be_split(cfg_dir):
    config = load_config(REPO / "config")
    config["paper_configs"]["su2016"]["items"]["fig2"]["runs"]["interactive"]["batch"] = "k"
    with pytest.raises(DPClustError, match="family"):
        plan(config)


def test_preset_merges_over_item(cfg_dir):
    config = load_config(cfg_dir, overrides={"preset": "test"})
    group = config["paper_configs"]["baselines"]["items"]["table"]["runs"]["real"]
    assert group["datasets"] == ["iris", "s1"] and group["repetitions"] == 2


def test_seed_blocks_cover_every_seed_once(cfg_dir):
    _edit_paper(cfg_dir, lambda d: d["items"]["table"]["runs"]["real"].update(repetitions=7, seed_block=3))
    jobs = [j for j in plan(load_config(cfg_dir)).item("baselines", "table").runs
            if j.dataset == "iris" and j.k == 2 and j.algorithm == "baselines.lloyd"]
    seeds = sorted(s for j in jobs for s in range(j.seed_start, j.seed_start + j.seed_count))
    assert seeds == list(range(7))


@pytest.mark.parametrize("mutate, message", [
    (lambda top: top.update(presett="quick"), "presett"),
    (lambda top: top.update(preset="fast"), "preset"),
    (lambda top: top.update(papers=["nope"]), "papers"),
    (lambda top: top.update(base_seed="x"), "base_seed"),
])
def test_invalid_top_config_is_one_clear_error(cfg_dir, mutate, message):
    path = cfg_dir / "config.yaml"
    top = yaml.safe_load(path.read_text())
    mutate(top)
    path.write_text(yaml.safe_dump(top))
    with pytest.raises(DPClustError, match=message):
        load_config(cfg_dir)


def test_config_items_plans_only_the_items_it_names(cfg_dir):
    """`--config 'items=[paper/item, ...]'` (a part of a paper one session can finish) plans only those
    items of the papers it names, with the same run jobs as the whole paper's; an item that reads
    another's runs needs it named, and a typo or an unplanned paper is one clear error."""
    whole = plan(load_config(cfg_dir))
    part = plan(load_config(cfg_dir, overrides={"items": ["baselines/table"]}))
    assert [t.key for t in part.items] == ["baselines/table"]
    assert sorted(part.runs_by_path) == sorted(whole.runs_by_path)      # the same files: a later whole run reuses them
    both = plan(load_config(cfg_dir, overrides={"items": ["baselines/table", "baselines/figure"]}))
    assert [t.key for t in both.items] == [t.key for t in whole.items]
    for items, message in ((["baselines/figure"], "reads the runs of baselines/table .runs_from.: add baselines/table"),
                           (["baselines/tabel"], "did you mean table"),
                           (["su2016/fig1"], "config 'papers' does not name 'su2016'"),
                           (["baselines"], "allowed: paper/item")):
        with pytest.raises(DPClustError, match=message):
            load_config(cfg_dir, overrides={"items": items})


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["items"]["table"]["runs"]["real"].update(repetitons=3), "repetitons"),
    (lambda d: d["items"]["table"]["runs"]["real"].update(algorithms=["baselines.nope"]), "unknown algorithm"),
    (lambda d: d["items"]["table"]["runs"]["real"].update(params={"baselines.lloyd": {"max_iters": 3}}), "max_iters"),
    (lambda d: d["items"]["table"]["runs"]["real"].update(transform="zscore"), "transform"),
    (lambda d: d["items"]["table"]["runs"]["real"].update(k=[0]), "k"),
    (lambda d: d["items"]["table"]["runs"]["real"].update(epsilon=[-1.0]), "epsilon"),
    (lambda d: d["items"]["table"]["runs"]["real"].update(delta=1.5), "delta"),
    (lambda d: d["items"]["table"]["runs"]["real"].update(batch="seed"), "batch"),
    (lambda d: d["items"]["table"].update(kind="chart"), "kind"),
    (lambda d: d["items"]["figure"].update(runs_from="nope"), "runs_from"),
])
def test_invalid_paper_config_is_one_clear_error(cfg_dir, mutate, message):
    _edit_paper(cfg_dir, mutate)
    with pytest.raises(DPClustError, match=message):
        plan(load_config(cfg_dir))


def test_private_algorithm_needs_epsilon(cfg_dir):
    def mutate(d):
        d["algorithms"]["baselines.lloyd"]["private"] = True
    _edit_paper(cfg_dir, mutate)
    with pytest.raises(DPClustError, match="needs epsilon"):
        plan(load_config(cfg_dir))


def test_resolve_delta():
    assert resolve_delta("n^-1.5", 10_000) == pytest.approx(1e-6)
    assert resolve_delta("0.5/n", 100) == pytest.approx(0.005)
    assert resolve_delta(1e-5, 10) == 1e-5
    for bad in ("n^1", 1.0, -0.1, "abc"):
        with pytest.raises(DPClustError):
            resolve_delta(bad, 10)


def test_helpers():
    assert fmt_epsilon(None) == "none" and fmt_epsilon(0.05) == "0.05" and fmt_epsilon(1) == "1.0"
    assert deep_merge({"a": {"b": 1, "c": [1]}}, {"a": {"c": [2]}}) == {"a": {"b": 1, "c": [2]}}


def test_registry_typo_is_one_clear_error(cfg_dir):
    shutil.copy(REPO / "config" / "datasets.yaml", cfg_dir / "datasets.yaml")
    text = (cfg_dir / "datasets.yaml").read_text().replace("    bounds: null        # no public box",
                                                           "    bound: null  #", 1)
    (cfg_dir / "datasets.yaml").write_text(text)
    with pytest.raises(DPClustError, match="bound"):
        load_config(cfg_dir)
