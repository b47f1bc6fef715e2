"""The adapters that run HIPS autograd's tests on numgrad check what they claim: a wrong
gradient fails `check_grads`, and `combo_check` runs every combination."""

import hips_numpy as np
import pytest
from hips_test_util import check_grads, combo_check, eager_combo_check

import numgrad as ng


def test_check_grads_fails_a_wrong_gradient():
    with pytest.raises(ng.GradcheckError):
        check_grads(lambda x: x.detach() * x, order=1)(np.random.randn(3))
    half_square = lambda x: x.detach() * x - 0.5 * x.detach() ** 2  # noqa: E731
    x = np.random.randn(3)
    check_grads(half_square, order=1)(x)  # its value and first derivative are x**2 / 2's
    with pytest.raises(ng.GradcheckError):  # its second derivative is not
        check_grads(half_square)(x)


def test_combo_checks_run_every_combination():
    seen = []

    def fun(x, y, k=0):
        seen.append((x.shape, k))
        return x * y + k

    combo_check(fun, [0])([np.random.randn(2), np.random.randn(3)], [1.5], k=[0, 1])
    shapes = {s for s, _ in seen}
    assert shapes == {(2,), (3,)} and {k for _, k in seen} == {0, 1}
    seen.clear()
    eager_combo_check(fun, [0, 1], [np.random.randn(2)], [0.5, 2.0], k=[3])
    assert seen and all(k == 3 for _, k in seen)


def test_hips_numpy_is_numgrad_on_tensors():
    t = np.exp(np.random.randn(2))  # a NumPy array in, numgrad's function
    assert isinstance(t, ng.Tensor)
    assert np.pi == 3.141592653589793 and np.linalg.solve is not None
