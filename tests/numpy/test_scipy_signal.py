"""``ng.scipy.signal``: convolutions and correlations in one to three dimensions, every
mode and ``convolve2d``'s boundaries, against SciPy's own (float64, rtol 1e-12 and atol
1e-13: the same sums in another order); gradients in both inputs against HIPS
autograd's ``autograd.scipy.signal.convolve`` (rtol 1e-10) and against finite
differences (``ng.gradcheck``), to second order."""

import itertools

import autograd
import autograd.scipy.signal as asignal
import numpy as np
import pytest
import scipy.signal
from budget import quick

import numgrad as ng

RTOL, ATOL = 1e-12, 1e-13
rng = np.random.default_rng(0)

# (in1's shape, in2's shape): longer and shorter, equal, and larger along one axis only
SHAPES = [((7,), (3,)), ((2,), (5,)), ((4,), (4,)),
          ((5, 6), (3, 2)), ((2, 3), (4, 4)), ((4, 3), (2, 5)),
          ((3, 4, 2), (2, 2, 2))]


def _pair(shapes):
    return rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])


def _scipy(call):
    """SciPy's result of `call`, or the ValueError it raises."""
    try:
        return call()
    except ValueError as error:
        return error


@pytest.mark.parametrize("shapes", quick(SHAPES, SHAPES[::2]), ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_n_dimensional_values_match_scipy(name, mode, shapes):
    a, v = _pair(shapes)
    want = _scipy(lambda: getattr(scipy.signal, name)(a, v, mode, method="direct"))
    if isinstance(want, ValueError):  # (valid, neither input the larger everywhere)
        with pytest.raises(ValueError, match="at least as large"):
            getattr(ng.scipy.signal, name)(a, v, mode)
        return
    for method in ("auto", "direct", "fft"):  # (numgrad computes them all directly)
        got = getattr(ng.scipy.signal, name)(ng.tensor(a), v, mode, method)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("shapes", [s for s in SHAPES if len(s[0]) == 2], ids=str)
@pytest.mark.parametrize("mode, boundary", list(itertools.product(
    ["full", "same", "valid"], ["fill", "wrap", "symm"])))
@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_planar_values_match_scipy_at_every_boundary(name, mode, boundary, shapes):
    a, v = _pair(shapes)
    want = _scipy(lambda: getattr(scipy.signal, name)(a, v, mode, boundary, 0.7))
    if isinstance(want, ValueError):
        with pytest.raises(ValueError, match="at least as large"):
            getattr(ng.scipy.signal, name)(a, v, mode, boundary, 0.7)
        return
    got = getattr(ng.scipy.signal, name)(ng.tensor(a), v, mode, boundary, 0.7)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("mode", ["full", "valid"])
@pytest.mark.parametrize("shapes", [((5, 6), (3, 2)), ((3, 4, 2), (2, 2, 2))], ids=str)
def test_gradients_match_autograd_in_both_inputs(shapes, mode):
    a, v = _pair(shapes)
    seed = rng.standard_normal(scipy.signal.convolve(a, v, mode).shape)

    def theirs(x, y):
        return (asignal.convolve(x, y, mode=mode) * seed).sum()

    want = autograd.grad(theirs, (0, 1))(a, v)
    x, y = ng.tensor(a, requires_grad=True), ng.tensor(v, requires_grad=True)
    (ng.scipy.signal.convolve(x, y, mode) * seed).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), want[0], rtol=1e-10)
    np.testing.assert_allclose(y.grad.numpy(), want[1], rtol=1e-10)


@pytest.mark.parametrize("call", [
    lambda x, y: ng.scipy.signal.correlate(x, y, "same"),
    lambda x, y: ng.scipy.signal.convolve2d(x, y, "same", "symm"),
    lambda x, y: ng.scipy.signal.correlate2d(x, y, "full", "fill", 0.5),
    lambda x, y: ng.scipy.signal.convolve2d(x, y, "valid", "wrap"),
], ids=["correlate_same", "convolve2d_symm", "correlate2d_fill", "convolve2d_wrap"])
def test_gradients_to_second_order_against_finite_differences(call):
    a, v = _pair(((4, 5), (2, 3)))
    x, y = ng.tensor(a, requires_grad=True), ng.tensor(v, requires_grad=True)
    assert ng.gradcheck(call, (x, y))
    assert ng.gradgradcheck(call, (x, y))


def test_numpy_convolve_shares_the_direct_sum():
    a, v = rng.standard_normal(9), rng.standard_normal(4)
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(ng.convolve(a, v, mode).numpy(),
                                   scipy.signal.convolve(a, v, mode) if mode != "same"
                                   else np.convolve(a, v, mode), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("call, message", [
    (lambda: ng.scipy.signal.convolve(np.ones((2, 2)), np.ones(2)), "same number of dim"),
    (lambda: ng.scipy.signal.convolve(np.ones(3), np.ones(2), "circular"), "mode must be"),
    (lambda: ng.scipy.signal.convolve(np.ones(3), np.ones(2), method="fast"), "method must"),
    (lambda: ng.scipy.signal.convolve(np.ones(3), np.ones(0)), "neither input can be empty"),
    (lambda: ng.scipy.signal.convolve2d(np.ones(3), np.ones(2)), "must be 2-D"),
    (lambda: ng.scipy.signal.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="reflect"),
     "boundary must be"),
    (lambda: ng.scipy.signal.correlate2d(np.ones((3, 3)), np.ones((2, 2)), fillvalue=[1, 2]),
     "fillvalue must be a single number"),
    (lambda: ng.scipy.signal.convolve(np.ones((3, 2)), np.ones((2, 3)), "valid"),
     "at least as large"),
])
def test_errors_name_what_is_wrong(call, message):
    with pytest.raises(ValueError, match=message):
        call()
