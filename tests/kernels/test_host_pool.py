"""Pooled host memory (`numgrad.kernels.host_pool`): a block is reused only once nothing
refers to it, and tensors computed in a loop that drops most results keep their values.
Values are compared exactly (the same kernels run either way)."""

import numpy as np
import pytest

import numgrad as ng
from numgrad.kernels import host, host_pool

SHAPE = (512, 256)  # 1 MiB of float64: pooled


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _free_addresses() -> set[int]:
    host_pool._sweep()
    return {_address(b) for blocks in host_pool._free.values() for b in blocks}


def test_a_block_is_reused_only_when_no_view_of_it_is_left():
    a = host_pool.empty(SHAPE, np.float64)
    where = _address(a)
    derived = [a[1:].T, np.lib.stride_tricks.as_strided(a, (10,), (8,)), a.reshape(-1),
               host.as_strided(a.reshape(-1)[8:], (3, 4), (0, 8))]  # NumPy's constructor
    del a
    while derived:
        assert where not in _free_addresses()
        assert _address(host_pool.empty(SHAPE, np.float64)) != where
        derived.pop()
    assert where in _free_addresses()


@pytest.mark.parametrize("writeable", [False, True])
@pytest.mark.parametrize("shape, strides", [((4, 3), (0, 8)), ((3, 3), (16, 8)),
                                            ((5,), (-8,)), ((2, 2), (8, 24))])
def test_strided_views_are_numpys(shape, strides, writeable):
    base = np.arange(12.0)[4:] if strides[0] >= 0 else np.arange(12.0)[8:]
    got = host.as_strided(base, shape, strides, writeable=writeable)
    want = np.lib.stride_tricks.as_strided(base, shape, strides, writeable=writeable)
    assert got.strides == want.strides and got.flags.writeable == writeable
    assert np.shares_memory(got, base)
    np.testing.assert_array_equal(got, want)


def test_small_buffers_and_size_classes():
    assert host_pool.empty((4,), np.float32).base is None  # NumPy's own, below MIN_BYTES
    for n in [host_pool.MIN_BYTES, 3 << 18, 10**6 + 1, 123_456_789]:
        size = host_pool.size_class(n)
        assert n <= size <= n * 1.125


def test_unused_blocks_kept_stay_under_the_cap(monkeypatch):
    monkeypatch.setattr(host_pool, "MAX_FREE_BYTES", 3 << 20)
    host_pool.clear()
    for rows in range(256, 1024, 64):  # many classes, each dropped at once
        host_pool.empty((rows, 1024), np.float64)
    host_pool._sweep()
    assert host_pool._free_bytes <= 3 << 20
    host_pool.clear()
    assert host_pool._free_bytes == 0


def test_results_kept_across_a_loop_keep_their_values():
    rng = np.random.default_rng(3)
    data = rng.standard_normal(SHAPE)
    x = ng.tensor(data)
    kept = {}
    for i in range(12):
        y = ((x * (i + 1.0)).tanh() + i).realize()  # most results die at once
        if i % 3 == 0:
            kept[i] = y
    for i, y in kept.items():
        expected = ng.tensor(data * (i + 1.0)).tanh().numpy() + i
        np.testing.assert_array_equal(y.numpy(), expected)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_pooled_arrays_have_the_shape_dtype_and_layout_asked_for(dtype):
    a = host_pool.empty((300, 700), np.dtype(dtype))
    assert a.shape == (300, 700) and a.dtype == dtype and a.flags.c_contiguous
    assert a.flags.writeable and a.flags.aligned


def test_pooled_results_count_as_allocations_and_their_views_do_not():
    a, b = ng.tensor(np.ones((512, 300))), ng.tensor(np.ones((300, 256)))
    a.realize(), b.realize()
    with ng.engine.record() as rec:
        product = (a @ b).realize()  # a pooled matmul result: 1 MiB
    assert rec.kernels_launched == 1 and rec.bytes_allocated == 512 * 256 * 8
    with ng.engine.record() as rec:
        product.reshape(256, 512).realize()  # a view of it
    assert rec.kernels_launched == 0 and rec.bytes_allocated == 0
    np.testing.assert_array_equal(product.numpy(), np.full((512, 256), 300.0))
