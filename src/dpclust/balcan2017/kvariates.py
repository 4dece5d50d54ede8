"""k-variates++ (Nock, Canyasse, Boreli & Nielsen 2016), the baseline of Balcan et al. (2017) §7, and
its distributed SimHash version ("kvars" of Cohen-Addad et al. 2022, 500 nodes).

k-variates++: k-means++ seeding in which every chosen data point x is replaced by a draw from a
"probe" distribution around it; with a Laplace probe, c = x + Lap(b)^d (Nock et al. §4, the DP
instance). For t = 1..k: pick x_i with probability ∝ D(x_i)² (squared distance to the centres
released so far; uniform for t = 1), release c_t = x_i + Lap(b)^d.

Privacy (read this). The D²-sampling step is not noised. Nock et al.'s DP theorem calibrates the
probe to the data's spread and needs an assumption on it (Balcan et al. Table 1 marks it "*").
dpclust does NOT rely on that assumption: every probe is calibrated to the L1 diameter
d·(hi − lo) of the public box (at ε/k per round, sequential). Then, for any two points x, x' of the
box, the densities of x + Lap(b) and x' + Lap(b) are within a factor e^{ε/k} everywhere, hence so
are ANY two mixtures of such densities: whatever the (data-dependent) sampling weights are, a
round's output law on D and on a neighbour D' (add/remove or replace one point) differ by at most
e^{ε/k}, and adaptive sequential composition over the k rounds gives ε-DP unconditionally
(clipping to the box is post-processing). The price is utility: this calibration is far coarser
than Nock et al.'s spread-based one, so our k-variates++ is worse than theirs. `info.privacy_note`
says so in every run record. (Audit: tests/balcan2017/test_kvariates_audit.py.)

Distributed version (`kvariates_simhash`): the data are centred (public box centre) and split by
SimHash (⌈log2 N⌉ random Gaussian hyperplanes; bucket = code mod N, N = `nodes` = 500, EXT HST
paper / google-research hst_clustering). Per round a node is chosen with probability ∝ its noisy
D² potential (Laplace, sensitivity (2Λ)² — 1 in the first round, where the potential is a count —
since one point lies in one node under add/remove (Def. 1): parallel composition, a share
`potential_fraction` of the round's budget), then a point of that node ∝ D², released with the
Laplace probe (the rest of the round's budget). The same mixture argument makes the in-node step
DP. An empty node (its noisy potential can be positive) releases the probe around the box centre,
a data-independent point of the box, so its law is also a box-centred Laplace (a uniform proposal
would not be within e^{ε} of the probe and broke DP). The number of non-empty nodes is an exact
count of the data and is not released. The per-round protocol (noisy node potentials, in-node D²
choice, probe) is REC in the k-variates++ spirit; the google-research code's kvars instead lets each
node propose a DP 1-median or a random point and picks among the proposals by D¹ weights (INVENTORY,
EXT) — that protocol is not reproduced here.
"""

from __future__ import annotations

import math

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.mechanisms import laplace_mechanism
from dpclust.metrics import squared_distances
from dpclust.settings import PURE, Guarantee, Interval, Setting, Settings, declared

#: The centralised k-variates++ has no settings (its probe is fixed by ε/k and the public box).
SETTINGS = Settings()
SIMHASH_SETTINGS = Settings(
    nodes=Setting(500, "EXT Cohen-Addad et al. 2022 §6 '500 nodes' (their kvars baseline)", Interval(int, 1),
                  "N: SimHash buckets (nodes); ⌈log2 N⌉ hyperplanes"),
    potential_fraction=Setting(
        0.5, "MISSING→REC half of each round's ε to the noisy node potentials, the rest to the probe",
        Interval(float, 0.0, 1.0, open_lo=True), "share of a round's ε for the node potentials, in (0, 1)"),
)
PRIVACY_NOTE = ("D^2 sampling is not noised, but every probe is Laplace calibrated to the public box's L1 "
                "diameter, so each round is (epsilon/k)-DP for any sampling weights: epsilon-DP without "
                "Nock et al. (2016)'s data-spread assumption (and a coarser, worse-utility probe than theirs)")


def _d2_update(Xc, D, c):
    d_new = squared_distances(Xc, c[None, :])[:, 0]
    return d_new if D is None else np.minimum(D, d_new)


#: Declared guarantee of both versions (module docstring): ε-DP for add/remove (and replace) one record,
#: without Nock et al.'s data assumption.
KVARIATES_GUARANTEE = Guarantee(PURE.kind, "every probe is Laplace calibrated to the public box's L1 diameter; "
                                "D² sampling un-noised (mixture argument, module docstring)")


@declared(SETTINGS, guarantee=KVARIATES_GUARANTEE)
def kvariates(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """k-variates++ with a Laplace probe (Nock et al. 2016); see the module docstring on privacy."""
    X = validate_inputs(X, k, epsilon, delta)
    lo, hi = public_box(settings, X)
    n, d = X.shape
    h = (hi - lo) / 2.0
    centre = np.full(d, (lo + hi) / 2.0)
    Xc = X - centre
    acc = Accountant(epsilon, delta)
    C = np.empty((k, d))
    D = None
    for t in range(k):
        if D is None or D.sum() <= 0:
            i = int(rng.integers(n))
        else:
            i = int(rng.choice(n, p=D / D.sum()))
        C[t] = laplace_mechanism(Xc[i], 2 * d * h, epsilon / k, rng, acc, label=f"k-variates++ probe {t + 1}")
        np.clip(C[t], -h, h, out=C[t])
        D = _d2_update(Xc, D, C[t])
    return ClusteringResult.from_accountant(C + centre, acc, iterations=k, privacy_note=PRIVACY_NOTE)


def simhash_buckets(Xc: np.ndarray, nodes: int, rng: np.random.Generator) -> np.ndarray:
    """Bucket of every row: SimHash code over ⌈log2 nodes⌉ random hyperplanes, modulo `nodes`."""
    bits = max(1, math.ceil(math.log2(max(nodes, 2))))
    H = rng.standard_normal((Xc.shape[1], bits))
    code = (Xc @ H >= 0).astype(np.int64) @ (np.int64(1) << np.arange(bits, dtype=np.int64))
    return code % nodes


@declared(SIMHASH_SETTINGS, guarantee=Guarantee(
    PURE.kind, "noisy node potentials (parallel over nodes) + box-calibrated Laplace probes (module docstring)"))
def kvariates_simhash(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Distributed k-variates++ over `nodes` SimHash buckets (the HST paper's "kvars")."""
    X = validate_inputs(X, k, epsilon, delta)
    lo, hi = public_box(settings, X)
    nodes = int(settings["nodes"])
    frac = float(settings["potential_fraction"])
    if not frac < 1:
        raise DPClustError(f"potential_fraction must lie in (0, 1), got {frac}")
    n, d = X.shape
    h = (hi - lo) / 2.0
    centre = np.full(d, (lo + hi) / 2.0)
    Xc = X - centre
    bucket = simhash_buckets(Xc, nodes, rng)
    acc = Accountant(epsilon, delta)
    eps_round = epsilon / k
    sens_pot = (2.0 * math.sqrt(d) * h) ** 2
    C = np.empty((k, d))
    D = None
    for t in range(k):
        w = np.ones(n) if D is None else D
        pot = np.bincount(bucket, weights=w, minlength=nodes)
        noisy = laplace_mechanism(pot, sens_pot if D is not None else 1.0, frac * eps_round, rng, acc,
                                  label=f"kvars node potentials {t + 1} (parallel over nodes)")
        noisy = np.maximum(noisy, 0.0)
        if noisy.sum() <= 0:
            node = int(rng.integers(nodes))
        else:
            node = int(rng.choice(nodes, p=noisy / noisy.sum()))
        members = np.flatnonzero(bucket == node)
        if members.size == 0:  # empty node: probe around the box centre (data-independent point of the box)
            x = np.zeros(d)
        else:
            wm = w[members]
            x = Xc[int(members[rng.integers(members.size)] if wm.sum() <= 0 else rng.choice(members, p=wm / wm.sum()))]
        C[t] = laplace_mechanism(x, 2 * d * h, (1 - frac) * eps_round, rng, acc, label=f"kvars probe {t + 1}")
        np.clip(C[t], -h, h, out=C[t])
        D = _d2_update(Xc, D, C[t])
    return ClusteringResult.from_accountant(C + centre, acc, iterations=k, nodes=nodes, privacy_note=PRIVACY_NOTE)
