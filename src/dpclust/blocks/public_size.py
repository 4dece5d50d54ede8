"""The public dataset size N of the guarantees "add/remove one record, N public".

Several papers treat N as public and let it set parts of the mechanism (Su et al.: EUGkM's grid of
Eq. 4, the hybrid's Inequality 15, TOPS' T; Balcan et al.: the JL dimension p, Alg. 1's ε', γ and
depth, Alg. 2's and 3's repetitions, sample and aggregate's blocks; Nguyen et al.: d', r_1 = 1/n and
the number of scales). Such
a guarantee holds for a fixed public N, the same for both neighbours. An algorithm that declares
`PUBLIC_N` takes that N from its settings (`public_size`); unset, it uses the data's own size, as the
papers' experiments do, and the guarantee then assumes that size is public: between neighbours of
different sizes the N-dependent choices can differ and reveal the size (the privacy audit's
`line_sums` design at n = 20 vs 21: EUGkM's grid is 1 cell vs 2 x 2). The audit holds N fixed
(`public_n` = |D| on both neighbours) for every algorithm that declares it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dpclust.settings import Interval, Setting, nullable

PUBLIC_N = Setting(None, "EXT the public dataset size N of every N-dependent choice (the papers treat N as public); "
                   "None: the data's own size, as in the papers' experiments (the guarantee then assumes that "
                   "size is public)", nullable(Interval(int, 1)), "public dataset size N")


def public_size(settings: Mapping, X: np.ndarray) -> int:
    """N for the N-dependent choices: ``settings["public_n"]`` when given, else the data's size."""
    given = settings.get("public_n")
    return int(X.shape[0]) if given is None else int(given)
