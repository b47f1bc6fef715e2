"""NumPy's reductions that skip NaN: nansum, nanmean, nanmax, nanmin.

Values against NumPy exactly (the same dtype, NaN where NumPy gives NaN: a slice of NaN
only), over axes, keepdims, float32 and integers; gradients against central finite
differences (`ng.gradcheck`'s tolerances) away from NaN, and written out at NaN (0 there;
HIPS autograd has no gradient of these), to 1e-12 relative.
"""

import warnings

import numpy as np
import pytest
from budget import sampled

import numgrad as ng

NAMES = ["nansum", "nanmean", "nanmax", "nanmin"]
A = np.array([[1.0, np.nan, 3.0, 0.5],
              [np.nan, np.nan, np.nan, np.nan],   # all NaN
              [-2.0, 5.0, np.nan, 5.0]])


def _numpy(name, a, **kwargs):
    with warnings.catch_warnings():  # ("Mean of empty slice", "All-NaN slice")
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, name)(a, **kwargs)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: d.__name__)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
@pytest.mark.parametrize("name", sampled(NAMES, 2))
def test_values_match_numpy(name, axis, dtype):
    a = A.astype(dtype)
    for keepdims in (False, True):
        got = getattr(ng, name)(ng.tensor(a), axis=axis, keepdims=keepdims).numpy()
        want = _numpy(name, a, axis=axis, keepdims=keepdims)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)  # (NaN where NumPy has NaN)


@pytest.mark.parametrize("name", NAMES)
def test_integers_and_numpys_call(name):
    i = np.array([[1, -2, 7], [3, 4, 0]])
    got, want = getattr(ng, name)(ng.tensor(i), axis=1).numpy(), getattr(np, name)(i, axis=1)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert isinstance(_numpy(name, ng.tensor(A)), ng.Tensor)  # np.<name>(tensor) dispatches


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_finite_differences_away_from_nan(name):
    x = ng.tensor(np.random.default_rng(0).uniform(-2, 2, (3, 4)), requires_grad=True)
    assert ng.gradcheck(lambda t: (getattr(ng, name)(t, axis=1) * ng.arange(1.0, 4.0)).sum(),
                        (x,))


def test_nansum_and_nanmean_gradients_are_zero_at_nan():
    # (HIPS autograd has no gradient for either: written out.) Row weights 1, 2, 3.
    kept, weights = ~np.isnan(A), np.arange(1.0, 4.0)[:, None]
    for name, want in (("nansum", kept * weights),
                       ("nanmean", kept * weights / np.maximum(kept.sum(1, keepdims=True), 1))):
        x = ng.tensor(A, requires_grad=True)
        (getattr(ng, name)(x, axis=1) * ng.tensor(weights[:, 0])).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_nanmax_gradient_goes_to_the_maximum_and_ties_share_it():
    x = ng.tensor(A, requires_grad=True)
    ng.nanmax(x, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 1, 0], [0, 0, 0, 0], [0, .5, 0, .5]])
