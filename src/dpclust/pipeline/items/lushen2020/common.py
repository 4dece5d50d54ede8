"""What the items of Lu & Shen share: the paper's algorithm ids, one row per run with the `info`
entries the figures use (and each record's declared guarantee), unavailable datasets, display names
with the guarantee, the dataset order of the figures, and a seeded bootstrap."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from dpclust.pipeline.itemkit import name

POSTERIOR, PRIOR, LLOYD = "lushen2020.posterior", "lushen2020.prior", "lushen2020.lloyd"
#: Algorithm 1's two strategies (§5.2, §5.3).
ALG1 = (POSTERIOR, PRIOR)
#: The private baselines of §7.1 under the paper's protocol (SU [11], PrivGene [15], GUPT [14],
#: DWORK [13], BLUM [12]).
BASELINES = ("lushen2020.su", "lushen2020.privgene", "lushen2020.gupt", "lushen2020.dwork", "lushen2020.blum")
#: Their DP variants (data-independent starts and a public total; GUPT is DP as configured already).
DP_VARIANTS = ("lushen2020.su_dp", "lushen2020.privgene_dp", "lushen2020.dwork_dp", "lushen2020.blum_dp")
#: Order of the lines in Figure 7's legend: Algorithm 1, the paper's baselines, the DP variants.
ORDER = (*ALG1, *BASELINES, *DP_VARIANTS)
#: Run `info` entries the items read (set by dpclust.lushen2020.algorithm / .baselines).
INFO_KEYS = ("match", "lloyd_iterations", "lloyd_steps", "lloyd_cost", "prenoise_ratio", "sampling_iterations",
             "epsilon_step", "epsilon_0", "epsilon_reference", "forced_stop")
#: Guarantee kinds under which a method may report an ε and enter a comparison of private methods.
DP_KINDS = ("ε-DP", "(ε, δ)-DP")
NOT_DP = "not DP as published"
#: How a baseline's "not DP as published" record is labelled: the paper's protocol (§7.1), not the baseline, breaks it.
NOT_DP_CONFIGURED = "not DP as configured"


def _atom_steps(settings: Mapping) -> float | None:
    """atom_steps of a run's settings: Algorithm 1's own, or its reference run's (baselines)."""
    if "atom_steps" in settings:
        return float(settings["atom_steps"])
    ref = settings.get("reference") or {}
    return float(ref["atom_steps"]) if "atom_steps" in ref else None


def runs_table(records: Iterable[Mapping]) -> pd.DataFrame:
    """One row per run (status rows for unavailable datasets), with ε_step, the record's guarantee
    kind and the info we use."""
    rows = []
    for rec in records:
        guarantee = rec.get("guarantee") or {}
        base = {"dataset": rec["dataset"], "algorithm": rec["algorithm"], "k": rec["k"],
                "epsilon": rec.get("epsilon"), "status": rec.get("status", "ok"), "reason": rec.get("reason", ""),
                "guarantee": guarantee.get("kind", ""), "relation": guarantee.get("relation", "")}
        steps = _atom_steps(rec.get("settings") or {})
        base["eps_step"] = (rec["epsilon"] / steps) if (rec.get("epsilon") is not None and steps) else np.nan
        if base["status"] != "ok":
            rows.append(base)
            continue
        for run in rec["runs"]:
            row = dict(base, seed=run["seed"], cost=run["cost_kmeans"], iterations=run.get("iterations"),
                       epsilon_spent=run["epsilon_spent"])
            info = run.get("info") or {}
            for key in INFO_KEYS:
                row[key] = info.get(key)
            rows.append(row)
    df = pd.DataFrame(rows)
    for col in ("dataset", "algorithm", "k", "epsilon", "status", "reason", "guarantee", "relation", "eps_step",
                "seed", "cost", "iterations", "epsilon_spent", *INFO_KEYS):
        if col not in df:
            df[col] = np.nan
    df["eps_step"] = df["eps_step"].astype(float).round(10)
    return df


def status_rows(df: pd.DataFrame) -> list[dict]:
    """The table rows of the records that are not ok: one per dataset whose data could not be had
    (status `data_unavailable`), one per (dataset, algorithm) an algorithm refused (`refused`, its
    own limit: the dataset's other algorithms ran)."""
    bad = df[df["status"] != "ok"]
    rows: dict[tuple, dict] = {}
    for d, a, s, r in zip(bad["dataset"], bad["algorithm"], bad["status"], bad["reason"]):
        if s == "refused":
            rows.setdefault((d, a), {"dataset": d, "algorithm": a, "status": s, "reason": str(r)})
        else:
            rows[(d, None)] = {"dataset": d, "status": s, "reason": str(r)}
    return list(rows.values())


def dataset_order(datasets: Iterable[str], order: Sequence[str] = ()) -> list:
    """The distinct `datasets` in the given `order` (the figure's `dataset_order`), others after it
    alphabetically."""
    known = list(order)
    return sorted(set(datasets), key=lambda d: (known.index(d) if d in known else len(known), d))


def is_dp(kind) -> bool:
    """True for the guarantee kinds that may report an ε (ε-DP, (ε, δ)-DP)."""
    return str(kind) in DP_KINDS


def display_name(item: Mapping, algorithm: str) -> str:
    """The algorithm's display name (config/names.yaml); a DP variant ``<base>_dp`` without one of
    its own is called "<base's name>-DP"."""
    shown = name(item, algorithm)
    if shown == algorithm and algorithm.endswith("_dp"):
        base = name(item, algorithm[:-3])
        if base != algorithm[:-3]:
            return f"{base}-DP"
    return shown


def lloyd_name(item: Mapping) -> str:
    """LLOYD's display name (the items no longer run it: Lloyd is each Algorithm 1 run's diagnostic)."""
    shown = name(item, LLOYD)
    return "LLOYD" if shown == LLOYD else shown


def legend_label(item: Mapping, algorithm: str, kind: str) -> str:
    """Display name, with "(not DP as published)" for Algorithm 1 when its record says so, and "(not DP as
    configured)" for a baseline whose record says so (§7.1's protocol, not the baseline's published
    mechanism, breaks its guarantee: a data-dependent total and data-record starts; issue 15's wording)."""
    shown = display_name(item, algorithm)
    if str(kind) != NOT_DP:
        return shown
    return f"{shown} ({NOT_DP})" if algorithm in ALG1 else f"{shown} ({NOT_DP_CONFIGURED})"


def resample_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """`n_boot` bootstrap replicates of the mean of `values` (nan if there are none)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return np.full(n_boot, np.nan)
    return values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1)


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap replicates (±inf allowed; nan replicates dropped)."""
    r = np.asarray(replicates, dtype=float)
    r = r[~np.isnan(r)]
    if r.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(r, [(1 - level) / 2, 0.5 + level / 2], method="inverted_cdf")
    return float(lo), float(hi)
