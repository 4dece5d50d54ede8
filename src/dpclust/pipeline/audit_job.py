"""One audit job: an algorithm, one neighbouring design, many runs on each side, two audits.

`run_audit(spec)` runs the algorithm `samples` times on each of the design's neighbouring
datasets D and D' (`dpclust.audit.designs`), reduces each released output to the design's
scalar statistic, and lower-bounds ε with `dpclust.audit.statistics.audit_samples` (Clopper–Pearson, an event
chosen on one half of the samples and evaluated on the other). It does the same again with every
noise scale halved (`dpclust.audit.statistics.halved_noise`, the positive control: an attack that cannot
see the halved noise has no power). The spec (planned by `dpclust.pipeline.planning`, passed by the
workflow as a param) holds everything the job depends on; the job reads no config.

Randomness: each side's draws come from its own stream of ``SeedSequence(seed)`` (spawned as in
`dpclust.audit.statistics.audit`: D, D', split); every run takes a fresh ``init_seed`` from its stream
(``settings["init_seed"]``, as the estimators do), then the algorithm draws its noise from the same
stream. The halved-noise audit uses the same seed.

Claimed budget: the largest ε (and δ) any run of the plain audit reported spending
(``epsilon_spent``, ``delta_spent``): the budget itself for algorithms that spend all of it, and
the data-dependent bottom-up total of Lu & Shen's algorithms, whose ``epsilon`` is a cap
(config/papers/lushen2020.yaml). The bound is computed at that δ.

A spec may carry a `variant` ({"name": "power", "settings": the overridden settings},
`dpclust.pipeline.audit_labels`), copied into the record for the table.

The record keeps the statistic of every sample (both sides, both audits), so the item's
aggregate can re-evaluate a bound at another confidence (the Bonferroni-adjusted maximum over
designs) with the same split.

The floating-point design (a spec whose `design` is "reachability", planned by
`dpclust.pipeline.audit_plan.floating_point_jobs`) is run by `run_floating_point_audit`
(`dpclust.audit.floating_point.release_audit`): an event fixed in advance on the released bits, counted
on all samples of D and D′ with the current mechanisms (`plain`) and, on the same streams, with every
release made as before the grid (`legacy`, the positive control: no halved-noise audit here); its record
adds the event, the self-check on D and the rounding control (no per-sample statistics: the event's
counts are the whole result). The spec's event says which releases it is for (`mechanism`: Laplace
reachability by default, or "gaussian", the low-order-bit grid of D's values) and may set a `floor`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from dpclust import __version__
from dpclust.api import DPClustError
from dpclust.audit.designs import ADD_REMOVE, BOUNDS, RELATIONS, STATISTICS, design
from dpclust.audit.floating_point import release_audit
from dpclust.audit.statistics import AuditResult, audit_samples, halved_noise
from dpclust.pipeline.audit_labels import FLOATING_POINT_DESIGN
from dpclust.pipeline.resolve import delta_size, import_object, resolve_delta

SCHEMA = 1
#: Keys every audit spec has.
SPEC_KEYS = ("algorithm", "function", "private", "settings", "design", "n", "k", "relation", "epsilon",
             "delta", "samples", "confidence", "seed")


def check_spec(spec: dict) -> dict:
    missing = [key for key in SPEC_KEYS if key not in spec]
    if missing:
        raise DPClustError(f"audit spec lacks {missing}; plan it with dpclust.pipeline.planning")
    if not spec["private"] or spec["epsilon"] is None:
        raise DPClustError(f"{spec['algorithm']} takes no privacy budget: there is nothing to audit")
    if spec["relation"] not in RELATIONS:
        raise DPClustError(f"audit relation must be one of {list(RELATIONS)}, got {spec['relation']!r}")
    if int(spec["samples"]) < 4:
        raise DPClustError(f"audit samples must be >= 4, got {spec['samples']!r}")
    design(spec["design"])
    return spec


def audit_delta(spec: dict) -> float:
    """The audit's δ: a number, or an expression of n ("n^-1.5") resolved from the public size
    (setting `public_n`, the same N on both neighbours) when set, else from the design's n (one δ
    for both neighbours, never each neighbour's own size)."""
    return resolve_delta(spec["delta"], delta_size(spec["settings"], int(spec["n"])))


def result_dict(res: AuditResult) -> dict:
    return {"epsilon_lower_bound": res.epsilon_lower_bound, "threshold": res.threshold, "event": res.event,
            "direction": res.direction, "p_D": res.p_D, "p_Dp": res.p_Dp, "p_lower": res.p_lower,
            "p_upper": res.p_upper, "epsilon_point": _finite(res.epsilon_point), "confidence": res.confidence,
            "delta": res.delta, "n": res.n}


def _finite(x: float):
    return x if np.isfinite(x) else (None if np.isnan(x) else ("inf" if x > 0 else "-inf"))


def _sample(function, data, k, epsilon, delta, settings, stat, n, rng, spent):
    out = np.empty(n)
    shape = (k, data.shape[1])   # the design's dimension (2, or d = 100 for high_dim_corner)
    for i in range(n):
        run_settings = dict(settings, init_seed=int(rng.integers(2**63)))
        res = function(data, k, epsilon, delta, rng, run_settings)
        centers = np.asarray(res.centers, dtype=float)
        if centers.shape != shape or not np.isfinite(centers).all():
            raise DPClustError(f"the algorithm returned centres of shape {centers.shape} (expected {shape}) "
                               "or non-finite values")
        spent.append((float(res.epsilon_spent), float(res.delta_spent)))
        out[i] = stat(centers)
    return out


def draw(spec: dict) -> dict:
    """The statistic samples of both sides (plain and halved noise) and what each run spent."""
    function = import_object(spec["function"])
    des = design(spec["design"])
    k, n_samples = int(spec["k"]), int(spec["samples"])
    D, Dp = des.datasets(int(spec["n"]), spec["relation"])
    settings = dict(spec["settings"], bounds=[float(BOUNDS[0]), float(BOUNDS[1])])
    eps, delta = float(spec["epsilon"]), audit_delta(spec)
    out: dict[str, Any] = {"D": D, "Dp": Dp}
    for mode in ("plain", "halved"):
        ss_D, ss_Dp, _ = np.random.SeedSequence(int(spec["seed"])).spawn(3)   # the split: `evaluate`
        spent: list[tuple[float, float]] = []
        t0 = time.perf_counter()
        if mode == "plain":
            a = _sample(function, D, k, eps, delta, settings, des.stat, n_samples, np.random.default_rng(ss_D), spent)
            b = _sample(function, Dp, k, eps, delta, settings, des.stat, n_samples, np.random.default_rng(ss_Dp), spent)
            calls = None
        else:
            with halved_noise() as counter:
                a = _sample(function, D, k, eps, delta, settings, des.stat, n_samples, np.random.default_rng(ss_D),
                            spent)
                b = _sample(function, Dp, k, eps, delta, settings, des.stat, n_samples, np.random.default_rng(ss_Dp),
                            spent)
            calls = int(sum(counter.values()))
        out[mode] = {"D": a, "Dp": b, "spent": np.array(spent), "wall_time_s": time.perf_counter() - t0,
                     "noise_calls": calls}
    return out


def evaluate(samples_D, samples_Dp, delta: float, confidence: float, seed: int) -> AuditResult:
    """The audit bound from stored samples, with the split stream of ``SeedSequence(seed)`` (the
    same split as the job's, whatever the confidence)."""
    ss_split = np.random.SeedSequence(int(seed)).spawn(3)[2]
    return audit_samples(np.asarray(samples_D, dtype=float), np.asarray(samples_Dp, dtype=float), delta=delta,
                         confidence=confidence, rng=np.random.default_rng(ss_split))


def run_audit(spec: dict) -> dict:
    """Run one planned audit (see module docstring) and return its record."""
    if spec.get("design") == FLOATING_POINT_DESIGN:
        return run_floating_point_audit(spec)
    spec = check_spec(dict(spec))
    des = design(spec["design"])
    drawn = draw(spec)
    plain_spent = drawn["plain"]["spent"]
    claimed_eps = float(plain_spent[:, 0].max())
    claimed_delta = float(plain_spent[:, 1].max())
    conf = float(spec["confidence"])
    results = {}
    for mode in ("plain", "halved"):
        part = drawn[mode]
        res = evaluate(part["D"], part["Dp"], claimed_delta, conf, int(spec["seed"]))
        results[mode] = dict(result_dict(res), wall_time_s=part["wall_time_s"], noise_calls=part["noise_calls"],
                             samples_D=part["D"].tolist(), samples_Dp=part["Dp"].tolist())
    record = {
        "schema": SCHEMA, "kind": "audit",
        "paper": spec.get("paper", ""), "item": spec.get("item", ""),
        "algorithm": spec["algorithm"], "function": spec["function"], "settings": spec["settings"],
        "guarantee": spec.get("guarantee"), "relation": spec["relation"],
        "relation_source": spec.get("relation_source", ""),
        "design": spec["design"], "design_title": des.title, "design_description": des.description,
        "statistic": des.statistic, "statistic_description": STATISTICS[des.statistic][1],
        "target": list(des.target), "n": int(spec["n"]), "k": int(spec["k"]),
        "n_D": int(drawn["D"].shape[0]), "n_Dp": int(drawn["Dp"].shape[0]),
        "D": drawn["D"].tolist(), "Dp": drawn["Dp"].tolist(), "bounds": list(BOUNDS),
        "epsilon_budget": float(spec["epsilon"]), "delta_budget": audit_delta(spec),
        "epsilon_claimed": claimed_eps, "delta_claimed": claimed_delta,
        "epsilon_spent_min": float(plain_spent[:, 0].min()),
        "epsilon_spent_mean": float(plain_spent[:, 0].mean()),
        "samples": int(spec["samples"]), "confidence": conf, "seed": int(spec["seed"]),
        "note": spec.get("note", ""),
        "variant": spec.get("variant"),   # None, or the settings variant ({"name": "power", "settings": ...})
        "plain": results["plain"], "halved": results["halved"],
        "dpclust_version": __version__,
    }
    return record


# ---------------------------------------------------------------------------------------------
# The floating-point design (a spec planned by dpclust.pipeline.audit_plan.floating_point_jobs)
# ---------------------------------------------------------------------------------------------
#: Keys every floating-point spec has.
FLOATING_POINT_SPEC_KEYS = ("algorithm", "function", "private", "settings", "design", "records", "target", "k",
                            "relation", "epsilon", "delta", "samples", "confidence", "seed", "bounds", "event")
#: The self-check's tolerance for an event with `from_Dp` or a `floor`: it may fire on at most this share of
#: D's samples (a sum divided by a noisy count above 1, which `from_Dp` or the floor keeps out, can land on a
#: reachable double, or above the floor, by chance: ≈ 0.05 % measured for SuLQ and Balcan et al.'s
#: Laplace refinement; none in 5,000 runs for SuLQ's Gaussian sums). An event without either is exact on
#: single releases: it must never fire on D.
SELF_CHECK_TOLERANCE = 0.01


def floating_point_datasets(spec: dict) -> tuple[np.ndarray, np.ndarray]:
    """(D, D′) of a floating-point spec: D = its records (each `copies` times, default once); D′ = D and the
    target (add/remove) or D with its last record replaced by the target (replace one)."""
    D = np.tile(np.asarray(spec["records"], dtype=float), (int(spec.get("copies", 1)), 1))
    t = np.asarray(spec["target"], dtype=float)[None, :]
    if spec["relation"] == ADD_REMOVE:
        return D, np.vstack([D, t])
    return D, np.vstack([D[:-1], t])


def _event_dict(res) -> dict:
    return {"epsilon_lower_bound": res.epsilon_lower_bound, "events_D": res.events_D, "events_Dp": res.events_Dp,
            "n_D": res.n_D, "n_Dp": res.n_Dp, "p_D": res.events_D / res.n_D, "p_Dp": res.events_Dp / res.n_Dp,
            "direction": res.direction, "confidence": res.confidence, "delta": res.delta}


def _copies(spec: dict) -> str:
    copies = int(spec.get("copies", 1))
    return f" (each {copies} times)" if copies > 1 else ""


def run_floating_point_audit(spec: dict) -> dict:
    """Run one planned floating-point audit (`dpclust.audit.floating_point.release_audit`) and return its
    record: the event, its counts and bound with the current mechanisms (`plain`) and with every release
    made as before the grid (`legacy`, the positive control), the self-check on D and the rounding control."""
    missing = [key for key in FLOATING_POINT_SPEC_KEYS if key not in spec]
    if missing:
        raise DPClustError(f"floating-point audit spec lacks {missing}; plan it with dpclust.pipeline.audit_plan")
    if spec["relation"] not in RELATIONS:
        raise DPClustError(f"audit relation must be one of {list(RELATIONS)}, got {spec['relation']!r}")
    if int(spec["samples"]) < 4:
        raise DPClustError(f"audit samples must be >= 4, got {spec['samples']!r}")
    function = import_object(spec["function"])
    D, Dp = floating_point_datasets(spec)
    lo, hi = (float(v) for v in spec["bounds"])
    settings = dict(spec["settings"], bounds=[lo, hi])
    event = spec["event"]
    delta = resolve_delta(spec["delta"], delta_size(spec["settings"], D.shape[0]))
    t0 = time.process_time()
    try:
        res = release_audit(function, D, Dp, int(spec["k"]), float(spec["epsilon"]), delta, settings,
                            from_D=event["from_D"], from_Dp=event.get("from_Dp") or (),
                            every_coordinate=bool(event.get("every_coordinate")), interior=(lo, hi),
                            samples=int(spec["samples"]), seed=int(spec["seed"]),
                            confidence=float(spec["confidence"]), legacy=not spec.get("control"),
                            mechanism=str(event.get("mechanism", "laplace")), floor=float(event.get("floor", 0.0)))
    except ValueError as exc:
        raise DPClustError(f"floating-point audit of {spec['algorithm']}: {exc}") from None
    samples = int(spec["samples"])
    tolerance = int(math.floor(SELF_CHECK_TOLERANCE * samples)) if event.get("from_Dp") or event.get("floor") else 0
    plain = dict(_event_dict(res.current), cpu_time_s=res.cpu_seconds["current"],
                 examples_D=res.examples.get("current_D", []), examples_Dp=res.examples.get("current_Dp", []))
    legacy = dict(_event_dict(res.legacy), cpu_time_s=res.cpu_seconds.get("legacy", 0.0),
                  releases=res.legacy_releases, same_as_plain=bool(spec.get("control")),
                  examples_D=res.examples.get("legacy_D", []), examples_Dp=res.examples.get("legacy_Dp", []))
    return {
        "schema": SCHEMA, "kind": "audit",
        "paper": spec.get("paper", ""), "item": spec.get("item", ""),
        "algorithm": spec["algorithm"], "function": spec["function"], "settings": spec["settings"],
        "guarantee": spec.get("guarantee"), "relation": spec["relation"],
        "relation_source": spec.get("relation_source", ""), "name": spec.get("name", ""),
        "control": bool(spec.get("control")),
        "design": FLOATING_POINT_DESIGN, "design_title": "floating point: reachability of the released bits",
        "design_description": (f"D: the records{_copies(spec)}; D′: D and the target. Event, fixed in advance: "
                               + res.event.describe() + " (Mironov 2012; dpclust.audit.floating_point)"),
        "statistic": "event", "statistic_description": res.event.describe(), "event": res.event.as_dict(),
        "target": list(spec["target"]), "n": int(D.shape[0]), "k": int(spec["k"]),
        "n_D": int(D.shape[0]), "n_Dp": int(Dp.shape[0]), "D": D.tolist(), "Dp": Dp.tolist(), "bounds": [lo, hi],
        "epsilon_budget": float(spec["epsilon"]), "delta_budget": delta,
        "epsilon_claimed": res.epsilon_claimed, "delta_claimed": res.delta_claimed,
        "epsilon_spent_min": res.epsilon_spent_min,
        "samples": samples, "confidence": float(spec["confidence"]), "seed": int(spec["seed"]),
        "note": spec.get("note", ""), "variant": spec.get("variant"),
        "plain": plain, "legacy": legacy,
        "self_check": {"events_D": res.current.events_D, "legacy_events_D": res.legacy.events_D,
                       "tolerance": tolerance,
                       "ok": res.current.events_D <= tolerance and res.legacy.events_D <= tolerance},
        "rounding_control": {"grid": res.rounding_grid, "events_D": res.rounding_events[0],
                             "events_Dp": res.rounding_events[1], "ok": res.rounding_control},
        "cpu_time_s": float(time.process_time() - t0),
        "dpclust_version": __version__,
    }
