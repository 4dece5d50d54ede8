"""diffprivlib's KMeans as a peer, without diffprivlib installed: its declared guarantee and the ε its
noise corresponds to (the formula; test_diffprivlib_peer.py measures it from the library's mechanisms
where diffprivlib is installed), and that the default board leaves the optional peer out."""
from __future__ import annotations

import pytest

from dpclust.peers.diffprivlib_kmeans import diffprivlib_kmeans, noise_epsilon
from dpclust.settings import guarantee_of


@pytest.mark.parametrize("d, ratio", [(2, 0.905), (4, 0.959), (5, 1.003), (6, 1.05), (10, 1.21), (784, 5.38)])
def test_noise_epsilon_matches_the_stated_overspend(d, ratio):
    assert noise_epsilon(1.0, d) == pytest.approx(ratio, abs=5e-3)
    assert noise_epsilon(0.5, d) == pytest.approx(0.5 * noise_epsilon(1.0, d), rel=1e-12)
    assert (noise_epsilon(1.0, d) > 1.0) == (d >= 5)


def test_declared_guarantee_is_not_dp_with_the_reason():
    g = guarantee_of(diffprivlib_kmeans)
    assert g.kind == "not DP as published" and not g.is_dp
    assert "swaps" in g.note and "1.21ε at d = 10" in g.note and "5.38ε at d = 784" in g.note
