# ruff: noqa
# Vendored from HIPS autograd, tests/test_numpy.py (commit 027429f98215d3f7464dd1b6286aaefa2e4fb1f9):
# the tests of the functions in numgrad's SPEC §2, run against numgrad (tests/hips/conftest.py).
# Copyright (c) 2025 by the President and Fellows of Harvard University
# MIT License: https://github.com/HIPS/autograd/blob/master/license.txt
#
# Edits for numgrad (mechanical): the imports point at tests/hips' adapters; tests of other
# things are left out (indexing and methods, np.array of boxes, np.r_/np.c_, len,
# make_diagonal/diagonal, linspace, astype, test_non_numpy_sum, test_cast_to_int, ties in
# max/min/maximum built with np.array); the pytestmark line.
import pytest
import warnings

import hips_numpy as np
from hips_numpy import random as npr
from hips_test_util import check_grads, grad
from hips_numpy_utils import combo_check
npr.seed(1)

pytestmark = pytest.mark.slow

def test_dot():
    def fun( x, y): return np.dot(x, y)

    mat1 = npr.randn(10, 11)
    mat2 = npr.randn(10, 11)
    vect1 = npr.randn(10)
    vect2 = npr.randn(11)
    vect3 = npr.randn(11)

    check_grads(fun)(mat1, vect2)
    check_grads(fun)(mat1, mat2.T)
    check_grads(fun)(vect1, mat1)
    check_grads(fun)(vect2, vect3)

def test_dot_with_floats():
    def fun( x, y): return np.dot(x, y)

    mat1 = npr.randn(10, 11)
    vect1 = npr.randn(10)
    float1 = npr.randn()

    check_grads(fun)(mat1, float1)
    check_grads(fun)(float1, mat1)
    check_grads(fun)(vect1, float1)
    check_grads(fun)(float1, vect1)

def test_outer():
    def fun( x, y): return np.outer(x, y)

    vect2 = npr.randn(11)
    vect3 = npr.randn(11)

    check_grads(fun)(vect2, vect3)
    check_grads(fun)(vect2.T, vect3)
    check_grads(fun)(vect2.T, vect3.T)


def test_max():
    def fun(x): return np.max(x)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_max_axis():
    def fun(x): return np.max(x, axis=1)
    mat = npr.randn(3, 4, 5)
    check_grads(fun)(mat)

def test_max_axis_keepdims():
    def fun(x): return np.max(x, axis=1, keepdims=True)
    mat = npr.randn(3, 4, 5)
    check_grads(fun)(mat)

def test_min():
    def fun(x): return np.min(x)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_min_axis():
    def fun(x): return np.min(x, axis=1)
    mat = npr.randn(3, 4, 5)
    check_grads(fun)(mat)

def test_min_axis_keepdims():
    def fun(x): return np.min(x, axis=1, keepdims=True)
    mat = npr.randn(3, 4, 5)
    check_grads(fun)(mat)

def test_sum_1():
    def fun(x): return np.sum(x)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_sum_2():
    def fun(x): return np.sum(x, axis=0)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_sum_3():
    def fun(x): return np.sum(x, axis=0, keepdims=True)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_sum_with_axis_tuple():
    def fun(x): return np.sum(x, axis=(1,2))
    mat = npr.randn(10, 11, 7)
    check_grads(fun)(mat)

def test_flipud():
    def fun(x): return np.flipud(x)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_fliplr():
    def fun(x): return np.fliplr(x)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_rot90():
    def fun(x): return np.rot90(x)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_cumsum_axis0():
    def fun(x): return np.cumsum(x, axis=0)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_cumsum_axis1():
    def fun(x): return np.cumsum(x, axis=1)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_cumsum_1d():
    def fun(x): return np.cumsum(x)
    mat = npr.randn(10)
    check_grads(fun)(mat)

def test_cumsum_no_axis():
    def fun(x): return np.cumsum(x)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_mean_1():
    def fun(x): return np.mean(x)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_mean_2():
    def fun(x): return np.mean(x, axis=0)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_mean_3():
    def fun(x): return np.mean(x, axis=0, keepdims=True)
    mat = npr.randn(10, 11)
    check_grads(fun)(mat)

def test_reshape_call():
    A = npr.randn(5, 6, 4)
    def fun(x): return np.reshape(x, (5 * 4, 6))
    check_grads(fun)(A)

def test_ravel_call():
    A = npr.randn(5, 6, 4)
    def fun(x): return np.ravel(x)
    check_grads(fun)(A)

def test_simple_append_list():
    A = [1., 2., 3.]
    b = 4.
    check_grads(np.append, argnum=(0, 1))(A, b)

def test_simple_append_arr():
    A = np.array([1., 2., 3.])
    b = 4.
    check_grads(np.append, argnum=(0, 1))(A, b)

def test_simple_concatenate():
    A = npr.randn(5, 6, 4)
    B = npr.randn(4, 6, 4)
    def fun(x): return np.concatenate((A, x))
    check_grads(fun)(B)

def test_concatenate_axis_0():
    A = npr.randn(5, 6, 4)
    B = npr.randn(5, 6, 4)
    def fun(x): return np.concatenate((B, x, B))
    check_grads(fun)(A)

def test_concatenate_axis_1():
    A = npr.randn(5, 6, 4)
    B = npr.randn(5, 6, 4)
    def fun(x): return np.concatenate((B, x, B), axis=1)
    check_grads(fun)(A)

def test_concatenate_axis_1_unnamed():
    """Tests whether you can specify the axis without saying "axis=1"."""
    A = npr.randn(5, 6, 4)
    B = npr.randn(5, 6, 4)
    def fun(x): return np.concatenate((B, x, B), 1)
    check_grads(fun)(A)

def test_trace():
    def fun(x): return np.trace(x, offset=offset)
    mat = npr.randn(10, 11)
    offset = npr.randint(-9,11)
    check_grads(fun)(mat)

def test_trace2():
    def fun(x): return np.trace(x, offset=offset)
    mat = npr.randn(11, 10)
    offset = npr.randint(-9,11)
    check_grads(fun)(mat)

def test_trace():
    def fun(x): return np.split(x, 2)[0]
    mat = npr.randn(10)
    check_grads(fun)(mat)

def test_trace_extradims():
    def fun(x): return np.trace(x, offset=offset)
    mat = npr.randn(5,6,4,3)
    offset = npr.randint(-5,6)
    check_grads(fun)(mat)

def test_diag():
    def fun(x): return np.diag(x)
    mat = npr.randn(10, 10)
    check_grads(fun)(mat)

def test_roll():
    def fun(x): return np.roll(x, 2, axis=1)
    mat = npr.randn(4, 5)
    check_grads(fun)(mat)

def test_roll_no_axis():
    def fun(x): return np.roll(x, 2, axis=1)
    mat = npr.randn(4, 5)
    check_grads(fun)(mat)

def test_triu():
    def fun(x): return np.triu(x, k = 2)
    mat = npr.randn(5, 5)
    check_grads(fun)(mat)

def test_tril():
    def fun(x): return np.tril(x, k = 2)
    mat = npr.randn(5, 5)
    check_grads(fun)(mat)

def test_clip():
    def fun(x): return np.clip(x, a_min=0.1, a_max=1.1)
    mat = npr.randn(5, 5)
    check_grads(fun)(mat)

def test_prod_1():
    def fun(x): return np.prod(x)
    mat = npr.randn(2, 3)**2 / 10.0 + 0.1  # Gradient unstable when zeros are present.
    check_grads(fun)(mat)

def test_prod_2():
    def fun(x): return np.prod(x, axis=0)
    mat = npr.randn(2, 3)**2 + 0.1
    check_grads(fun)(mat)

def test_prod_3():
    def fun(x): return np.prod(x, axis=0, keepdims=True)
    mat = npr.randn(2, 3)**2 + 0.1
    check_grads(fun)(mat)

def test_prod_4():
    def fun(x): return np.prod(x)
    mat = npr.randn(7)**2 + 0.1
    check_grads(fun)(mat)

def test_var_ddof():
    B = npr.randn(3)
    C = npr.randn(3, 4)
    D = npr.randn(1, 3)
    combo_check(np.var, (0,))([B, C, D], axis=[None], keepdims=[True, False], ddof=[0, 1])
    combo_check(np.var, (0,))([C, D], axis=[None, 1], keepdims=[True, False], ddof=[2])

def test_std_ddof():
    B = npr.randn(3)
    C = npr.randn(3, 4)
    D = npr.randn(1, 3)
    combo_check(np.std, (0,))([B, C, D], axis=[None], keepdims=[True, False], ddof=[0, 1])
    combo_check(np.std, (0,))([C, D], axis=[None, 1], keepdims=[True, False], ddof=[2])

def test_where():
    def fun(x, y):
        b = np.where(C, x, y)
        return b
    C = npr.randn(4, 5) > 0
    A = npr.randn(4, 5)
    B = npr.randn(4, 5)
    check_grads(fun)(A, B)

def test_squeeze_func():
    A = npr.randn(5, 1, 4)
    def fun(x): return np.squeeze(x)
    check_grads(fun)(A)

def test_repeat():
    A = npr.randn(5, 3, 4)
    def fun(x): return np.repeat(x, 2, axis=1)
    check_grads(fun)(A)

def test_repeat_axis1_rep1():
    A = npr.randn(5, 3, 4)
    def fun(x): return np.repeat(x, 1, axis=1)
    check_grads(fun)(A)

def test_repeat_axis0():
    A = npr.randn(5, 3)
    def fun(x): return np.repeat(x, 2, axis=0)
    check_grads(fun)(A)

def test_repeat_1d_axis0():
    A = npr.randn(5)
    def fun(x): return np.repeat(x, 2, axis=0)
    check_grads(fun)(A)

def test_repeat_axis0_rep1():
    A = npr.randn(5, 1)
    def fun(x): return np.repeat(x, 1, axis=0)
    check_grads(fun)(A)

def test_expand_dims():
    A = npr.randn(5, 1, 4)
    def fun(x): return np.expand_dims(x, 2)
    check_grads(fun)(A)

def test_tensordot_kwargs_by_position():
    def fun(x):
        return np.tensordot(x * np.ones((2,2)),
                            x * np.ones((2,2)), 2)
    grad(fun)(1.0)

def test_nan_to_num():
    y = np.array([0., np.nan, np.inf, -np.inf])
    fun = lambda x: np.sum(np.sin(np.nan_to_num(x + y)))

    x = np.random.randn(4)
    check_grads(fun)(x)

def test_maximum_equal_values():
    def fun(x): return np.maximum(x, x)
    check_grads(fun)(1.0)
