"""Algorithm 3 (local swap): incremental swap gains equal brute force; budget; C \\ Z only."""
import numpy as np
import pytest
from scipy import sparse

from dpclust.accountant import Accountant
from dpclust.balcan2017.local_swap import SwapState, _nearest_two, local_swap, swap_rounds


def _brute(Y, C, idx, power):
    out = np.empty((len(idx), C.shape[0]))
    for j in range(len(idx)):
        for y in range(C.shape[0]):
            Z = C[np.r_[np.delete(idx, j), y]]
            d = np.sqrt(((Y[:, None, :] - Z[None]) ** 2).sum(-1)).min(axis=1)
            out[j, y] = (d ** power).sum()
    return out


def _new_losses_as_before(st):
    """The gain table as computed before the work arrays were reused (a fresh float64 copy of each
    chunk, fresh minima): the speed-up must give the same bytes."""
    n, k, m = st.Y.shape[0], st.idx.size, st.C.shape[0]
    base, grouped = np.zeros(m), np.zeros((k, m))
    import dpclust.balcan2017.local_swap as ls
    step = max(1, min(n, ls.CHUNK_ENTRIES // max(m, 1)))
    for s in range(0, n, step):
        sl = slice(s, s + step)
        D = np.array(st._candidate_distances(sl), dtype=np.float64)
        m1 = np.minimum(D, st.d1[sl, None])
        base += m1.sum(axis=0)
        np.minimum(D, st.d2[sl, None], out=D)
        D -= m1
        onehot = sparse.csr_matrix((np.ones(D.shape[0]), (st.a[sl], np.arange(D.shape[0]))), shape=(k, D.shape[0]))
        grouped += onehot @ D
    return base[None, :] + grouped


def _order_sensitive_data(rng):
    """Points whose distances span twelve orders of magnitude: any other order of the row sums (e.g.
    a block's partial sum added to the chunk's) gives other bits."""
    Y = rng.normal(size=(500, 4)) * 10.0 ** rng.integers(-6, 7, size=(500, 1))
    return Y, rng.normal(size=(40, 4)) * 10.0 ** rng.integers(-3, 4, size=(40, 1))


@pytest.mark.parametrize("power", [1, 2])
@pytest.mark.parametrize("cache", ["float32", "float64", "none"])
@pytest.mark.parametrize("chunk_rows", [37, 500, 1])
def test_gain_table_bytes_equal_the_unfused_computation(power, cache, chunk_rows, monkeypatch):
    """Same bytes as before the speed-ups (whole chunks, a fresh float64 copy, the public sparse
    product), on data with exact ties (a lattice with repeated points, candidates on the lattice,
    duplicate centres), continuous data and data whose sums depend on their order, over several
    swaps, in chunks of 37 rows (not dividing the 500), one chunk, and one row each."""
    import dpclust.balcan2017.local_swap as ls
    monkeypatch.setattr(ls, "CHUNK_ENTRIES", 40 * chunk_rows)
    monkeypatch.setattr(ls, "SWAP_CACHE_ENTRIES", 10**9 if cache == "float32" else 0)
    monkeypatch.setattr(ls, "SWAP_CACHE64_ENTRIES", 0 if cache == "none" else 10**9)
    rng = np.random.default_rng(7)
    for Y, C in ((rng.integers(0, 6, size=(500, 3)).astype(float) / 5,
                  rng.integers(0, 6, size=(40, 3)).astype(float) / 5),
                 (rng.normal(size=(500, 4)), rng.normal(size=(40, 4))), _order_sensitive_data(rng)):
        st = SwapState(Y, C, np.array([0, 3, 3, 7, 12]), power)
        for j, y in ((1, 20), (4, 0), (0, 39)):
            assert st.new_losses().tobytes() == _new_losses_as_before(st).tobytes()
            st.swap(j, y)
        assert (st._cache.dtype.name if st._cache is not None else "none") == cache


def test_the_order_sensitive_data_tells_another_summation_order_apart():
    """The check above can fail: adding each block's partial sums to the chunk's (instead of the rows
    one after another) gives other bits on the order-sensitive data."""
    import dpclust.balcan2017.local_swap as ls
    Y, C = _order_sensitive_data(np.random.default_rng(7))
    D = np.sqrt(ls.squared_distances(Y[:37], C))
    rowwise = D.sum(axis=0)
    blockwise = sum(D[b:b + 5].sum(axis=0) for b in range(0, 37, 5))
    assert rowwise.tobytes() != blockwise.tobytes()


def _float64_cached(monkeypatch, on: bool):
    import dpclust.balcan2017.local_swap as ls
    monkeypatch.setattr(ls, "SWAP_CACHE_ENTRIES", 0)
    monkeypatch.setattr(ls, "SWAP_CACHE64_ENTRIES", 10**9 if on else 0)


@pytest.mark.parametrize("power", [1, 2])
def test_the_float64_cache_gives_the_bytes_of_computing_every_round(power, monkeypatch):
    """Between the float32 and the float64 bound the distances are kept in float64: the gain tables,
    the state after swaps and a whole Alg. 3 run are the same bytes as computing them every round
    (lattice data with exact ties, and continuous data; several row chunks)."""
    import dpclust.balcan2017.local_swap as ls
    monkeypatch.setattr(ls, "CHUNK_ENTRIES", 40 * 37)
    rng = np.random.default_rng(11)
    for Y, C in ((rng.integers(0, 6, size=(500, 3)).astype(float) / 5,
                  rng.integers(0, 6, size=(40, 3)).astype(float) / 5),
                 (rng.normal(size=(500, 4)), rng.normal(size=(40, 4)))):
        tables, runs = [], []
        for on in (False, True):
            _float64_cached(monkeypatch, on)
            st = SwapState(Y, C, np.array([0, 3, 3, 7, 12]), power)
            seen = []
            for j, y in ((1, 20), (4, 0), (0, 39)):
                seen += [st.new_losses().tobytes(), st.Dk.tobytes(), st.d1.tobytes(), st.d2.tobytes()]
                st.swap(j, y)
            assert (st._cache is not None) == on and (not on or st._cache.dtype == np.float64)
            tables.append(seen)
            out = local_swap(Y, C, 5, 1.0, 3.0, 6, np.random.default_rng(3), Accountant(1.0), power=power)
            runs.append((out["index"].tobytes(), np.asarray(out["loss_trace"]).tobytes(), out["chosen_round"]))
        assert tables[0] == tables[1]
        assert runs[0] == runs[1]


@pytest.mark.parametrize("power", [1, 2])
@pytest.mark.parametrize("cached", [True, False])
def test_incremental_gains_match_brute_force(rng, power, cached, monkeypatch):
    Y = rng.normal(size=(300, 3))
    C = rng.normal(size=(12, 3))
    idx = np.array([0, 3, 3, 7])        # duplicates are allowed (i.i.d. initial draws)
    import dpclust.balcan2017.local_swap as ls
    monkeypatch.setattr(ls, "CHUNK_ENTRIES", 12 * 70)   # force several row chunks
    monkeypatch.setattr(ls, "SWAP_CACHE_ENTRIES", 10**9 if cached else 0)
    st = SwapState(Y, C, idx, power)
    tol = 1e-6 if cached else 1e-10                     # the cache holds float32 distances
    np.testing.assert_allclose(st.new_losses(), _brute(Y, C, idx, power), rtol=tol)
    st.swap(1, 11)
    np.testing.assert_allclose(st.new_losses(), _brute(Y, C, st.idx, power), rtol=tol)
    assert st.loss == pytest.approx(_brute(Y, C, st.idx, power)[0, st.idx[0]], rel=tol)


def test_local_swap_budget_and_choices(rng):
    Y = rng.uniform(-0.5, 0.5, size=(400, 2))
    C = rng.uniform(-0.5, 0.5, size=(30, 2))
    acc = Accountant(1.0)
    out = local_swap(Y, C, 3, 1.0, 1.0, 5, rng, acc)
    assert acc.spent_epsilon == pytest.approx(1.0)
    assert len(acc.ledger) == 6                        # T rounds + the final choice
    assert out["centers"].shape == (3, 2)
    assert swap_rounds("capped", 20, 64, 1000, 0.1) == 20 and swap_rounds("capped", 20, 4, 1000, 0.1) == 4


def test_local_swap_improves_with_large_epsilon(rng):
    centres = np.array([[-0.6, 0.0], [0.6, 0.0], [0.0, 0.6]])
    Y = np.concatenate([c + 0.03 * rng.normal(size=(300, 2)) for c in centres])
    C = np.concatenate([centres, rng.uniform(-0.8, 0.8, size=(20, 2))])
    out = local_swap(Y, C, 3, 1e5, 1.0, 6, rng, Accountant(1e5))
    assert sorted(out["index"].tolist()) == [0, 1, 2]


def test_swap_never_picks_a_current_centre(rng):
    Y = rng.uniform(-0.5, 0.5, size=(50, 2))
    C = rng.uniform(-0.5, 0.5, size=(4, 2))
    for s in range(20):
        out = local_swap(Y, C, 3, 1.0, 1.0, 3, np.random.default_rng(s), Accountant(1.0), init_index=[0, 1, 2])
        assert len(set(out["index"].tolist())) == 3    # swaps keep the centres distinct


def test_nearest_two_is_numpys_argmin_and_partition():
    """The compiled pass selects what np.argmin, its gather and np.partition(·, 1) select, bit for bit:
    ties (the first index; a repeated minimum is also the second), one column (+inf), all equal."""
    rng = np.random.default_rng(5)
    for trial in range(200):
        n, k = int(rng.integers(1, 40)), int(rng.integers(1, 9))
        D = rng.integers(0, 3, size=(n, k)).astype(float) if trial % 2 else rng.random((n, k))
        if trial % 7 == 0:
            D[:] = 0.5
        a, d1, d2 = _nearest_two(D)
        want_a = np.argmin(D, axis=1)
        want_d2 = np.partition(D, 1, axis=1)[:, 1] if k > 1 else np.full(n, np.inf)
        assert np.array_equal(a, want_a) and a.dtype == want_a.dtype
        assert d1.tobytes() == D[np.arange(n), want_a].tobytes() and d2.tobytes() == want_d2.tobytes()
