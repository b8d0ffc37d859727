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
