"""What each Su et al. (2016) algorithm guarantees, and for which neighbouring relation.

The paper's neighbours are add/remove one tuple (§3.1, Def. 1) and it treats N as public (ℓ = N^0.4,
M of Eq. 4, PGkM's rounds, Ineq. 15). A guarantee below is ε-DP for the relation it names:

* ``add/remove one record`` — D' = D ± one tuple; nothing depends on N (DPLloyd's uniform and
  geometric allocations).
* ``add/remove one record, N public`` — D' = D ± one tuple, and every N-dependent choice (su_tops'
  T, EUGkM's grid, the hybrid's rule) is computed from a public N, the same for both neighbours
  (setting `public_n`; unset, the data's size, which the guarantee then assumes public).
  These mechanisms calibrate their noise to add/remove sensitivities (a count changes by 1, a sum
  by r per coordinate); under replace-one (same N, one tuple changed) the same noise gives 2ε-DP,
  because one tuple then leaves one cluster/cell and enters another (L1 sensitivity doubles).
* ``replace-one (n public)`` — D' has the same public size N and differs in one tuple: GkM's
  sample-and-aggregate proof (one tuple changes one block's output; ℓ is a function of N) and PGkM
  (its fitness changes by at most d(hi − lo)² under replace-one as under add/remove).

Not DP: DPLloyd with ``init: random_points`` (Lu & Shen's protocol) starts from k records of the data
and charges nothing for them: a centre that no noisy update moves (noisy count below `min_count`)
is released as a data record. Non-private analyses (Lloyd, Gene, Figure 3's SAG and Noise) declare
`NON_PRIVATE`: no ε is reported for them and no claim compares them with private methods.
"""

from __future__ import annotations

from collections.abc import Mapping

from dpclust.settings import NON_PRIVATE, Guarantee, not_dp

ADD_REMOVE = "add/remove one record"
ADD_REMOVE_N_PUBLIC = "add/remove one record, N public"
REPLACE_N_PUBLIC = "replace-one (n public)"

RANDOM_POINTS_REASON = ("initial centres are k data records (init: random_points) and nothing is charged for "
                        "them: a centre whose noisy count stays below min_count is released unchanged, i.e. "
                        "a record of the data")


def dplloyd(settings: Mapping) -> Guarantee:
    """DPLloyd (§4.1.1): ε-DP with sphere-packing starts; not DP with random_points starts."""
    if settings.get("init", "sphere_packing") == "random_points":
        return not_dp(RANDOM_POINTS_REASON, relation=ADD_REMOVE)
    if settings.get("allocation", "uniform") == "su_tops":
        return Guarantee("ε-DP", "the number of iterations T is computed from the public N (TOPS 2017); "
                         "2ε-DP under replace-one", ADD_REMOVE_N_PUBLIC)
    return Guarantee("ε-DP", "Laplace on counts and sums with add/remove sensitivity d·r + 1 per iteration; "
                     "2ε-DP under replace-one", ADD_REMOVE)


EUGKM = Guarantee("ε-DP", "Laplace(1/ε) on every cell count of Eq. 4's grid, computed from the public N; "
                  "2ε-DP under replace-one", ADD_REMOVE_N_PUBLIC)
HYBRID = Guarantee("ε-DP", "EUGkM(ε/2) + one DPLloyd iteration(ε/2) (or EUGkM(ε)); grid and Ineq. 15 use the "
                   "public N; 2ε-DP under replace-one", ADD_REMOVE_N_PUBLIC)
GKM = Guarantee("ε-DP", "sample and aggregate: one tuple changes one block's output; ℓ is computed from the "
                "public N", REPLACE_N_PUBLIC)
PGKM = Guarantee("ε-DP", "exponential mechanism on the k-means cost (sensitivity d·(hi − lo)² under replace-one "
                 "and add/remove); the number of rounds is computed from the public N", REPLACE_N_PUBLIC)
NON_PRIVATE_ANALYSIS = NON_PRIVATE
