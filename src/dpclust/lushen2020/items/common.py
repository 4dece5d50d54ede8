"""What the items of Lu & Shen share: the paper's algorithm ids, one row per run with the `info`
entries the figures use, unavailable datasets, and the dataset order of the figures."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

POSTERIOR, PRIOR, LLOYD = "lushen2020.posterior", "lushen2020.prior", "lushen2020.lloyd"
#: Algorithm 1's two strategies (§5.2, §5.3).
ALG1 = (POSTERIOR, PRIOR)
#: The private baselines of §7.1 (SU [11], PrivGene [15], GUPT [14], DWORK [13], BLUM [12]).
BASELINES = ("lushen2020.su", "lushen2020.privgene", "lushen2020.gupt", "lushen2020.dwork", "lushen2020.blum")
#: Order of the lines in Figure 7's legend: Algorithm 1, the baselines, Lloyd.
ORDER = (*ALG1, *BASELINES, LLOYD)
#: Run `info` entries the items read (set by dpclust.lushen2020.algorithm / .baselines).
INFO_KEYS = ("match", "lloyd_iterations", "lloyd_steps", "lloyd_cost", "prenoise_ratio", "sampling_iterations",
             "epsilon_step", "epsilon_0", "epsilon_reference", "forced_stop")


def _atom_steps(settings: Mapping) -> float | None:
    """atom_steps of a run's settings: Algorithm 1's own, or its reference run's (baselines)."""
    if "atom_steps" in settings:
        return float(settings["atom_steps"])
    ref = settings.get("reference") or {}
    return float(ref["atom_steps"]) if "atom_steps" in ref else None


def runs_table(records: Iterable[Mapping]) -> pd.DataFrame:
    """One row per run (status rows for unavailable datasets), with ε_step and the info we use."""
    rows = []
    for rec in records:
        base = {"dataset": rec["dataset"], "algorithm": rec["algorithm"], "k": rec["k"],
                "epsilon": rec.get("epsilon"), "status": rec.get("status", "ok"), "reason": rec.get("reason", "")}
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
    for col in ("seed", "cost", "iterations", "epsilon_spent", *INFO_KEYS):
        if col not in df:
            df[col] = np.nan
    df["eps_step"] = df["eps_step"].round(10)
    return df


def unavailable(df: pd.DataFrame) -> dict:
    """{dataset: reason} of the datasets whose records say the data could not be obtained."""
    bad = df[df["status"] != "ok"]
    return {d: str(r) for d, r in zip(bad["dataset"], bad["reason"])}


def dataset_order(datasets: Iterable[str], order: Sequence[str] = ()) -> list:
    """The distinct `datasets` in the given `order` (the figure's `dataset_order`), others after it
    alphabetically."""
    known = list(order)
    return sorted(set(datasets), key=lambda d: (known.index(d) if d in known else len(known), d))
