"""The private baselines of Lu & Shen §7.1 under the paper's budget protocol.

The algorithms themselves are Su et al.'s modules (imported lazily, never re-implemented here):
BLUM = DPLloyd with ``allocation: uniform`` [12], DWORK = ``geometric`` (1/2^i) [13], SU = ``su_tops``
(TOPS 2017) [11], all from `dpclust.su2016.dplloyd:dplloyd`; GUPT = `dpclust.su2016.gupt:gkm` [14];
PrivGene = `dpclust.su2016.privgene:pgkm` [15].

Budget protocol (§7.1, STATED): "we first allocate the same privacy budget to each atom step for
Algorithm 1 and GUPT, then calculate their overall privacy budgets. Next we take the overall
privacy budget of Algorithm 1 as the overall privacy budget for the methods [that] cannot
converge" (SU, PrivGene, DWORK, BLUM). So each wrapper here
1. runs Algorithm 1 (`reference` settings, strategy ``budget_reference``) from the same shared
   initial centroids with an independent child generator, and takes its bottom-up total
   ε_ref = ε₀ + (#sampling iterations)·ε_step (≤ the run's cap `epsilon`);
2. runs the baseline with total budget ε_ref; its own accountant records what it spends.
Only ε_ref (i.e. the reference run's iteration count) is used from step 1; the reference centres
are discarded. This makes the baselines' budget a data-dependent number, which is the paper's
protocol: the stopping time of Algorithm 1 is not privatised in the paper, and neither is it here
(stated in the report). The run records' ``epsilon_spent`` are what each baseline actually spent;
``info.epsilon_reference`` is ε_ref.

Interpretations (named settings in config/papers/lushen2020.yaml):
* ``budget_reference``: which strategy's total the baselines get (MISSING→REC ``prior``: the larger
  of the two totals, the conservative choice for the claim "Algorithm 1 beats every baseline");
* the reference run uses a child generator ``default_rng(rng.integers(2**63))``: the runner derives
  each algorithm's generator from its name, so the recorded Prior run of the same seed cannot be
  replayed; the child run has the same distribution;
* GUPT is bottom-up like Algorithm 1 (§7.1) and has one noisy aggregation (one atom step), so its
  total is ε_step = epsilon / atom_steps (``gupt_budget: atom_step``); ``algorithm1_total`` gives it
  ε_ref instead;
* DWORK's iteration count (MISSING: "until using up the overall privacy budget"): ``iterations:
  reference`` = the reference run's number of sampling iterations, capped at ``max_iterations``.
* §7.1 says "local sensitivity is applied for all DP algorithms"; the baselines keep Su et al.'s
  global sensitivities (local sensitivity is not DP), which can only favour them less.
"""

from __future__ import annotations

import numpy as np

from ..api import ClusteringResult, DPClustError, validate_inputs
from .algorithm import lushen

SU_DPLLOYD = "dpclust.su2016.dplloyd:dplloyd"
SU_GUPT = "dpclust.su2016.gupt:gkm"
SU_PRIVGENE = "dpclust.su2016.privgene:pgkm"


def reference_total(X, k, epsilon, rng, settings) -> tuple[float, dict]:
    """ε_ref: the bottom-up total of one run of Algorithm 1 from the shared initial centroids."""
    ref = dict(settings["reference"])
    ref.update(bounds=settings["bounds"], init_seed=settings["init_seed"], diagnose_lloyd=False,
               strategy=settings["budget_reference"])
    child = np.random.default_rng(int(rng.integers(2**63)))
    res = lushen(X, k, epsilon, 0.0, child, ref)
    return res.epsilon_spent, {"epsilon_reference": res.epsilon_spent,
                               "reference_iterations": res.iterations,
                               "reference_sampling_iterations": res.info["sampling_iterations"],
                               "reference_strategy": ref["strategy"]}


def _su(spec: str):
    """Su et al.'s function `module:name` and its module DEFAULTS, imported lazily. The import
    statement is written out (inside the function) so that `dpclust.codehash` sees the dependency."""
    try:
        from ..su2016 import dplloyd, gupt, privgene
    except ImportError as exc:
        raise DPClustError(f"Lu & Shen baselines need Su et al.'s modules (dpclust.su2016): {exc}") from None
    modules = {SU_DPLLOYD: dplloyd, SU_GUPT: gupt, SU_PRIVGENE: privgene}
    module = modules[spec]
    function = getattr(module, spec.rpartition(":")[2], None)
    if function is None:
        raise DPClustError(f"Lu & Shen baseline needs {spec}, which dpclust.su2016 does not define")
    return function, dict(getattr(module, "DEFAULTS", {}))


def _run(spec, X, k, total, rng, settings, own: dict, ref_info: dict) -> ClusteringResult:
    """Call Su et al.'s algorithm with its module DEFAULTS overridden by our `own` settings."""
    function, inner = _su(spec)
    inner.update(own)
    inner.update(bounds=settings["bounds"], init_seed=settings["init_seed"])
    res = function(X, k, float(total), 0.0, rng, inner)
    res.info = dict(res.info, **ref_info, budget_protocol="Lu & Shen §7.1: total = bottom-up total of Algorithm 1")
    return res


def dplloyd_baseline(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """BLUM / DWORK / SU: Su et al.'s DPLloyd with `settings["dplloyd"]` and total ε_ref."""
    X = validate_inputs(X, k, epsilon, delta)
    total, info = reference_total(X, k, epsilon, rng, settings)
    own = dict(settings["dplloyd"])
    if own.get("iterations") == "reference":
        own["iterations"] = max(1, min(int(info["reference_sampling_iterations"]), int(settings["max_iterations"])))
    info["baseline_iterations_setting"] = own.get("iterations")
    return _run(SU_DPLLOYD, X, k, total, rng, settings, own, info)


def privgene_baseline(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """PrivGene (Su et al.'s PGkM) with total ε_ref."""
    X = validate_inputs(X, k, epsilon, delta)
    total, info = reference_total(X, k, epsilon, rng, settings)
    return _run(SU_PRIVGENE, X, k, total, rng, settings, settings["privgene"], info)


def gupt_baseline(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """GUPT (Su et al.'s GkM) with the bottom-up total of its one atom step (or ε_ref)."""
    X = validate_inputs(X, k, epsilon, delta)
    how = settings["gupt_budget"]
    if how == "atom_step":
        total = float(epsilon) / float(settings["reference"]["atom_steps"])
        info = {"epsilon_reference": total, "reference_strategy": "atom_step"}
    elif how == "algorithm1_total":
        total, info = reference_total(X, k, epsilon, rng, settings)
    else:
        raise DPClustError(f"gupt_budget must be 'atom_step' or 'algorithm1_total', got {how!r}")
    return _run(SU_GUPT, X, k, total, rng, settings, settings["gupt"], info)
