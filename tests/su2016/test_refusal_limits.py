"""No paper's own grid reaches EUGkM's refusal limit.

EUGkM (and the hybrid, which runs it) refuses a grid above `max_grid_cells` (`dpclust.api.Refused`):
the run record says `refused`. The leaderboard keeps such cells as `refused` rows and the papers'
figures draw them as refused (tests/test_status_panels.py), but a paper's claims need every cell of
its protocol, so a paper's configured grid must stay below the limit. This checks it for every paper
run batch of the full and the quick preset, at the batch's largest ε (the hybrid's EUGkM stage gets
at most the whole ε), from the registry's n and d.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from dpclust.api import Refused
from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan
from dpclust.su2016.eugkm import grid_for

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("preset", ["full", "quick"])
def test_no_paper_grid_reaches_the_eugkm_refusal_limit(preset):
    batches = [b for b in plan(load_config(REPO / "config", overrides={"preset": preset})).batches
               if b.paper != "leaderboard" and "max_grid_cells" in b.spec["spec"]["settings"]]
    assert batches, "EUGkM runs in the papers' protocols"
    over = []
    for batch in batches:
        settings = batch.spec["spec"]["settings"]
        for dataset, _k, epsilon, *_ in batch.spec["cells"]:
            entry = batch.spec["entries"][dataset]
            n = settings.get("public_n") or entry["n"]
            try:   # EUGkM's own guard (the box does not enter the cell count)
                grid_for(int(n), float(epsilon), int(entry["d"]), settings, (0.0, 1.0))
            except Refused as exc:
                over.append(f"{batch.path}: {dataset}: {exc}")
    assert not over, "a paper's grid would be refused (its claims would miss those cells): " + "; ".join(over)
