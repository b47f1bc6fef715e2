"""NumPy's functions whose result's shape depends on the values: nonzero, argwhere,
flatnonzero, unique, searchsorted, bincount, histogram (2d, dd), interp.

Values, shapes and dtypes against NumPy (float64 values to rtol 1e-12, positions
exactly); gradients against central finite differences (`ng.gradcheck`'s tolerances) and
written-out derivatives (rtol 1e-12); NumPy's errors for bad arguments.
"""

import numpy as np
import pytest

import numgrad as ng

rng = np.random.default_rng(23)
A = rng.integers(0, 4, (3, 5)).astype(np.float64)


@pytest.mark.parametrize("name", ["nonzero", "argwhere", "flatnonzero"])
def test_positions_of_nonzero_elements(name):
    for a in (A, A[0] > 1, np.zeros((2, 0))):
        got, want = getattr(ng, name)(ng.tensor(a)), getattr(np, name)(a)
        for g, w in zip(*((got, want) if name == "nonzero" else ((got,), (want,)))):
            assert g.dtype == np.int64 and g.shape == w.shape
            np.testing.assert_array_equal(g.numpy(), w)
    assert isinstance(getattr(np, name)(ng.tensor(A)), (ng.Tensor, tuple))  # dispatched


def test_nonzero_of_a_0d_tensor_is_refused_as_numpy_2_refuses_it():
    with pytest.raises(ValueError):
        np.nonzero(np.array(1.0))
    with pytest.raises(ValueError, match="0-d"):
        ng.nonzero(ng.tensor(1.0))
    assert ng.nonzero(ng.atleast_1d(ng.tensor(1.0)))[0].tolist() == [0]


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_unique_matches_numpy_and_its_values_differentiate(axis):
    got = ng.unique(ng.tensor(A), True, True, True, axis=axis)
    want = np.unique(A, True, True, True, axis=axis)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g.numpy(), w)
    assert isinstance(ng.unique(ng.tensor(A), axis=axis), ng.Tensor)
    nan = ng.tensor([1.0, np.nan, np.nan, 1.0])
    np.testing.assert_array_equal(ng.unique(nan).numpy(), np.unique([1.0, np.nan, np.nan]))
    x = ng.tensor(A, requires_grad=True)
    (g,) = ng.grad(ng.unique(x, axis=axis).sum(), x)  # to each value's first occurrence
    want_grad = np.zeros(A.size)
    if axis is None:
        want_grad[want[1]] = 1
    else:
        want_grad = np.zeros(A.shape)
        np.moveaxis(want_grad, axis, 0)[want[1]] = 1
    np.testing.assert_array_equal(g.numpy(), want_grad.reshape(A.shape))


def test_searchsorted_sides_and_sorter():
    a, v = np.array([1.0, 2.0, 2.0, 3.0]), np.array([[0.5, 2.0], [2.5, 4.0]])
    for side in ("left", "right"):
        got = ng.searchsorted(ng.tensor(a), ng.tensor(v), side=side)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.numpy(), np.searchsorted(a, v, side))
    b = np.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(
        ng.searchsorted(ng.tensor(b), 2.5, sorter=np.argsort(b)).numpy(),
        np.searchsorted(b, 2.5, sorter=np.argsort(b)))
    with pytest.raises(ValueError, match="side must be"):
        ng.searchsorted(ng.tensor(a), 1.0, side="middle")


def test_digitize_and_lexsort():
    x = np.array([0.2, 6.4, 3.0, 1.6, 10.0, -1.0, 2.5])
    bins = np.array([0.0, 1.0, 2.5, 4.0, 10.0])
    for edges in (bins, bins[::-1]):  # increasing and decreasing
        for right in (False, True):
            got = ng.digitize(ng.tensor(x), edges, right=right)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got.numpy(), np.digitize(x, edges, right=right))
    first, second = [1, 5, 1, 4, 3, 4, 4], [9, 4, 0, 4, 0, 2, 1]
    np.testing.assert_array_equal(ng.lexsort((ng.tensor(second), ng.tensor(first))).numpy(),
                                  np.lexsort((second, first)))
    assert isinstance(np.digitize(ng.tensor(x), bins), ng.Tensor)  # dispatched


def test_bincount_counts_weights_and_gradient():
    x = rng.integers(0, 6, 30)
    w = rng.standard_normal(30)
    np.testing.assert_array_equal(ng.bincount(ng.tensor(x)).numpy(), np.bincount(x))
    got = ng.bincount(ng.tensor(x), ng.tensor(w), minlength=9)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), np.bincount(x, w, minlength=9), rtol=1e-12)
    wt = ng.tensor(w, requires_grad=True)
    scale = rng.standard_normal(9)
    (g,) = ng.grad((ng.bincount(ng.tensor(x), wt, minlength=9) * scale).sum(), wt)
    np.testing.assert_allclose(g.numpy(), scale[x], rtol=1e-12)  # each weight's bin
    np.testing.assert_array_equal(ng.bincount(ng.tensor(np.zeros(0, int)), minlength=3).numpy(),
                                  np.bincount(np.zeros(0, int), minlength=3))
    with pytest.raises(ValueError, match="non-negative"):
        ng.bincount(ng.tensor([1, -1]))
    with pytest.raises(ValueError, match="1-D non-negative integers"):
        ng.bincount(ng.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="weights of shape"):
        ng.bincount(ng.tensor([1, 2]), ng.tensor([1.0]))


@pytest.mark.parametrize("kwargs", [{}, {"bins": 7}, {"bins": [-2.0, -0.5, 0.0, 0.1, 3.0]},
                                    {"range": (-1.0, 1.0)}, {"density": True},
                                    {"bins": "auto"}, {"weights": True},
                                    {"weights": True, "density": True, "bins": 5}], ids=str)
def test_histogram_matches_numpy(kwargs):
    v = rng.standard_normal(200)
    weights = rng.uniform(0, 1, 200)
    ours = {k: ng.tensor(weights) if k == "weights" else x for k, x in kwargs.items()}
    theirs = {k: weights if k == "weights" else x for k, x in kwargs.items()}
    hist, edges = ng.histogram(ng.tensor(v), **ours)
    want_hist, want_edges = np.histogram(v, **theirs)
    assert hist.dtype == want_hist.dtype and edges.dtype == want_edges.dtype
    np.testing.assert_allclose(hist.numpy(), want_hist, rtol=1e-12)
    np.testing.assert_allclose(edges.numpy(), want_edges, rtol=1e-12)


def test_histogram_weights_differentiate():
    v = rng.standard_normal(12)
    w = ng.tensor(rng.uniform(0.5, 1.0, 12), requires_grad=True)
    assert ng.gradcheck(lambda t: (ng.histogram(ng.tensor(v), 4, weights=t, density=True)[0]
                                   ** 2).sum(), (w,))


EDGES = [np.array([-2.0, -0.5, 0.0, 0.1, 3.0]), np.array([-1.0, 0.0, 2.0])]


@pytest.mark.parametrize("kwargs", [{}, {"bins": 4}, {"bins": [3, 5]}, {"bins": EDGES},
                                    {"bins": EDGES[0]}, {"bins": [EDGES[0], 3]},
                                    {"range": [[-1.0, 1.0], [0.0, 2.0]]}, {"density": True},
                                    {"weights": True},
                                    {"weights": True, "density": True, "bins": [2, 3]}],
                         ids=str)
def test_histogram2d_matches_numpy(kwargs):
    # (points on the edges too: the last bin holds its right edge, as in NumPy)
    x = np.concatenate([rng.standard_normal(150), [3.0, -2.0, 0.1, np.nan]])
    y = np.concatenate([rng.standard_normal(150), [2.0, -1.0, 0.0, 0.5]])
    b = kwargs.get("bins")
    if "range" not in kwargs and not (isinstance(b, np.ndarray) or
                                      isinstance(b, list) and isinstance(b[0], np.ndarray)):
        x[-1] = 0.5  # (NumPy finds no range of data with a NaN: x's edges are given)
    weights = rng.uniform(0, 1, len(x))
    ours = {k: ng.tensor(weights) if k == "weights" else v for k, v in kwargs.items()}
    theirs = {k: weights if k == "weights" else v for k, v in kwargs.items()}
    hist, xedges, yedges = ng.histogram2d(ng.tensor(x), ng.tensor(y), **ours)
    want, want_x, want_y = np.histogram2d(x, y, **theirs)
    assert hist.dtype == want.dtype and hist.shape == want.shape
    np.testing.assert_allclose(hist.numpy(), want, rtol=1e-12)
    np.testing.assert_array_equal(xedges.numpy(), want_x)
    np.testing.assert_array_equal(yedges.numpy(), want_y)


def test_histogramdd_matches_numpy_and_its_weights_differentiate():
    points = rng.standard_normal((40, 3))
    weights = rng.uniform(0.5, 1.0, 40)
    for sample in (ng.tensor(points), [ng.tensor(c) for c in points.T]):
        hist, edges = ng.histogramdd(sample, (2, 3, 4), weights=ng.tensor(weights),
                                     density=True)
        want, want_edges = np.histogramdd(points, (2, 3, 4), weights=weights, density=True)
        np.testing.assert_allclose(hist.numpy(), want, rtol=1e-12)
        for got, expected in zip(edges, want_edges):
            np.testing.assert_array_equal(got.numpy(), expected)
    # d(sum(H * c)) / d(w_i) is c at point i's bin: written out, and by differences
    w = ng.tensor(weights, requires_grad=True)
    c = rng.standard_normal((2, 3, 4))
    (ng.histogramdd(ng.tensor(points), (2, 3, 4), weights=w)[0] * ng.tensor(c)).sum().backward()
    bins = [np.clip(np.searchsorted(e, points[:, i], "right") - 1, 0, len(e) - 2)
            for i, e in enumerate(want_edges)]
    np.testing.assert_allclose(w.grad.numpy(), c[tuple(bins)], rtol=1e-12)
    assert ng.gradcheck(lambda t: (ng.histogramdd(ng.tensor(points), 2, weights=t,
                                                  density=True)[0] ** 2).sum(),
                        (ng.tensor(weights, requires_grad=True),))
    hist, _ = ng.histogramdd(ng.tensor(points[:, 0]), 5)  # one dimension, as NumPy reads it
    np.testing.assert_array_equal(hist.numpy(), np.histogramdd(points[:, 0], 5)[0])
    with pytest.raises(ValueError, match="weights"):
        ng.histogramdd(ng.tensor(points), weights=ng.tensor(weights[:3]))
    with pytest.raises(ValueError):  # NumPy's: bins for 2 dimensions of 3
        ng.histogramdd(ng.tensor(points), (2, 3))
    assert isinstance(np.histogram2d(ng.tensor(points[:, 0]), ng.tensor(points[:, 1]))[0],
                      ng.Tensor)  # dispatched


def test_interp_matches_numpy_inside_outside_and_at_the_points():
    xp = np.sort(rng.uniform(0, 10, 8))
    fp = rng.standard_normal(8)
    x = np.concatenate([rng.uniform(-2, 12, 30), xp])
    cases = [({}, {}), ({"left": -9.0, "right": 9.0}, {"left": -9.0, "right": 9.0})]
    for ours, theirs in cases:
        np.testing.assert_allclose(ng.interp(ng.tensor(x), xp, fp, **ours).numpy(),
                                   np.interp(x, xp, fp, **theirs), rtol=1e-12)
    angles = rng.uniform(0, 360, 6)
    np.testing.assert_allclose(ng.interp(ng.tensor(x * 40), angles, fp[:6], period=360).numpy(),
                               np.interp(x * 40, angles, fp[:6], period=360), rtol=1e-12)
    np.testing.assert_allclose(ng.interp(ng.tensor(x), [2.0], [5.0]).numpy(),
                               np.interp(x, [2.0], [5.0]))
    assert isinstance(np.interp(ng.tensor(x), xp, fp), ng.Tensor)  # dispatched
    with pytest.raises(ValueError, match="same length|one length"):
        ng.interp(ng.tensor(x), xp, fp[:3])
    with pytest.raises(ValueError, match="period"):
        ng.interp(ng.tensor(x), xp, fp, period=0)


def test_interp_differentiates_in_x_xp_and_fp():
    xp, fp = np.array([0.0, 1.0, 3.0, 4.0]), np.array([1.0, -2.0, 0.5, 3.0])
    x = ng.tensor([0.3, 1.7, 2.2, 3.9], requires_grad=True)
    xpt, fpt = ng.tensor(xp, requires_grad=True), ng.tensor(fp, requires_grad=True)
    assert ng.gradcheck(lambda a, b, c: (ng.interp(a, b, c) ** 2).sum(), (x, xpt, fpt))
    (g,) = ng.grad(ng.interp(x, xp, fp).sum(), x)  # each point's segment slope
    np.testing.assert_allclose(g.numpy(), [-3.0, 1.25, 1.25, 2.5], rtol=1e-12)
