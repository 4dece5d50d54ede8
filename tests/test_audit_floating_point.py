"""The floating-point audit (`dpclust.audit.floating_point`, Mironov 2012) at claimed ε = 1.

Power: the mechanism before the grid (``x + rng.laplace(0, b)``, reproduced here) on x = 0 vs 1 is
caught far above its claimed ε by the exact reachability test and by the generic off-grid event; the
Gaussian mechanism before the grid (``x + rng.normal(0, σ)``) by the Gaussian event (the low-order-bit grid
of D's value x = 1, which every fl(1 + N) lies on).
Self-check: samples drawn from x are always reachable from x (0 false alarms on D). Rounding
control: outputs rounded to a data-independent grid never fire. The mechanisms of
`dpclust.mechanisms` and the algorithms the auditor caught (k-variates++, sample-and-aggregate,
SuLQ) give no event.
"""
from __future__ import annotations

import numpy as np
import pytest

from dpclust import mechanisms as M
from dpclust.audit import floating_point as F

EPS = 1.0
N = 3000          # runs a side
FINE = 2.0 ** -53  # the generic event's grid, fixed in advance: fl(1 + N) is a multiple of it


def _old_laplace_mechanism(value, sensitivity, epsilon, rng, accountant=None, label="laplace", changed=None):
    """The Laplace mechanism before the grid: value + rng.laplace(0, Δ/ε) (what the auditor caught)."""
    scale = M.laplace_scale(sensitivity, epsilon)
    value = np.asarray(value, dtype=float)
    if accountant is not None:
        accountant.spend(epsilon, 0.0, label=label)
    return value + rng.laplace(0.0, scale, size=value.shape)


def _not_reachable_from(x, b):
    return lambda y: np.array([not F.laplace_reachable(v, x, b) for v in np.atleast_1d(y)])


# ---------------------------------------------------------------------------------------------
# The design has power on the old sampler; self-check and rounding control
# ---------------------------------------------------------------------------------------------
def _old_outputs(x, seed, b=1.0):
    return x + np.random.default_rng(seed).laplace(0.0, b, size=N)


def test_old_laplace_is_caught_by_reachability_with_no_false_alarm():
    b = M.laplace_scale(1.0, EPS)
    out_D, out_Dp = _old_outputs(0.0, 1, b), _old_outputs(1.0, 2, b)
    event = _not_reachable_from(0.0, b)                     # "y cannot come from x = 0"
    k_D, _ = F.count_events(out_D, event)
    k_Dp, _ = F.count_events(out_Dp, event)
    assert k_D == 0                                          # self-check: every sample of D is reachable
    res = F.event_audit(k_D, N, k_Dp, N)
    assert res.epsilon_lower_bound > 3 * EPS and res.direction == "D'/D"
    # and symmetrically from x = 1
    assert F.count_events(out_Dp, _not_reachable_from(1.0, b))[0] == 0


def test_old_laplace_is_caught_by_the_generic_low_bit_event():
    out_D, out_Dp = _old_outputs(0.0, 3), _old_outputs(1.0, 4)
    k_D = int(F.off_grid(out_D, FINE).sum())
    k_Dp = int(F.off_grid(out_Dp, FINE).sum())
    assert k_Dp == 0                                         # fl(1 + N) is always a multiple of 2^-53
    assert F.event_audit(k_D, N, k_Dp, N).epsilon_lower_bound > 3 * EPS


def test_rounding_control_never_fires():
    gamma = 2.0 ** -16                                       # data independent
    for x, seed in ((0.0, 5), (1.0, 6)):
        rounded = F.round_to_grid(_old_outputs(x, seed), gamma)
        assert not F.off_grid(rounded, FINE).any() and not F.off_grid(rounded, gamma).any()
        assert F.grid_reachable(rounded, x, 1.0).all()


def test_event_audit_counts_to_epsilon():
    assert F.event_audit(0, 1000, 0, 1000).epsilon_lower_bound == 0.0
    strong = F.event_audit(0, 1000, 900, 1000)
    assert strong.direction == "D'/D" and strong.epsilon_lower_bound > 5
    with pytest.raises(ValueError):
        F.event_audit(5, 4, 0, 4)


# ---------------------------------------------------------------------------------------------
# The mechanisms: no event
# ---------------------------------------------------------------------------------------------
def test_laplace_mechanism_gives_no_event():
    b = M.laplace_scale(1.0, EPS)
    out = {x: M.laplace_mechanism(np.full(N, x), 1.0, EPS, np.random.default_rng(7 + int(x))) for x in (0.0, 1.0)}
    for x_D in (0.0, 1.0):
        for y in out.values():
            assert F.grid_reachable(y, x_D, b).all()         # the grid mechanism reaches both from either x
            assert not F.off_grid(y, FINE).any()
    # the auditor's exact test (numpy's sampler before the grid) no longer separates D from D'
    event = _not_reachable_from(0.0, b)
    k_D, _ = F.count_events(out[0.0], event)
    k_Dp, _ = F.count_events(out[1.0], event)
    assert F.event_audit(k_D, N, k_Dp, N).epsilon_lower_bound <= EPS


def test_gaussian_mechanism_gives_no_event_and_the_old_one_is_caught():
    sigma = M.gaussian_sigma(1.0, EPS, 1e-5)
    old = {x: x + np.random.default_rng(9 + int(x)).normal(0.0, sigma, size=N) for x in (0.0, 1.0)}
    res = F.event_audit(int(F.off_grid(old[0.0], FINE).sum()), N, int(F.off_grid(old[1.0], FINE).sum()), N)
    assert res.epsilon_lower_bound > 3 * EPS                  # power on the old Gaussian
    for x in (0.0, 1.0):
        y = M.gaussian_mechanism(np.full(N, x), 1.0, EPS, 1e-5, np.random.default_rng(11 + int(x)))
        assert not F.off_grid(y, FINE).any()
        for x_D in (0.0, 1.0):
            assert F.grid_reachable(y, x_D, sigma, support=M.GAUSSIAN_SUPPORT).all()


# ---------------------------------------------------------------------------------------------
# Gaussian releases: the low-order-bit grid of D's value (module docstring, (d))
# ---------------------------------------------------------------------------------------------
def _doubles(n, seed):
    """Doubles of every magnitude from 2^-80 to 2^12, both signs, full random mantissas."""
    rng = np.random.default_rng(seed)
    return np.ldexp(rng.uniform(1.0, 2.0, n), rng.integers(-80, 12, n)) * rng.choice([-1.0, 1.0], n)


@pytest.mark.parametrize("x", [1.0, 0.5, 2.0 ** -8, -0.75, 0.3, 1.5, 3e-5, -1.0 + 2.0 ** -52])
def test_fl_x_plus_any_double_lies_on_the_low_bit_grid_of_x(x):
    """The lemma behind the Gaussian event: fl(x + N) is a multiple of Q(x) = 2^(⌊log2|x|⌋ − 53) for every
    double N, including N cancelling x to a few ulps and N far below or above x."""
    q = F.low_bit_grid(x)
    assert q == 2.0 ** (np.floor(np.log2(abs(x))) - 53)
    n = np.concatenate([_doubles(200_000, 1), -x + _doubles(2000, 2) * 2.0 ** -40,     # any magnitude; near −x
                        -x * (1 + np.arange(-50, 50) * 2.0 ** -52)])                   # cancelling x to a few ulps
    assert not F.off_grid(x + n, q).any()
    assert F.off_grid(n[np.abs(n) < abs(x) / 4], q).mean() > 0.9        # N alone, below |x|/4: off it


def test_low_bit_grid_and_gaussian_event_reject_zero_and_from_dp():
    assert F.low_bit_grid(1.0) == 2.0 ** -53 and F.low_bit_grid(-0.5) == 2.0 ** -54
    with pytest.raises(ValueError):
        F.low_bit_grid(0.0)
    with pytest.raises(ValueError, match="!= 0"):
        F.ReleaseEvent((1.0,), (0.0,), mechanism="gaussian")
    with pytest.raises(ValueError, match="from_Dp"):
        F.ReleaseEvent((1.0,), (1.0,), (0.0,), mechanism="gaussian")
    with pytest.raises(ValueError, match="finer"):                      # a grid release could fire
        F.ReleaseEvent((2.0 ** -60,), (1.0,), mechanism="gaussian")
    with pytest.raises(ValueError, match="mechanism"):
        F.ReleaseEvent((1.0,), (1.0,), mechanism="poisson")


GAUSS_SIGMA = M.gaussian_sigma(1.0, EPS, 1e-5)     # ≈ 3.73: L2 sensitivity 1, (1, 1e-5)
GAUSS_EVENT = F.ReleaseEvent((GAUSS_SIGMA,), (1.0,), interior=(-1.0, 1.0), mechanism="gaussian")


def test_legacy_gaussian_is_caught_by_the_low_bit_event_with_no_false_alarm():
    """x = 1 (D) vs 0 (D′), 3,000 a side: the raw-float Gaussian release fl(x + N) (numpy's ziggurat, the
    doubles of gaussian_mechanism) fires the event never on D and on ≈ 7 % of D′ (|N| < ½, low bits set)."""
    out_D = F.legacy_gaussian(np.ones(N), GAUSS_SIGMA, np.random.default_rng(51))
    out_Dp = F.legacy_gaussian(np.zeros(N), GAUSS_SIGMA, np.random.default_rng(52))
    k_D, _ = F.count_events(out_D[:, None], GAUSS_EVENT)
    k_Dp, _ = F.count_events(out_Dp[:, None], GAUSS_EVENT)
    assert k_D == 0
    res = F.event_audit(k_D, N, k_Dp, N, delta=1e-5)
    assert res.direction == "D'/D" and res.epsilon_lower_bound > 3.0 * EPS      # measured 3.74 (k_Dp = 215)
    # rounding control: the same outputs on a data-independent grid never fire
    gamma = M.grid_spacing(GAUSS_SIGMA)
    for out in (out_D, out_Dp):
        assert F.count_events(F.round_to_grid(out, gamma)[:, None], GAUSS_EVENT)[0] == 0


def test_the_gaussian_event_never_fires_on_the_grid_releases():
    for x, seed in ((1.0, 53), (0.0, 54), (0.3, 55)):
        y = M.gaussian_mechanism(np.full(N, x), 1.0, EPS, 1e-5, np.random.default_rng(seed))
        assert F.count_events(y[:, None], GAUSS_EVENT)[0] == 0
        # one σ per row (NoisyAVG's gaussian_on_grid), each row on its own grid
        sig = np.array([[0.05], [0.3], [GAUSS_SIGMA]])
        z = M.gaussian_on_grid(np.full((3, 500), x), sig, np.random.default_rng(seed))
        event = F.ReleaseEvent((0.05, 0.3, GAUSS_SIGMA), (1.0,), mechanism="gaussian")
        assert not any(event(row[:, None]) for row in z)


def test_release_audit_with_the_gaussian_event_on_the_gaussian_control():
    """The design's runner (release_audit, mechanism="gaussian") on the legacy raw-float Gaussian sampler
    (legacy_gaussian_release: the Gaussian positive control), 1,000 a side: ε ≥ 3 at a claimed (1, 1e-5)."""
    res = F.release_audit(F.legacy_gaussian_release, [[1.0, 1.0]], [[1.0, 1.0], [-1.0, -1.0]], 1, EPS, 1e-5,
                          {"bounds": [-1.0, 1.0]}, from_D=[1.0], interior=(-1.0, 1.0), samples=1000, seed=2012,
                          legacy=False, mechanism="gaussian")
    assert res.event.scales == (M.gaussian_sigma(2.0 ** 0.5, EPS, 1e-5),) and res.event.grid == 2.0 ** -53
    assert res.self_check and res.rounding_control and res.current.events_D == 0
    assert (res.epsilon_claimed, res.delta_claimed) == (EPS, 1e-5)
    assert res.current.epsilon_lower_bound > 2.5 * EPS                     # measured 3.0 (109 events on D′)


# ---------------------------------------------------------------------------------------------
# The algorithms the auditor caught, at their audit settings: no event
# ---------------------------------------------------------------------------------------------
BOX = {"bounds": [-1.0, 1.0], "init_seed": 0}
D1, D1_SHIFTED = np.zeros((1, 2)), np.full((1, 2), 0.5)          # D = {(0,0)}, D' = D + (0.5, 0.5)


def _kvariates_outputs(data, seed, n=N):
    from dpclust.balcan2017.kvariates import kvariates

    rng = np.random.default_rng(seed)
    return np.array([kvariates(data, 1, EPS, 0.0, rng, BOX).centers[0] for _ in range(n)])


def _probe_event(x_D, b, h):
    """A coordinate strictly inside the box (not clipped) that numpy's old sampler cannot reach from x_D."""
    return lambda c: np.array([abs(v) < h and not F.laplace_reachable(v, x_D, b) for v in c])


@pytest.mark.slow
def test_kvariates_gives_no_event_and_the_old_probe_is_caught(monkeypatch):
    import dpclust.balcan2017.kvariates as kv

    b = M.laplace_scale(2 * 2 * 1.0, EPS)       # the probe: L1 diameter d·(hi − lo) of the box, ε/k
    gamma = M.grid_spacing(b)
    new_D, new_Dp = _kvariates_outputs(D1, 21), _kvariates_outputs(D1_SHIFTED, 22)
    for out in (new_D, new_Dp):
        assert not F.off_grid(out, gamma).any()           # every probe (or clipped face) on the grid
        for x_D in (0.0, 0.5):
            assert (F.grid_reachable(out, x_D, b) | (np.abs(out) == 1.0)).all()
    k_D, _ = F.count_events(new_D, _probe_event(0.0, b, 1.0))
    k_Dp, _ = F.count_events(new_Dp, _probe_event(0.0, b, 1.0))
    assert F.event_audit(k_D, N, k_Dp, N).epsilon_lower_bound <= EPS
    monkeypatch.setattr(kv, "laplace_mechanism", _old_laplace_mechanism)
    old_D, old_Dp = _kvariates_outputs(D1, 23, 1500), _kvariates_outputs(D1_SHIFTED, 24, 1500)
    k_D, _ = F.count_events(old_D, _probe_event(0.0, b, 1.0))
    k_Dp, _ = F.count_events(old_Dp, _probe_event(0.0, b, 1.0))
    assert k_D == 0 and F.event_audit(k_D, 1500, k_Dp, 1500).epsilon_lower_bound > 3 * EPS


@pytest.mark.slow
def test_sample_and_aggregate_gives_no_event():
    from dpclust.balcan2017.sample_aggregate import sample_aggregate

    settings = {**BOX, "public_n": 4, "block_lloyd_iterations": 0}
    X_D = np.zeros((4, 2))
    X_Dp = np.vstack([X_D[:3], [[0.5, 0.5]]])                # one record replaced (n public)
    m = 2                                                     # ⌊4 / 4^0.4⌋ blocks
    b = M.laplace_scale(1 * 2 * 2.0 / m, EPS)                 # k·d·(hi − lo)/m
    gamma = M.grid_spacing(b)
    for data, seed in ((X_D, 31), (X_Dp, 32)):
        rng = np.random.default_rng(seed)
        out = np.array([sample_aggregate(data, 1, EPS, 0.0, rng, settings).centers[0] for _ in range(600)])
        assert not F.off_grid(out, gamma).any() and not F.off_grid(out, FINE).any()


@pytest.mark.slow
def test_sulq_gives_no_event():
    """SuLQ released fl(sum + Lap) whenever the noisy count is ≤ 1; now that branch is a grid value
    reachable from both sums, and the auditor's event (reachable by the old sampler from the sum of D',
    not from that of D) has no power beyond ε."""
    from dpclust.balcan2017.sulq import sulq

    settings = {**BOX, "iterations": 1, "sum_mechanism": "laplace", "count_fraction": 0.5}
    D, Dp = np.zeros((1, 2)), np.array([[0.0, 0.0], [0.5, 0.5]])        # add one record
    b_s = M.laplace_scale(2.0, 0.5 * EPS)                              # L1 radius d·h, half of ε
    gamma = M.grid_spacing(b_s)

    def auditor(c):
        return np.array([abs(v) < 1.0 and F.laplace_reachable(v, 0.5, b_s) and not F.laplace_reachable(v, 0.0, b_s)
                         for v in c])

    outs = []
    for data, seed in ((D, 41), (Dp, 42)):
        rng = np.random.default_rng(seed)
        outs.append(np.array([sulq(data, 1, EPS, 0.0, rng, settings).centers[0] for _ in range(1500)]))
    for out in outs:
        raw = ~F.off_grid(out, gamma)                                  # the noisy-count ≤ 1 branch
        assert raw.any()
        for x_D in (0.0, 0.5):
            assert F.grid_reachable(out[raw], x_D, b_s).all()
    k_D, _ = F.count_events(outs[0], auditor)
    k_Dp, _ = F.count_events(outs[1], auditor)
    assert F.event_audit(k_D, 1500, k_Dp, 1500).epsilon_lower_bound <= EPS
