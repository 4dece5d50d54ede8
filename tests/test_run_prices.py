"""The looks' CPU caps price runs by a committed table, not by the clock (dpclust.pipeline.run_prices)."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from dpclust.pipeline import run_prices


def _job(epsilon, function="su2016.dplloyd:run", k=3, settings=None):
    spec = {"function": function, "dataset": "iris", "transform": "minmax", "k": k, "settings": settings or {"a": 1}}
    return SimpleNamespace(spec=spec, epsilon=epsilon, seed_count=1)


def _table(tmp_path, rows):
    path = tmp_path / "prices.tsv"
    lines = ["# a comment", "\t".join(run_prices.COLUMNS)]
    lines += ["\t".join(map(str, row)) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_price_is_interpolated_in_log_epsilon_and_clamped_at_the_ends(tmp_path):
    sid = run_prices.settings_id({"a": 1})
    path = _table(tmp_path, [("su2016.dplloyd:run", "iris", "minmax", 3, sid, 0.1, 1.0),
                             ("su2016.dplloyd:run", "iris", "minmax", 3, sid, 10, 3.0)])
    assert run_prices.price_s(_job(1.0), path) == pytest.approx(2.0)        # log 1 is halfway
    assert run_prices.price_s(_job(0.01), path) == 1.0 and run_prices.price_s(_job(100.0), path) == 3.0
    assert run_prices.price_s(_job(math.sqrt(10) / 10), path) == pytest.approx(1.5, abs=1e-3)


def test_settings_are_part_of_the_key_and_their_order_is_not():
    assert run_prices.settings_id({"a": 1, "b": 2}) == run_prices.settings_id({"b": 2, "a": 1})
    assert run_prices.settings_id({"a": 1}) != run_prices.settings_id({"a": 2})


def test_a_block_the_table_does_not_cover_falls_back_to_the_cluster_estimate(tmp_path, monkeypatch):
    from dpclust.pipeline import cluster_resources

    monkeypatch.setattr(cluster_resources, "run_seconds", lambda job: 42.0)
    path = _table(tmp_path, [])
    assert run_prices.price_s(_job(1.0, k=7), path) == 42.0
    assert run_prices.load_prices(str(tmp_path / "none.tsv")) == {}


def test_the_committed_table_prices_every_block_the_caps_read():
    """Every block a replication look or a CPU-capped race may run, on the quick and full presets, has
    a row in the committed table, except on a dataset no mirror holds that the table never priced on a
    stand-in (it falls back to the SLURM table, which errs long: Covertype). A look or a setting added
    or edited since fails here: time the new keys with `benchmarks/estimate_full_protocol.py
    --priced-only --unpriced-only --prices benchmarks/results/run_prices.tsv` (each preset;
    `--all-datasets` for the missing data)."""
    from dpclust.data.registry import load_registry
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    table = run_prices.load_prices(str(run_prices.PRICES_TSV))
    assert table, f"{run_prices.PRICES_TSV} is missing: benchmarks/estimate_full_protocol.py --prices writes it"
    registry = load_registry()
    priced_datasets = {key[1] for key in table}

    def exempt(dataset: str) -> bool:     # not mirrored, never timed on a stand-in
        files = [f for src in registry.sources_for(dataset) for f in registry.source(src).get("files", [])]
        return dataset not in priced_datasets and any(not f.get("mirror_path") for f in files)

    for preset in ("quick", "full"):
        the_plan = plan(load_config(overrides={"preset": preset}))
        blocks = run_prices.priced_blocks(the_plan)
        assert blocks
        unpriced = sorted({run_prices.sample_key(job.spec)[:4] for job in blocks
                           if not exempt(job.dataset) and run_prices.sample_key(job.spec) not in table})
        assert not unpriced, f"{preset}: {len(unpriced)} sample keys unpriced, e.g. {unpriced[:3]}"
