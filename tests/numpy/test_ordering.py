"""SPEC §2 scans and order: cumsum, cumprod, diff, sort, argsort, partition.

Values are compared with NumPy exactly (sorting, partitioning and differences of floats
are exact; cumulative sums and products run NumPy's own accumulation, so they are exact
too) and integer results exactly. Gradients: ``ng.gradcheck`` (central differences) and
the HIPS ``autograd`` package (its cumsum, diff, and 1-D sort and partition) to rtol
1e-12; cumprod's, which autograd lacks, against its analytic derivative (the product
of the others) to rtol 1e-12, with zeros in the input. Errors are NumPy's exception
types, raised before any kernel runs.
"""

import os
import subprocess
import sys
import textwrap
from functools import partial

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import sampled
from hypothesis import given
from hypothesis import strategies as st

import numgrad as ng

RTOL = 1e-12
SHAPE = (2, 3, 4)
AXES = [None, 0, 1, -1]


def rand(shape=SHAPE, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def weights(shape, seed=7):
    return np.random.default_rng(seed).standard_normal(shape)


def grad_of_weighted(fn, a, w):
    """The gradient of ``sum(w * fn(x))`` at `a`."""
    x = ng.tensor(a, requires_grad=True)
    (g,) = ng.grad((fn(x) * ng.tensor(w)).sum(), x)
    return g.numpy()


def autograd_weighted(anp_fn, a, w):
    """autograd's gradient of ``sum(w * anp_fn(t))`` at `a`."""
    return autograd.grad(lambda t: anp.sum(w * anp_fn(t)))(a)


def assert_same(actual, expected):
    """Equal values, shape and dtype (exact: no tolerance)."""
    actual = actual.numpy() if isinstance(actual, ng.Tensor) else actual
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)


# ---- values, as NumPy's -----------------------------------------------------------------

@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "sort", "argsort"])
def test_values_along_each_axis_are_numpys(name, axis):
    a = rand()
    expected = np.argsort(a, axis, kind="stable") if name == "argsort" else \
        getattr(np, name)(a, axis=axis)
    assert_same(getattr(ng, name)(ng.tensor(a), axis=axis), expected)
    if name != "sort":  # the method returns a new tensor (sort's works in place)
        assert_same(getattr(ng.tensor(a), name)(axis=axis), expected)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32"])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scan_dtypes_promote_as_numpys(name, dtype):
    a = np.array([[3, 1, 2], [0, 5, 4]]).astype(dtype)  # bool, int32 -> int64
    for kwargs in ({}, {"axis": 0}, {"dtype": "float32"}, {"dtype": "int32"},
                   {"dtype": "bool"}):
        assert_same(getattr(ng, name)(ng.tensor(a), **kwargs), getattr(np, name)(a, **kwargs))


def test_zero_d_scans_and_argsort_read_as_one_d_and_sort_needs_an_axis():
    for kwargs in ({}, {"axis": 0}, {"axis": -1}):
        assert_same(ng.cumsum(ng.tensor(3.0), **kwargs), np.cumsum(np.array(3.0), **kwargs))
        assert_same(ng.cumprod(ng.tensor(3.0), **kwargs), np.cumprod(np.array(3.0), **kwargs))
        assert_same(ng.argsort(ng.tensor(3.0), **kwargs), np.argsort(np.array(3.0), **kwargs))
    assert_same(ng.sort(ng.tensor(3.0), axis=None), np.sort(np.array(3.0), axis=None))
    assert_same(ng.partition(ng.tensor(3.0), 0, axis=None),
                np.partition(np.array(3.0), 0, axis=None))


def test_empty_tensors():
    a = np.zeros((2, 0))
    for name in ("cumsum", "cumprod", "sort", "argsort", "diff"):
        expected = getattr(np, name)(a)
        assert getattr(ng, name)(ng.tensor(a)).shape == expected.shape


def test_sort_places_nan_last_and_argsort_is_stable_with_ties():
    a = np.array([3.0, np.nan, 1.0, 3.0, np.nan, 1.0, -0.5])
    assert_same(ng.sort(ng.tensor(a)), np.sort(a))
    assert_same(ng.argsort(ng.tensor(a)), np.argsort(a, kind="stable"))
    ints = np.array([[2, 1, 2, 1], [0, 0, 0, 0]], dtype=np.int32)
    assert_same(ng.sort(ng.tensor(ints)), np.sort(ints))
    assert_same(ng.argsort(ng.tensor(ints), kind="quicksort"), np.argsort(ints, kind="stable"))


@pytest.mark.parametrize("kth", [0, 2, -1, (1, 3), [-4, 0]])
def test_partition_arrangement_is_numpys(kth):
    a = rand((5, 5), seed=1)
    for axis in (-1, 0, None):
        assert_same(ng.partition(ng.tensor(a), kth, axis=axis), np.partition(a, kth, axis=axis))


def test_partition_of_a_long_axis_with_ties_is_numpys_arrangement():
    # Long enough for NumPy's SIMD selection, whose np.argpartition may arrange otherwise.
    rng = np.random.default_rng(2)
    for a in (rng.standard_normal((2, 1500)), rng.integers(0, 9, (2, 1500)).astype(float)):
        for kth in (0, 500, (7, 1000, 1499)):
            assert_same(ng.partition(ng.tensor(a), kth), np.partition(a, kth))


@given(st.lists(st.integers(-3, 3), min_size=1, max_size=12), st.data())
def test_sort_and_partition_of_small_integers_with_ties(values, data):
    a = np.array(values, dtype=np.float64)
    kth = data.draw(st.integers(-len(values), len(values) - 1))
    assert_same(ng.sort(ng.tensor(a)), np.sort(a))
    assert_same(ng.argsort(ng.tensor(a)), np.argsort(a, kind="stable"))
    assert_same(ng.partition(ng.tensor(a), kth), np.partition(a, kth))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_diff_values_are_numpys(axis):
    a = rand()
    for n in (0, 1, 2, 5):  # 5 is beyond the axis: empty, as in NumPy
        assert_same(ng.diff(ng.tensor(a), n=n, axis=axis), np.diff(a, n=n, axis=axis))
    edge = np.ones(tuple(1 if d == axis % 3 else s for d, s in enumerate(SHAPE)))
    for kwargs in ({"prepend": 0.5}, {"append": -2.0}, {"prepend": edge, "append": 2 * edge},
                   {"prepend": ng.tensor(edge), "n": 2}):
        expected = np.diff(a, axis=axis, **{k: np.asarray(v) for k, v in kwargs.items()})
        assert_same(ng.diff(ng.tensor(a), axis=axis, **kwargs), expected)


def test_diff_dtypes_are_numpys():
    ints = np.array([[3, 1, 2], [0, 5, 4]], dtype=np.int32)
    bools = np.array([True, True, False, True])
    f32 = np.array([1.0, 4.0, 2.5], dtype=np.float32)
    for a, kwargs in ((ints, {}), (bools, {}), (bools, {"n": 2}), (f32, {}),
                      (f32, {"prepend": 0}),  # data joins as an int64 array: float64
                      (f32, {"append": np.float32(1)}), (ints, {"prepend": [[7], [8]]})):
        assert_same(ng.diff(ng.tensor(a), **kwargs), np.diff(a, **kwargs))


# ---- gradients ---------------------------------------------------------------------------

def cumprod_vjp_oracle(a, w, axis):
    """sum over i >= k of w_i times the product of a_j, j <= i, j != k (along `axis`)."""
    a, w = np.moveaxis(a, axis, -1), np.moveaxis(w, axis, -1)
    n = a.shape[-1]
    g = np.zeros_like(a)
    for k in range(n):
        others = np.cumprod(np.where(np.arange(n) == k, 1.0, a), axis=-1)
        g[..., k] = (w * others)[..., k:].sum(-1)
    return np.moveaxis(g, -1, axis)


@pytest.mark.parametrize("axis", AXES)
def test_cumsum_gradient_is_autograds_and_differences(axis):
    a = rand(seed=3)
    w = weights(np.cumsum(a, axis).shape)
    expected = autograd_weighted(partial(anp.cumsum, axis=axis), a, w)
    np.testing.assert_allclose(grad_of_weighted(partial(ng.cumsum, axis=axis), a, w), expected,
                               rtol=RTOL, atol=1e-14)
    x = ng.tensor(rand((2, 3), seed=4), requires_grad=True)
    assert ng.gradcheck(lambda t: ng.cumsum(t, axis=axis if axis in (None, 0) else -1), (x,))
    assert ng.gradgradcheck(lambda t: ng.cumsum(t, axis=0) ** 2, (x,))


ZEROS = {
    "none": [1.5, -0.7, 2.0, 0.3, -1.1],
    "one": [1.5, -0.7, 0.0, 0.3, -1.1],
    "first": [0.0, -0.7, 2.0, 0.3, -1.1],
    "last": [1.5, -0.7, 2.0, 0.3, 0.0],
    "run": [1.5, 0.0, 0.0, 0.0, -1.1],
    "apart": [0.0, -0.7, 0.0, 0.3, 0.0],
}


@pytest.mark.parametrize("case", sampled(list(ZEROS), 2))
def test_cumprod_gradient_is_exact_with_zeros(case):
    a = np.array([ZEROS[case], ZEROS["none"], ZEROS["run"]]).T  # (5, 3): axis 0 and 1
    for axis in (0, 1):
        w = weights(a.shape, seed=axis)
        np.testing.assert_allclose(grad_of_weighted(partial(ng.cumprod, axis=axis), a, w),
                                   cumprod_vjp_oracle(a, w, axis), rtol=RTOL, atol=1e-15)
    x = ng.tensor(ZEROS[case], requires_grad=True)
    assert ng.gradcheck(ng.cumprod, (x,))
    assert ng.gradgradcheck(ng.cumprod, (x,))  # second order, exact at zeros too


def test_cumprod_second_derivative_at_zeros_is_analytic():
    # f = sum(cumprod([a, b, c, d])) = a + ab + abc + abcd
    a, b, c, d = v = [1.0, 0.0, 3.0, 0.0]
    hessian = ng.functional.hessian(lambda t: ng.cumprod(t).sum(), ng.tensor(v)).numpy()
    expected = np.array([[0, 1 + c + c * d, b + b * d, b * c],
                         [1 + c + c * d, 0, a + a * d, a * c],
                         [b + b * d, a + a * d, 0, a * b],
                         [b * c, a * c, a * b, 0]])
    np.testing.assert_allclose(hessian, expected, rtol=RTOL, atol=0)


def test_cumprod_gradient_through_cumsum_to_second_order():
    x = ng.tensor([[0.5, 0.0, -1.2], [2.0, 0.0, 0.0]], requires_grad=True)
    assert ng.gradgradcheck(lambda t: ng.cumsum(ng.cumprod(t, axis=1), axis=0), (x,))
    assert ng.gradgradcheck(lambda t: ng.cumprod(ng.cumsum(t, axis=1), axis=1), (x,))


@pytest.mark.parametrize("axis", [0, -1])
def test_diff_gradient_is_autograds_and_differences(axis):
    a = rand((3, 5), seed=5)
    for n in (1, 3):
        w = weights(np.diff(a, n, axis).shape)
        expected = autograd_weighted(partial(anp.diff, n=n, axis=axis), a, w)
        np.testing.assert_allclose(grad_of_weighted(partial(ng.diff, n=n, axis=axis), a, w),
                                   expected, rtol=RTOL, atol=1e-14)
    x = ng.tensor(rand((3, 4), seed=6), requires_grad=True)
    edge = ng.tensor(rand((3, 1), seed=8), requires_grad=True)
    assert ng.gradcheck(lambda t, e: ng.diff(t, 2, axis=-1, prepend=e, append=e), (x, edge))
    assert ng.gradgradcheck(lambda t: ng.diff(t * t, axis=axis), (x,))


def test_sort_and_partition_gradients_are_autograds():
    a = rand((7,), seed=9)  # no ties: autograd's (unstable) permutations agree
    w = weights((7,))
    cases = [(lambda x: ng.sort(x), lambda t: anp.sort(t)),
             (lambda x: ng.partition(x, 2), lambda t: anp.partition(t, 2)),
             (lambda x: ng.partition(x, (1, 5)), lambda t: anp.partition(t, (1, 5)))]
    for fn, anp_fn in cases:
        np.testing.assert_allclose(grad_of_weighted(fn, a, w), autograd_weighted(anp_fn, a, w),
                                   rtol=RTOL, atol=0)


@pytest.mark.parametrize("axis", AXES)
def test_sort_and_partition_gradients_by_differences(axis):
    x = ng.tensor(rand((3, 4), seed=10), requires_grad=True)
    k = 1 if axis is None else -2
    ramp = ng.tensor(np.arange(1.0, 13.0).reshape(-1 if axis is None else (3, 4)))
    assert ng.gradcheck(lambda t: ng.sort(t, axis=axis) * ramp, (x,))
    assert ng.gradcheck(lambda t: ng.partition(t, k, axis=axis), (x,))
    assert ng.gradgradcheck(lambda t: ng.sort(t * t, axis=axis), (x,))


def test_sort_ties_route_the_gradient_as_numpys_stable_sort():
    a = np.array([2.0, 1.0, 2.0, 1.0, 2.0])
    w = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    order = np.argsort(a, kind="stable")  # [1, 3, 0, 2, 4]
    expected = np.empty(5)
    expected[order] = w
    np.testing.assert_array_equal(grad_of_weighted(ng.sort, a, w), expected)
    tied = np.array([[1.0, 2.0], [1.0, 0.0]])  # along axis 0: a tie in column 0
    np.testing.assert_array_equal(grad_of_weighted(lambda x: ng.sort(x, axis=0), tied,
                                                   np.array([[1.0, 2.0], [3.0, 4.0]])),
                                  [[1.0, 4.0], [3.0, 2.0]])


def test_batched_seeds_scan_the_axis_of_each_row():
    """With ``is_grads_batched=True`` the gradient has an extra leading axis: the rules
    scan the same axis (recorded negative) and equal one backward pass per seed."""
    a = np.array([[1.5, 0.0, 2.0], [0.3, -1.0, 0.0]])
    seeds = weights((3, 2, 3))
    for fn in (partial(ng.cumsum, axis=0), partial(ng.cumprod, axis=0),
               partial(ng.cumprod, axis=1), partial(ng.sort, axis=0)):
        x = ng.tensor(a, requires_grad=True)
        (rows,) = ng.grad(fn(x), x, grad_outputs=ng.tensor(seeds), is_grads_batched=True)
        for row, seed in zip(rows.numpy(), seeds):
            np.testing.assert_allclose(row, grad_of_weighted(fn, a, seed), rtol=RTOL, atol=0)
    x = ng.tensor(a, requires_grad=True)  # second order at zeros, batched
    (g,) = ng.grad(ng.cumprod(x, axis=1).sum(), x, create_graph=True)
    (rows,) = ng.grad(g, x, grad_outputs=ng.tensor(seeds), is_grads_batched=True,
                      retain_graph=True)
    for row, seed in zip(rows.numpy(), seeds):
        (one,) = ng.grad(g, x, grad_outputs=ng.tensor(seed), retain_graph=True)
        np.testing.assert_allclose(row, one.numpy(), rtol=RTOL, atol=0)


def test_argsort_has_no_gradient():
    x = ng.tensor([3.0, 1.0], requires_grad=True)
    i = ng.argsort(x)
    assert i.dtype == np.int64 and not i.requires_grad


# ---- in place: the methods, as NumPy's ----------------------------------------------------

def test_sort_method_sorts_in_place_and_the_function_copies():
    a = rand((3, 4), seed=11)
    x = ng.tensor(a)
    before = x[0]
    sorted_copy = ng.sort(x, axis=0)
    assert_same(x, a)  # the function leaves x alone
    assert x.sort(axis=0) is None
    assert_same(x, np.sort(a, axis=0))
    assert_same(sorted_copy, np.sort(a, axis=0))
    assert_same(before, a[0])  # taken earlier: keeps its value (SPEC §1)
    partitioned = ng.partition(x, 1)
    assert x.partition(1) is None
    assert_same(x, np.partition(np.sort(a, axis=0), 1))
    assert_same(partitioned, x.numpy())


def test_sorting_in_place_keeps_history_and_refuses_a_leaf_that_requires_grad():
    a = rand((4,), seed=12)
    leaf = ng.tensor(a, requires_grad=True)
    with ng.engine.record() as rec:
        for call in (leaf.sort, lambda: leaf.partition(1)):
            with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
                call()
    assert rec.kernels_launched == 0
    y = leaf * 3
    y.sort()
    (g,) = ng.grad((y * ng.tensor([1.0, 2.0, 3.0, 4.0])).sum(), leaf)
    expected = np.empty(4)
    expected[np.argsort(a)] = [3.0, 6.0, 9.0, 12.0]
    np.testing.assert_allclose(g.numpy(), expected, rtol=RTOL)
    with ng.no_grad():
        leaf.sort()
    assert_same(leaf, np.sort(a))
    for call in (lambda: leaf.sort(axis=None), lambda: leaf.partition(0, axis=None)):
        with pytest.raises(TypeError, match="axis=None"):
            call()


# ---- errors, as NumPy's ---------------------------------------------------------------------

A = np.arange(6.0).reshape(2, 3)
ERRORS = [
    # (numgrad call, NumPy call, the words of numgrad's message)
    (lambda x: ng.cumsum(x, axis=2), lambda a: np.cumsum(a, axis=2), "out of bounds"),
    (lambda x: ng.cumprod(x, axis=1.0), lambda a: np.cumprod(a, axis=1.0), "axis must be"),
    (lambda x: ng.cumsum(x, dtype="complex128"), None, "unsupported dtype"),
    (lambda x: ng.sort(x, axis=-3), lambda a: np.sort(a, axis=-3), "out of bounds"),
    (lambda x: ng.sort(x[0, 0]), lambda a: np.sort(a[0, 0]), "out of bounds"),
    (lambda x: ng.sort(x, kind="bogus"), lambda a: np.sort(a, kind="bogus"), "kind"),
    (lambda x: ng.argsort(x, kind=3), lambda a: np.argsort(a, kind=3), "kind"),
    (lambda x: ng.sort(x, order="f"), lambda a: np.sort(a, order="f"), "order"),
    (lambda x: ng.sort(x, kind="stable", stable=True),
     lambda a: np.sort(a, kind="stable", stable=True), "kind"),
    (lambda x: ng.partition(x, 3), lambda a: np.partition(a, 3), r"kth\(=3\).*length 3"),
    (lambda x: ng.partition(x, -4), lambda a: np.partition(a, -4), r"kth\(=-4\)"),
    (lambda x: ng.partition(x, 1.0), lambda a: np.partition(a, 1.0), "integer"),
    (lambda x: ng.partition(x, []), lambda a: np.partition(a, []), "integer"),
    (lambda x: ng.partition(x, True), lambda a: np.partition(a, True), "boolean"),
    (lambda x: ng.partition(x, [[0]]), lambda a: np.partition(a, [[0]]), "1-D"),
    (lambda x: ng.partition(x, 0, kind="quick"), lambda a: np.partition(a, 0, kind="quick"),
     "kind"),
    (lambda x: ng.diff(x, n=-1), lambda a: np.diff(a, n=-1), "non-negative"),
    (lambda x: ng.diff(x, n=1.0), lambda a: np.diff(a, n=1.0), "integer"),
    (lambda x: ng.diff(x[0, 0]), lambda a: np.diff(a[0, 0]), "at least one dimension"),
    (lambda x: ng.diff(x, axis=2), lambda a: np.diff(a, axis=2), "out of bounds"),
    (lambda x: ng.diff(x, prepend=[1.0, 2.0]), lambda a: np.diff(a, prepend=[1.0, 2.0]),
     r"shape \(2,\) does not fit"),
    (lambda x: ng.diff(x, append=np.zeros((2, 2, 1))),
     lambda a: np.diff(a, append=np.zeros((2, 2, 1))), r"shape \(2, 2, 1\)"),
    (lambda x: ng.diff(x, axis=0, append=np.zeros((1, 2))),
     lambda a: np.diff(a, axis=0, append=np.zeros((1, 2))), "all dimensions but axis 0"),
]


@pytest.mark.parametrize("ng_call, np_call, words", ERRORS)
def test_errors_are_numpys_types_at_the_call(ng_call, np_call, words):
    x = ng.tensor(A) * 1  # pending: any kernel would run to realize it
    if np_call is None:
        kind = TypeError
    else:
        with pytest.raises((TypeError, ValueError)) as numpy_error:
            np_call(A)
        kind = ValueError if isinstance(numpy_error.value, ValueError) else TypeError
    with ng.engine.record() as rec:
        with pytest.raises(kind, match=words):
            ng_call(x)
    assert rec.kernels_launched == 0


# ---- dispatch from NumPy, and the CUDA target ----------------------------------------------

def test_numpy_functions_on_tensors_dispatch_here():
    a = rand((3, 4), seed=13)
    x = ng.tensor(a, requires_grad=True)
    out = np.cumsum(x, axis=1) + np.sort(x) + np.diff(x, prepend=0.0) + np.partition(x, 2)
    assert isinstance(out, ng.Tensor) and out.requires_grad
    expected = np.cumsum(a, axis=1) + np.sort(a) + np.diff(a, prepend=0.0) + np.partition(a, 2)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=RTOL)
    assert_same(np.argsort(x, axis=0), np.argsort(a, axis=0, kind="stable"))


CUDA_CHECK = """
import numpy as np, numgrad as ng
a = np.array([[3.0, 0.0, 2.0, -1.0], [0.5, 5.0, 0.0, 0.0]])
x = ng.tensor(a, device="cuda", requires_grad=True)
w = ng.tensor(np.arange(8.0).reshape(2, 4), device="cuda")
with ng.engine.record() as rec:
    outs = {"cumsum": ng.cumsum(x, axis=1), "cumprod": ng.cumprod(x, axis=0),
            "sort": ng.sort(x), "partition": ng.partition(x, 1, axis=None),
            "diff": ng.diff(x, prepend=1.0)}
    index = ng.argsort(x, axis=0)
    loss = sum(((o * o).sum() for o in outs.values()), ng.cumprod(x, axis=1)[:, -1].sum())
    (g,) = ng.grad(loss, x)
    values = {k: v.numpy() for k, v in outs.items()}
    g, index = g.numpy(), index.numpy()
assert rec.library_via_host >= 7, rec  # scans, sorts and their backward, through the host
xc = ng.tensor(a, requires_grad=True)
cpu = {"cumsum": ng.cumsum(xc, axis=1), "cumprod": ng.cumprod(xc, axis=0), "sort": ng.sort(xc),
       "partition": ng.partition(xc, 1, axis=None), "diff": ng.diff(xc, prepend=1.0)}
for k, v in cpu.items():
    np.testing.assert_allclose(values[k], v.detach().numpy(), rtol=1e-12, atol=0)
np.testing.assert_array_equal(index, np.argsort(a, axis=0, kind="stable"))
loss = sum(((o * o).sum() for o in cpu.values()), ng.cumprod(xc, axis=1)[:, -1].sum())
np.testing.assert_allclose(g, ng.grad(loss, xc)[0].numpy(), rtol=1e-12, atol=1e-15)
print("ok")
"""


def test_cuda_target_runs_scans_and_sorts_through_the_host():
    """On the CUDA target (a GPU, or Numba's simulator in a child process: tiny arrays),
    values and gradients equal the CPU's, and ``record()`` counts ``library_via_host``."""
    env = dict(os.environ)
    if not ng.cuda.is_available():
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CUDA_CHECK)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
