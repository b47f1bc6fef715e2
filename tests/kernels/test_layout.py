"""``numgrad.kernels.layout``: collapsing a loop nest, and C-contiguous strides.

The spec is ``collapse``'s docstring: dimensions of size 1 are dropped; dimension d
merges into d + 1, within the kept or the reduced part, when every operand has
``stride[d] == stride[d+1] * shape[d+1]``; each part keeps at least one dimension.
Strides below are in bytes, float64 unless said otherwise.
"""

import itertools

import numpy as np
import pytest

from numgrad.kernels.layout import collapse, contiguous_strides


def offsets(shape, strides):
    """The byte offsets an operand is read at, walking the nest in C order."""
    return [sum(i * s for i, s in zip(index, strides))
            for index in itertools.product(*(range(n) for n in shape))]


# ---- merging ----------------------------------------------------------------------------

def test_contiguous_operands_merge_into_one_dimension():
    a = np.empty((2, 3, 4))
    assert collapse((2, 3, 4), [a.strides, a.strides], 3) == ((24,), [(8,), (8,)], 1)


def test_dimensions_of_size_1_are_dropped_whatever_their_stride():
    assert collapse((2, 1, 3), [(24, 999, 8)], 3) == ((6,), [(8,)], 1)
    assert collapse((1, 5, 1), [(0, 8, 0)], 3) == ((5,), [(8,)], 1)


def test_a_broadcast_scalar_does_not_prevent_a_merge():
    # stride 0 everywhere: 0 == 0 * n, so the scalar follows any merge
    assert collapse((2, 3, 4), [(96, 32, 8), (0, 0, 0)], 3) == ((24,), [(8,), (0,)], 1)


def test_a_broadcast_row_or_column_keeps_two_dimensions():
    a = np.empty((3, 4))
    row = np.broadcast_to(np.empty(4), (3, 4))        # strides (0, 8)
    column = np.broadcast_to(np.empty((3, 1)), (3, 4))  # strides (8, 0)
    assert collapse((3, 4), [a.strides, row.strides], 2) == ((3, 4), [(32, 8), (0, 8)], 2)
    assert collapse((3, 4), [a.strides, column.strides], 2) == ((3, 4), [(32, 8), (8, 0)], 2)


def test_dimensions_broadcast_together_merge():
    # b repeats one row of 4 over the two outer dimensions: those merge, the inner stays
    b = np.broadcast_to(np.empty(4), (2, 3, 4))
    assert b.strides == (0, 0, 8)
    assert collapse((2, 3, 4), [(96, 32, 8), b.strides], 3) == ((6, 4), [(32, 8), (0, 8)], 2)


def test_a_transposed_operand_prevents_a_merge():
    a = np.empty((3, 4))
    t = np.empty((4, 3)).T  # strides (8, 24): its rows are not one after the other
    assert collapse((3, 4), [a.strides, t.strides], 2) == ((3, 4), [(32, 8), (8, 24)], 2)
    # a partial transpose blocks only the merge it breaks: dims 0 and 1 still merge
    p = np.empty((4, 2, 3)).transpose(1, 2, 0)
    assert p.strides == (24, 8, 48)
    assert collapse((2, 3, 4), [(96, 32, 8), p.strides], 3) == ((6, 4), [(32, 8), (8, 48)], 2)


# ---- kept and reduced parts ---------------------------------------------------------------

def test_kept_and_reduced_parts_are_never_merged():
    # contiguous throughout, so one dimension would do, but the reduction needs its own
    assert collapse((3, 4), [(32, 8)], 1) == ((3, 4), [(32, 8)], 1)
    a = np.empty((2, 3, 4, 5))
    assert collapse((2, 3, 4, 5), [a.strides], 2) == ((6, 20), [(160, 8)], 1)


def test_each_part_keeps_at_least_one_dimension():
    # a full reduction (kept = 0) still has one kept dimension, of size 1 and stride 0
    assert collapse((4, 5), [(40, 8)], 0) == ((1, 20), [(0, 8)], 1)
    # kept dimensions all of size 1
    assert collapse((1, 1, 5), [(40, 40, 8)], 2) == ((1, 5), [(0, 8)], 1)
    # reduced dimensions all of size 1: the reduced part is one dimension of size 1
    assert collapse((3, 1), [(8, 8)], 1) == ((3, 1), [(8, 0)], 1)
    # no reduction at all: no reduced part is invented
    assert collapse((1, 1), [(8, 8)], 2) == ((1,), [(0,)], 1)
    assert collapse((), [(), ()], 0) == ((1,), [(0,), (0,)], 1)


def random_view_strides(rng, shape):
    """The strides of a random view of `shape`: mostly contiguous (so that dimensions
    merge), sometimes transposed, sliced along a dimension, or broadcast along one."""
    ndim = len(shape)
    order = rng.permutation(ndim) if rng.random() < 0.3 else np.arange(ndim)
    step = [2 if rng.random() < 0.15 else 1 for _ in range(ndim)]
    base = np.empty(tuple(shape[d] * step[d] for d in order))
    view = base[tuple(slice(None, shape[d]) for d in order)].transpose(np.argsort(order))
    strides = list(view.strides)
    if rng.random() < 0.3:
        strides[int(rng.integers(ndim))] = 0
    return tuple(strides)


@pytest.mark.parametrize("case", range(60))
def test_the_collapsed_nest_reads_the_same_bytes_in_the_same_order(case):
    """Random views and reduction splits: the collapsed nest visits every operand at
    the same offsets, with as many kept iterations, in no more dimensions."""
    rng = np.random.default_rng(case)
    ndim = int(rng.integers(1, 5))
    shape = tuple(int(n) for n in rng.integers(1, 4, ndim))
    kept = int(rng.integers(0, ndim + 1))
    strides = [random_view_strides(rng, shape) for _ in range(int(rng.integers(1, 4)))]
    new_shape, new_strides, new_kept = collapse(shape, strides, kept)
    assert new_kept >= 1 and len(new_shape) <= ndim + (kept == 0)
    assert np.prod(new_shape[:new_kept]) == np.prod(shape[:kept])
    for before, after in zip(strides, new_strides):
        assert offsets(new_shape, after) == offsets(shape, before)


# ---- contiguous_strides ----------------------------------------------------------------

# No empty shapes: NumPy 2 gives an empty array strides 0 (they are never read).
@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4), (3, 1, 2), (1,)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_contiguous_strides_are_numpys(shape, dtype):
    itemsize = np.dtype(dtype).itemsize
    assert contiguous_strides(shape, itemsize) == np.empty(shape, dtype).strides


def test_contiguous_strides_by_hand():
    assert contiguous_strides((2, 3, 4), 8) == (96, 32, 8)
    assert contiguous_strides((7,), 4) == (4,)
    assert contiguous_strides((), 8) == ()


# ---- nests deeper than a compiled kernel loops over ------------------------------------

@pytest.mark.parametrize("dims", [17, 22])
def test_a_launch_over_more_unmergeable_dimensions_than_a_kernel_nests_is_interpreted(
        numba_cpu, dims):
    """Python compiles at most 20 nested blocks: a kernel over 22 dimensions that do not
    merge (each pair transposed) raised SyntaxError from its generated source. It runs
    on the interpreter now, elementwise, reduced and differentiated; values to 1e-12."""
    import numgrad as ng

    a = np.random.default_rng(0).standard_normal((2,) * dims)
    swap = [d ^ 1 if d ^ 1 < dims else d for d in range(dims)]  # (its own inverse)
    want = np.exp(a * a.transpose(swap))
    x = ng.tensor(a, requires_grad=True)
    with ng.engine.record() as rec:
        y = (x * x.transpose(swap)).exp()
        total = y.sum(axis=(0, 3))
        np.testing.assert_allclose(total.numpy(), want.sum(axis=(0, 3)), rtol=1e-12)
    assert rec.kernels_interpreted > 0
    total.sum().backward()
    grad = 2 * want * a.transpose(swap)
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-12)
