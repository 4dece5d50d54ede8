"""Where the private 1-median puts its centres in high dimension (the MNIST k-median cells of the
leaderboard; `git show 51a7532:docs/FULL_PROTOCOL.md`, "MNIST at full scale").

    .venv/bin/python benchmarks/one_median_high_dim.py data/processed/mnist70k.h5

Best case for every k-median method that ends with `dpclust.blocks.one_median.private_one_median`
(HST, Private Lloyd, the coreset, Balcan et al.'s k-median): the clusters are those of a
non-private k-means solution (scikit-learn, on a 20,000-row sample), and each is replaced by its
private 1-median with HST's settings (λ = 0.1, replace-one, at most 20,000 points) at HST's
Lloyd-step budget ε_step = 0.8·ε/4. Prints the regulariser Λ, each release's distance to the box
centre against the cluster centre's, and the k-median cost against that of the non-private centres,
next to one centre at the box centre and one at the coordinate-wise median. One core; about a minute.
"""
from __future__ import annotations

import argparse
import math
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import h5py  # noqa: E402
import numpy as np  # noqa: E402

from dpclust.blocks.one_median import private_one_median  # noqa: E402
from dpclust.cohenaddad2022.private_lloyd import HST_SETTINGS  # noqa: E402
from dpclust.metrics import assign  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="a processed dataset (.h5 with X), min-max scaled here into [0, 1]^d")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--epsilon", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    args = ap.parse_args()
    from sklearn.cluster import KMeans

    with h5py.File(args.data) as f:
        X = np.asarray(f["X"], dtype=float)
    span = X.max(axis=0) - X.min(axis=0)
    X = np.clip((X - X.min(axis=0)) / np.where(span > 0, span, 1.0), 0.0, 1.0)
    rng = np.random.default_rng(0)
    km = KMeans(args.k, n_init=1, random_state=0, max_iter=50).fit(
        X[rng.choice(len(X), min(len(X), 20000), replace=False)])
    labels, d2 = assign(X, km.cluster_centers_)
    ref = float(np.sqrt(d2).sum())
    d = X.shape[1]
    box_centre = np.full(d, 0.5)
    print(f"{args.data}: n = {len(X)}, d = {d}, k = {args.k}; k-median cost of the non-private centres {ref:.6g}")
    for name, c in (("box centre", box_centre), ("coordinate-wise median", np.median(X, axis=0))):
        print(f"  one centre at the {name}: cost ratio {np.sqrt(((X - c) ** 2).sum(axis=1)).sum() / ref:.3f}")
    settings = HST_SETTINGS.defaults() | {"one_median_neighbouring": "replace"}
    cap = int(settings["max_points_per_cluster"])
    for eps in args.epsilon:
        step = (1 - settings["tree_budget_fraction"]) * eps / settings["lloyd_iterations"]
        lam_reg = (1 / settings["one_median_smooth_lambda"]) / math.expm1(
            settings["one_median_jacobian_fraction"] * step / d)
        C = np.empty((args.k, d))
        for j in range(args.k):
            P = X[labels == j]
            C[j] = private_one_median(P[rng.permutation(len(P))[:cap]], step, 0.0, (0.0, 1.0), rng, None, settings)
        moved = np.sqrt(((C - box_centre) ** 2).sum(axis=1))
        own = np.sqrt(((km.cluster_centers_ - box_centre) ** 2).sum(axis=1))
        lab2, e2 = assign(X, C)
        print(f"  ε = {eps:g} (ε_step = {step:.3g}, Λ = {lam_reg:.3g}): releases {moved.min():.2f}-{moved.max():.2f} "
              f"from the box centre (cluster centres {own.min():.1f}-{own.max():.1f}), cost ratio "
              f"{np.sqrt(e2).sum() / ref:.3f}, {np.unique(lab2).size} of {args.k} clusters non-empty")


if __name__ == "__main__":
    main()
