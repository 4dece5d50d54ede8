"""Cost of releasing on the grid (dpclust.mechanisms, Mironov 2012) against the mechanisms before it.

The old mechanisms are reproduced inline (``value + rng.laplace(0, b)``, ``value + rng.normal(0, σ)``):
1. micro: laplace_mechanism / gaussian_mechanism on vectors of 10, 10^3 and 10^6 values;
2. whole runs: DPLloyd (Su et al.), SuLQ (Balcan et al.) and HST k-median (Cohen-Addad et al.) on a
   100,000 × 10 array, k = 10, the algorithm module's `laplace_mechanism` swapped for the old one.

Run once (one core):  .venv/bin/python benchmarks/bench_mechanisms.py
Prints the best of `REPEATS` timings and the new/old ratios, and for whole runs also the time spent
inside the mechanisms (old and new runs alternate; the share added by the grid is the robust
number on a loaded machine). The target (the issue's): at most 5 % more CPU for a whole run.
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402

import numpy as np  # noqa: E402

from dpclust import mechanisms as M  # noqa: E402

REPEATS = 7


def old_laplace_mechanism(value, sensitivity, epsilon, rng, accountant=None, label="laplace", changed=None):
    """The Laplace mechanism before the grid."""
    scale = M.laplace_scale(sensitivity, epsilon)
    value = np.asarray(value, dtype=float)
    if accountant is not None:
        accountant.spend(epsilon, 0.0, label=label)
    return value + rng.laplace(0.0, scale, size=value.shape)


def old_gaussian_mechanism(value, sensitivity, epsilon, delta, rng, accountant=None, label="gaussian",
                           calibration="analytic", changed=None):
    """The Gaussian mechanism before the grid."""
    sigma = M.gaussian_sigma(sensitivity, epsilon, delta, calibration)
    value = np.asarray(value, dtype=float)
    if accountant is not None:
        accountant.spend(epsilon, delta, label=label)
    return value + rng.normal(0.0, sigma, size=value.shape)


def best(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def micro() -> list[tuple[str, int, float, float]]:
    rows = []
    for n in (10, 1_000, 1_000_000):
        value = np.linspace(-1.0, 1.0, n)
        loops = max(1, 200_000 // n)
        rng = np.random.default_rng(0)

        def run(f, *args):
            return lambda: [f(value, *args, rng) for _ in range(loops)]

        rows.append(("laplace", n, best(run(old_laplace_mechanism, 1.0, 0.5)) / loops,
                     best(run(M.laplace_mechanism, 1.0, 0.5)) / loops))
        rows.append(("gaussian", n, best(run(old_gaussian_mechanism, 1.0, 0.5, 1e-6)) / loops,
                     best(run(M.gaussian_mechanism, 1.0, 0.5, 1e-6)) / loops))
    return rows


@contextmanager
def old_mechanisms(*modules):
    saved = [(m, getattr(m, "laplace_mechanism"), getattr(m, "gaussian_mechanism", None)) for m in modules]
    try:
        for m, _, g in saved:
            m.laplace_mechanism = old_laplace_mechanism
            if g is not None:
                m.gaussian_mechanism = old_gaussian_mechanism
        yield
    finally:
        for m, lap, g in saved:
            m.laplace_mechanism = lap
            if g is not None:
                m.gaussian_mechanism = g


@contextmanager
def timed(modules, totals: dict):
    """Wrap the modules' mechanism names to add the time spent inside them to `totals["mech"]`."""
    saved = []
    for m in modules:
        for name in ("laplace_mechanism", "gaussian_mechanism"):
            if hasattr(m, name):
                f = getattr(m, name)

                def wrapper(*a, _f=f, **kw):
                    t0 = time.perf_counter()
                    try:
                        return _f(*a, **kw)
                    finally:
                        totals["mech"] += time.perf_counter() - t0

                saved.append((m, name, f))
                setattr(m, name, wrapper)
    try:
        yield totals
    finally:
        for m, name, f in saved:
            setattr(m, name, f)


def whole_runs(rounds: int = 7) -> list[tuple[str, float, float, float, float]]:
    """(case, best old run, best new run, time in the old mechanisms, time in the new ones) per case;
    old and new runs alternate (the machine's load drifts)."""
    from dpclust.balcan2017 import sulq as sulq_module
    from dpclust.cohenaddad2022 import hst as hst_module
    from dpclust.cohenaddad2022 import private_lloyd as private_lloyd_module
    from dpclust.su2016 import dplloyd as dplloyd_module

    rng = np.random.default_rng(1)
    X = np.clip(np.concatenate([c + 0.1 * rng.standard_normal((10_000, 10)) for c in rng.uniform(-0.7, 0.7, (10, 10))]),
                -1.0, 1.0)
    X01 = (X + 1.0) / 2.0
    cases = [
        ("DPLloyd 100k x 10, k = 10", [dplloyd_module], lambda: dplloyd_module.dplloyd(
            X, 10, 1.0, 0.0, np.random.default_rng(2), {"bounds": [-1.0, 1.0], "init_seed": 3})),
        ("SuLQ 100k x 10, k = 10", [sulq_module], lambda: sulq_module.sulq(
            X, 10, 1.0, 1e-6, np.random.default_rng(2), {"bounds": [-1.0, 1.0], "init_seed": 3})),
        ("HST k-median 100k x 10, k = 10", [hst_module, private_lloyd_module], lambda: private_lloyd_module.hst_kmedian(
            X01, 10, 1.0, 0.0, np.random.default_rng(2), {"bounds": [0.0, 1.0], "init_seed": 3})),
    ]
    rows = []
    for name, modules, call in cases:
        call()  # warm-up (imports, caches)
        old_t, new_t, old_m, new_m = [], [], [], []
        for _ in range(rounds):
            with old_mechanisms(*modules), timed(modules, {"mech": 0.0}) as tot:
                old_t.append(best(call, 1))
            old_m.append(tot["mech"])
            with timed(modules, {"mech": 0.0}) as tot:
                new_t.append(best(call, 1))
            new_m.append(tot["mech"])
        rows.append((name, min(old_t), min(new_t), min(old_m), min(new_m)))
    return rows


def main() -> None:
    print(f"{'mechanism':<10} {'n':>9} {'old (s)':>11} {'new (s)':>11} {'new/old':>8}")
    for name, n, old, new in micro():
        print(f"{name:<10} {n:>9} {old:>11.3e} {new:>11.3e} {new / old:>8.2f}")
    print()
    print(f"{'whole run':<32} {'old (s)':>8} {'new (s)':>8} {'new/old':>8} {'mech old':>9} {'mech new':>9} "
          f"{'added':>7}")
    for name, old, new, m_old, m_new in whole_runs():
        print(f"{name:<32} {old:>8.3f} {new:>8.3f} {new / old:>8.3f} {m_old:>9.4f} {m_new:>9.4f} "
              f"{(m_new - m_old) / old:>7.2%}")
    print("added = (time inside the new mechanisms - inside the old ones) / the old run's time")


if __name__ == "__main__":
    main()
