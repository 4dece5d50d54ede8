"""Every algorithm whose guarantee is "add/remove one record, N public" takes that N as `public_n`
(dpclust.blocks.public_size): with it, every N-dependent choice is the same on D and on D plus one
record; without it, N is the data's size and the choice follows it (how the full audit at 325cec1
saw EUGkM's grid reveal the size). The privacy audit holds N fixed for exactly these algorithms
(tests/audits/test_audit_planner.py)."""
from __future__ import annotations

import numpy as np
import pytest

from dpclust.pipeline.audit_plan import n_public_add_remove
from dpclust.pipeline.configuration import load_config, resolve_algorithm
from dpclust.pipeline.resolve import import_object

CONFIG = load_config()


def _choices(info: dict) -> dict:
    """The N-dependent parts of a run's info, whichever algorithm wrote it."""
    keys = ("cells_total", "epsilon_threshold", "blocks", "block_size", "gamma", "eps_level", "jl_dim", "scales",
            "projection_dim", "swap_rounds")
    out = {k: info[k] for k in keys if k in info}
    for trial in info.get("trials") or []:   # Balcan et al.'s Algorithm 4: per trial
        out.update({f"trial.{k}": trial[k] for k in keys if k in trial})
    assert out, f"no N-dependent choice in {sorted(info)}"
    return out


N_PUBLIC = sorted(a for a in CONFIG["algorithms"] if n_public_add_remove(resolve_algorithm(CONFIG, a).get("guarantee")))


def test_the_configured_n_public_algorithms():
    assert {"su2016.eugkm", "su2016.hybrid", "balcan2017.balcan", "nguyen2021.ours"} <= set(N_PUBLIC)


@pytest.mark.parametrize("algorithm", N_PUBLIC)
def test_public_n_fixes_every_n_dependent_choice_across_add_remove_neighbours(algorithm):
    resolved = resolve_algorithm(CONFIG, algorithm)
    assert "public_n" in resolved["settings"], f"{algorithm} declares an N-public guarantee but no public_n"
    function = import_object(resolved["function"])
    n = 20 if algorithm.startswith("su2016.") else 256    # sizes where N and N + 1 choose differently
    X = np.random.default_rng(5).uniform(0.05, 0.35, size=(n, 2))
    Xp = np.vstack([X, [[0.8125, 0.8125]]])

    def run(data, **extra):
        settings = dict(resolved["settings"], bounds=[0.0, 1.0], init_seed=1, **extra)
        return _choices(function(data, 2, 1.0, 1e-5, np.random.default_rng(0), settings).info)

    assert run(X, public_n=n) == run(Xp, public_n=n)
    assert run(Xp) == run(Xp, public_n=n + 1)                  # unset: the data's size
    assert run(X) != run(Xp)                                    # ... which the choices follow
