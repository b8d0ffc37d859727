"""Light and texel selection (``emitters.select_entry``) against NumPy's searchsorted."""
import numpy as np

from raytrace.kernels.emitters import select_entry


def reference(cdf, u, side="right"):
    n = cdf.shape[0] - 1
    return int(np.clip(np.searchsorted(cdf, u, side=side) - 1, 0, n - 1))


def random_cdf(rng, n):
    pmf = rng.random(n)
    pmf[rng.random(n) < 0.3] = 0.0                     # entries that must never be chosen
    pmf[0] = max(pmf[0], 0.1)
    cdf = np.concatenate([[0.0], np.cumsum(pmf / pmf.sum())])
    cdf[-1] = 1.0                                      # as the renderer's tables end
    return cdf


def test_matches_searchsorted_right_including_ties_and_edges():
    rng = np.random.default_rng(7)
    ties = 0
    for n in (1, 2, 3, 7, 64, 1000):
        cdf = random_cdf(rng, n)
        us = np.concatenate([rng.random(200), cdf[:-1], [0.0, np.nextafter(1.0, 0.0)]])
        us = us[us < 1.0]                              # u is in [0, 1)
        for u in us:
            got = select_entry(cdf, u)
            assert got == reference(cdf, u), (n, u)
            ties += reference(cdf, u) != reference(cdf, u, side="left")
            assert cdf[got + 1] > cdf[got]             # never an entry of zero probability
    assert ties > 0                                    # the cases tell "right" from "left"


def guided(cdf, guide, u):
    from raytrace.kernels.emitters import guided_entry
    return guided_entry(cdf, guide, u)


def test_guide_table_picks_what_the_binary_search_picks():
    """``guided_entry`` with ``guide_table`` gives ``select_entry``'s index for random u,
    every cdf value and its neighbours, bucket edges, with zero-probability runs and one
    dominant entry; a guide one entry late (the negative control) picks wrong ones."""
    from raytrace.scene.emitters import guide_table
    rng = np.random.default_rng(11)
    checked = 0
    for n, buckets in ((1, None), (2, None), (5, None), (300, None), (300, 7), (4096, None),
                       (4096, 50000)):
        cdf = random_cdf(rng, n)
        if n > 100:                                    # a sun: one entry with half the mass
            pmf = np.diff(cdf)
            pmf[n // 3] = pmf.sum()
            cdf = np.concatenate([[0.0], np.cumsum(pmf / pmf.sum())])
            cdf[-1] = 1.0
        guide = guide_table(cdf, buckets)
        k = len(guide)
        edges = np.arange(k) / k
        us = np.concatenate([rng.random(2000), cdf[:-1], np.nextafter(cdf[1:], 0.0),
                             edges, np.nextafter(edges, 0.0), np.nextafter(edges, 1.0),
                             [0.0, np.nextafter(1.0, 0.0)]])
        us = us[(us >= 0.0) & (us < 1.0)]
        for u in us:
            assert guided(cdf, guide, u) == select_entry(cdf, u), (n, buckets, u)
        checked += len(us)
        if n >= 300:
            late = np.minimum(guide + 1, n - 1)
            wrong = sum(guided(cdf, late, u) != select_entry(cdf, u) for u in us)
            assert wrong > 0
    assert checked > 10000


def test_guide_table_starts_at_the_smallest_u_of_each_bucket():
    """Where k / K rounds above the smallest u with int(u K) == k, the table must be
    built from that smaller u (the kernel's bucket), not from k / K."""
    from raytrace.scene.emitters import guide_table
    found = 0
    for buckets in range(3, 400):
        cdf = np.array([0.0, 0.0, 0.0, 1.0])
        # put a cdf step exactly at each k / buckets where int(prev(k/K) * K) == k
        for k in range(1, buckets):
            u = k / buckets
            below = np.nextafter(u, 0.0)
            if int(below * buckets) == k:              # k / K is not the bucket's smallest u
                cdf = np.array([0.0, u, u, 1.0])
                guide = guide_table(cdf, buckets)
                assert guided(cdf, guide, below) == select_entry(cdf, below) == 0
                found += 1
                break
    assert found > 0
