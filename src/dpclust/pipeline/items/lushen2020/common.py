"""What the items of Lu & Shen share: the paper's algorithm ids, one row per run with the `info`
entries the figures use (and each record's declared guarantee), unavailable datasets, display names
with the guarantee, the dataset order of the figures, a seeded bootstrap, and the claims engine's cells
(`dpclust.pipeline.verdicts`): Welch cells, bootstrap cells from the quantiles the tables store, and the
rubric's "not evaluable (n of N datasets)"."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from dpclust.pipeline import verdicts
from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.claims import Interval
from dpclust.pipeline.itemkit import DP_KINDS, NOT_DP, name
from dpclust.pipeline.records import ledger_total

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
                       epsilon_spent=run["epsilon_spent"],
                       # what its ledger charges: the nominal total of a run that reports no ε
                       nominal_total=ledger_total(run.get("ledger"))[0])
            info = run.get("info") or {}
            for key in INFO_KEYS:
                row[key] = info.get(key)
            rows.append(row)
    df = pd.DataFrame(rows)
    for col in ("dataset", "algorithm", "k", "epsilon", "status", "reason", "guarantee", "relation", "eps_step",
                "seed", "cost", "iterations", "epsilon_spent", "nominal_total", *INFO_KEYS):
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


# --- the claims engine's cells --------------------------------------------------------------------
#: Probabilities at which a table stores the quantiles of a claim's bootstrap replicates (column
#: `quantiles`): the checks step rebuilds the percentile interval at any level from them (exact at these
#: probabilities, among them 5 % / 95 % and 2.5 % / 97.5 %; linear in between; the extremes are the
#: replicates' minimum and maximum, the resolution of 2,000 replicates being 0.0005).
_TAIL = (0.0, 0.0005, 0.001, 0.0015, 0.002, 0.0025, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02,
         0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
BOOT_PROBS = (*_TAIL, 0.5, *(round(1.0 - p, 6) for p in reversed(_TAIL)))


def quantiles_text(replicates) -> str:
    """The replicates' quantiles at `BOOT_PROBS` (the percentile interval's method), as stored in a table;
    empty when there is no finite replicate."""
    r = np.asarray(replicates, dtype=float)
    r = r[~np.isnan(r)]
    if r.size == 0:
        return ""
    return " ".join(f"{v:.10g}" for v in np.quantile(r, BOOT_PROBS, method="inverted_cdf"))


def bootstrap_cell(label: str, estimate: float, quantiles) -> verdicts.Cell:
    """A cell whose interval at `level` is the percentile interval of the replicates summarised by
    `quantiles` (a table's `quantiles` text); no replicate: the whole line (never decided)."""
    text = "" if quantiles is None or (isinstance(quantiles, float) and math.isnan(quantiles)) else str(quantiles)
    q = np.array(text.split(), dtype=float)
    est = float(estimate)
    if q.size != len(BOOT_PROBS):
        return verdicts.Cell(label, lambda level: Interval(est, -math.inf, math.inf))
    probs = np.array(BOOT_PROBS)

    def interval(level: float) -> Interval:
        lo, hi = np.interp([(1.0 - level) / 2, 0.5 + level / 2], probs, q)
        return Interval(est, float(lo), float(hi))

    return verdicts.Cell(label, interval)


def difference_cell(label: str, a: verdicts.Cell, b: verdicts.Cell) -> verdicts.Cell:
    """a − b from two independent cells, by their intervals at the same level (the difference is held
    when a's interval lies wholly above b's: the non-overlap reading of two intervals)."""

    def interval(level: float) -> Interval:
        ia, ib = a.interval(level), b.interval(level)
        return Interval(ia.estimate - ib.estimate, ia.low - ib.high, ia.high - ib.low)

    return verdicts.Cell(label, interval)


def judged_check(claim: str, cells: Sequence[verdicts.Cell], test, quantifier: str, *,
                 why: Callable[[verdicts.Verdict], str] | None = None, detail: str = "",
                 kind: str = "paper") -> Check:
    """`verdicts.check`, with the why written from the engine's own cell states (`why(verdict)`)."""
    reason = why(verdicts.judge(cells, test, quantifier)) if (why and cells) else ""
    return verdicts.check(claim, cells, test, quantifier, why=reason, detail=detail, kind=kind)
