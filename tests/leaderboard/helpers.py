"""Synthetic run records and step specs for the leaderboard tests."""
from __future__ import annotations

from functools import cache

from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan

GUARANTEES = {
    "eps": {"kind": "ε-DP", "note": "", "relation": "add/remove one record"},
    "approx": {"kind": "(ε, δ)-DP", "note": "", "relation": "add/remove one record"},
    "notdp": {"kind": "not DP as published", "note": "swapped split", "relation": "add/remove one record"},
    "nonprivate": {"kind": "non-private", "note": "", "relation": ""},
}
DPLLOYD, BALCAN, NOTDP, PRIOR, HST = ("su2016.dplloyd", "balcan2017.balcan", "lushen2020.posterior",
                                           "lushen2020.prior", "cohenaddad2022.hst")
KMEANSPP, KMEDIANPP = "baselines.kmeanspp", "baselines.kmedianpp"


#: The methods that are not DP as published (or as configured) among the board's candidates: off the
#: default board, back with the opt-in `not_dp` (config/papers/leaderboard.yaml, header "OPT-IN").
NOT_DP_METHODS = frozenset({"balcan2017.balcan_authors", "nguyen2021.ours_authors", "lushen2020.posterior",
                            "lushen2020.prior", "lushen2020.su", "lushen2020.privgene", "lushen2020.dwork",
                            "lushen2020.blum"})
NOT_DP_KIND = "not DP as published"


@cache
def _plan(preset: str):
    return plan(load_config(overrides={"preset": preset}))


@cache
def _opt_in_plan(preset: str):
    """The plan with the leaderboard's opt-in (`--config 'opt_in=[not_dp]'`)."""
    return plan(load_config(overrides={"preset": preset, "opt_in": ["not_dp"]}))


def spec(item: str, step: str, preset: str = "full", opted_in: bool = False) -> dict:
    return (_opt_in_plan if opted_in else _plan)(preset).item("leaderboard", item).step_spec(step)


def record(dataset, algorithm, k, eps, group, *, kmeans=None, kmedian=None, guarantee=None, status="ok",
           spent=None, delta=1e-6, delta_spent=None, wall=0.1, private=None, sizes=None):
    """One run record (runs flattened, as the aggregate step receives them); `guarantee` is a key of
    GUARANTEES or None (undeclared); `sizes`, one list of cluster sizes per run (optional). As the
    runner writes them, runs without a DP guarantee (notdp, nonprivate) report no ε: `epsilon_spent`
    and `delta_spent` null, unless `spent` / `delta_spent` are given (an older record's numbers)."""
    rec = {"dataset": dataset, "algorithm": algorithm, "k": k, "epsilon": eps, "group": group,
           "private": eps is not None if private is None else private, "status": status,
           "reason": "" if status == "ok" else "source unreachable (network down), not mirrored", "runs": []}
    if guarantee is not None:
        rec["guarantee"] = GUARANTEES[guarantee]
    if status != "ok":
        rec["delta"] = None
        return rec
    rec["delta"] = delta if eps is not None else 0.0
    reports = guarantee not in ("notdp", "nonprivate")
    if spent is None and reports:
        spent = eps or 0.0
    if delta_spent is None and reports:
        delta_spent = 0.0
    kmeans = list(kmeans if kmeans is not None else kmedian)
    kmedian = list(kmedian if kmedian is not None else kmeans)
    for i, (a, b) in enumerate(zip(kmeans, kmedian)):
        rec["runs"].append({"seed": i, "init_seed": i, "cost_kmeans": a, "cost_kmedian": b, "nicv": a,
                            "iterations": 3, "epsilon_spent": spent,
                            "delta_spent": delta_spent, "wall_time_s": wall + i})
        if sizes is not None:
            rec["runs"][-1]["cluster_sizes"] = list(sizes[i])
    return rec


def board_records() -> list[dict]:
    """S1 (k = 5): references with best k-means cost 10 and best k-median cost 29; DPLloyd (ε-DP),
    Balcan ((ε, δ)-DP), Posterior (labelled not DP), Prior (undeclared) at ε = 1 and 0.5; HST (ε-DP) on the
    k-median objective; Gowalla unavailable; Iris without references."""
    return [
        record("s1", KMEANSPP, 5, None, "reference_kmeans", kmeans=[10, 12], kmedian=[30, 31], guarantee="nonprivate"),
        record("s1", KMEDIANPP, 5, None, "reference_kmedian", kmeans=[11, 11], kmedian=[29, 35],
               guarantee="nonprivate"),
        record("s1", DPLLOYD, 5, 1.0, "kmeans", kmeans=[20, 22, 24], guarantee="eps"),
        record("s1", BALCAN, 5, 1.0, "kmeans", kmeans=[15, 15, 15], guarantee="approx", delta_spent=5e-7),
        record("s1", NOTDP, 5, 1.0, "kmeans", kmeans=[11, 11, 11], guarantee="notdp"),
        record("s1", PRIOR, 5, 1.0, "kmeans_pure", kmeans=[12, 12], guarantee=None, spent=0.2, delta=0.0),
        record("s1", DPLLOYD, 5, 0.5, "kmeans", kmeans=[20, 30, 40], guarantee="eps"),
        record("s1", BALCAN, 5, 0.5, "kmeans", kmeans=[25, 26, 27], guarantee="approx"),
        record("s1", HST, 5, 1.0, "kmedian", kmedian=[58, 58], guarantee="eps"),
        record("s1", PRIOR, 5, 2.0, "kmeans_pure", kmeans=[13, 14], guarantee=None, spent=0.3, delta=0.0),
        record("gowalla", DPLLOYD, 5, 1.0, "kmeans", guarantee="eps", status="data_unavailable"),
        record("gowalla", KMEANSPP, 5, None, "reference_kmeans", guarantee="nonprivate", status="data_unavailable"),
        record("iris", DPLLOYD, 3, 1.0, "kmeans", kmeans=[5, 6], guarantee="eps"),
    ]
