"""SPEC §2's shape and assembly functions: values against NumPy, gradients against finite
differences (``ng.gradcheck``) and HIPS autograd, errors against NumPy's, fusion, and the
CUDA target in Numba's simulator.

Each case is one function of a namespace ``xp``, run as ``fn(np, ...)``,
``fn(autograd.numpy, ...)`` and ``fn(ng, ...)``: numgrad's names and signatures are
NumPy's. Values are checked to float64 rtol 1e-12 (movements are exact; products sum
in another order than NumPy's BLAS). Shapes are small and fixed per case to keep the
compile bill small; hypothesis draws sizes at fixed ranks, which reuse compiled kernels.
"""

import os
import subprocess
import sys

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import sampled, slow
from hypothesis import given
from hypothesis import strategies as st

import numgrad as ng

RTOL = 1e-12  # float64, relative; atol 0
GRAD_RTOL = 1e-12  # numgrad's VJP against autograd's: the same sums, maybe reordered


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def pieces(xp, parts):
    """A list of arrays as one, so that list results are checked like the others."""
    return xp.hstack([xp.ravel(p) for p in parts])


# (id, fn(xp, *arrays), input shapes)
CASES = [
    ("flip", lambda xp, a: xp.flip(a, (0, 2)), [(2, 3, 4)]),
    ("flip_all", lambda xp, a: xp.flip(a), [(2, 3)]),
    ("flipud", lambda xp, a: xp.flipud(a), [(3, 2)]),
    ("fliplr", lambda xp, a: xp.fliplr(a), [(2, 3, 2)]),
    ("roll", lambda xp, a: xp.roll(a, (1, -5, 2), axis=(0, 2, 0)), [(2, 3, 4)]),
    ("roll_flat", lambda xp, a: xp.roll(a, 7), [(2, 3)]),
    ("repeat", lambda xp, a: xp.repeat(a, 2, axis=1), [(2, 3)]),
    ("repeat_counts", lambda xp, a: xp.repeat(a, [1, 0, 3], axis=-1), [(2, 3)]),
    ("repeat_flat", lambda xp, a: xp.repeat(a, 2), [(2, 3)]),
    ("moveaxis", lambda xp, a: xp.moveaxis(a, (0, 1), (2, 0)), [(2, 3, 4)]),
    ("rollaxis", lambda xp, a: xp.rollaxis(a, 2, 0), [(2, 3, 4)]),
    ("rollaxis_end", lambda xp, a: xp.rollaxis(a, 0, 3), [(2, 3, 4)]),
    ("diagonal", lambda xp, a: xp.diagonal(a, 1), [(3, 4)]),
    ("diagonal_3d", lambda xp, a: xp.diagonal(a, -1, 2, 0), [(3, 2, 4)]),
    ("trace", lambda xp, a: xp.trace(a), [(3, 4)]),
    ("trace_3d", lambda xp, a: xp.trace(a, 1, 1, 2), [(2, 3, 4)]),
    ("tril", lambda xp, a: xp.tril(a, -1), [(3, 4)]),
    ("triu_3d", lambda xp, a: xp.triu(a, 1), [(2, 3, 4)]),
    ("tril_1d", lambda xp, a: xp.tril(a), [(3,)]),
    ("hstack", lambda xp, a, b: xp.hstack([a, b]), [(2, 3), (2, 2)]),
    ("hstack_1d", lambda xp, a, b: xp.hstack((a, b)), [(3,), (2,)]),
    ("vstack", lambda xp, a, b: xp.vstack([a, b]), [(3,), (2, 3)]),
    ("dstack", lambda xp, a, b: xp.dstack([a, b]), [(2, 3), (2, 3, 2)]),
    ("column_stack", lambda xp, a, b: xp.column_stack([a, b]), [(3,), (3, 2)]),
    ("atleast_1d", lambda xp, a: xp.atleast_1d(a), [()]),
    ("atleast_2d", lambda xp, a, b: pieces(xp, xp.atleast_2d(a, b)), [(3,), ()]),
    ("atleast_3d", lambda xp, a: xp.atleast_3d(a) * 1.0, [(2, 3)]),
    ("atleast_3d_1d", lambda xp, a: xp.atleast_3d(a), [(3,)]),
    ("rot90", lambda xp, a: xp.rot90(a), [(2, 3)]),
    ("rot90_k3", lambda xp, a: xp.rot90(a, 3, axes=(2, 0)), [(2, 3, 4)]),
    ("rot90_k2", lambda xp, a: xp.rot90(a, -2, axes=(1, 2)), [(2, 3, 4)]),
    ("tile", lambda xp, a: xp.tile(a, (2, 1, 2)), [(2, 3)]),
    ("tile_int", lambda xp, a: xp.tile(a, 2), [(2, 3)]),
    ("pad_constant", lambda xp, a: xp.pad(a, ((1, 2), (0, 3)), constant_values=((1, 2), (3, 4))),
     [(2, 3)]),
    ("pad_int", lambda xp, a: xp.pad(a, 1), [(2, 3)]),
    ("pad_pair", lambda xp, a: xp.pad(a, (2, 1), constant_values=-1.5), [(2, 3)]),
    ("pad_edge", lambda xp, a: xp.pad(a, ((1, 2), (3, 0)), mode="edge"), [(2, 3)]),
    ("pad_reflect", lambda xp, a: xp.pad(a, ((4, 1), (2, 5)), mode="reflect"), [(3, 2)]),
    ("pad_symmetric", lambda xp, a: xp.pad(a, ((3, 4),), mode="symmetric"), [(2, 3)]),
    ("pad_wrap", lambda xp, a: xp.pad(a, 4, mode="wrap"), [(2, 3)]),
    ("append", lambda xp, a, b: xp.append(a, b, axis=1), [(2, 3), (2, 2)]),
    ("append_flat", lambda xp, a, b: xp.append(a, b), [(2, 3), (3,)]),
    ("array_split", lambda xp, a: pieces(xp, xp.array_split(a, 3, axis=1)), [(2, 7)]),
    ("array_split_at", lambda xp, a: pieces(xp, xp.array_split(a, [2, 9, 1])), [(5,)]),
    ("diag_build", lambda xp, a: xp.diag(a, -1), [(3,)]),
    ("diag_build_up", lambda xp, a: xp.diag(a, 2), [(3,)]),
    ("diag_take", lambda xp, a: xp.diag(a, 1), [(3, 4)]),
    ("kron", lambda xp, a, b: xp.kron(a, b), [(2, 3), (3, 2)]),
    ("kron_ranks", lambda xp, a, b: xp.kron(a, b), [(2,), (2, 1, 3)]),
    ("inner", lambda xp, a, b: xp.inner(a, b), [(2, 3), (4, 3)]),
    ("inner_1d", lambda xp, a, b: xp.inner(a, b), [(3,), (3,)]),
    ("cross", lambda xp, a, b: xp.cross(a, b), [(4, 3), (3,)]),
    ("cross_axes", lambda xp, a, b: xp.cross(a, b, axisa=0, axisb=-1, axisc=1),
     [(3, 2, 1), (4, 3)]),
    ("cross_axis", lambda xp, a, b: xp.cross(a, b, axis=0), [(3, 2), (3, 2)]),
    ("tensordot", lambda xp, a, b: xp.tensordot(a, b, ([1, 2], [1, 0])), [(2, 3, 4), (4, 3, 5)]),
    ("tensordot_int", lambda xp, a, b: xp.tensordot(a, b, 1), [(2, 3), (3, 2)]),
    ("tensordot_outer", lambda xp, a, b: xp.tensordot(a, b, 0), [(2,), (3,)]),
]
# Every case's gradient is checked against the transposed Jacobian of NumPy's own function
# (built column by column from basis inputs: these functions are linear, affine or
# bilinear), and against autograd's VJP except where autograd has none or a wrong one:
# it has no rule for flip, diagonal with an offset or axes, roll with tuples, repeat with a
# list, rot90 or trace with axes, atleast_2d of several arrays, 2-vector cross; its pad
# VJP fails in every mode; it gives wrong values for tile with an int, and wrong shapes for
# tril of 1-D, diag of a non-square matrix with k, array_split at unsorted indices and
# cross with broadcasting.
NO_AUTOGRAD = {
    "flip", "flip_all", "roll", "repeat_counts", "diagonal", "diagonal_3d", "trace_3d",
    "tril_1d", "atleast_2d", "rot90_k3", "rot90_k2", "tile_int", "pad_constant", "pad_int",
    "pad_pair", "pad_edge", "pad_reflect", "pad_symmetric", "pad_wrap", "array_split_at",
    "diag_take", "cross", "cross_axes",
}
# Products, whose second derivatives are not zero.
SECOND_ORDER = {"kron", "inner", "cross", "tensordot", "pad_reflect", "diag_build"}

# 2-vectors in cross (deprecated by NumPy 2, still computed by it; numgrad warns nothing).
CROSS_2 = [
    ("cross_2x3", lambda xp, a, b: xp.cross(a, b), [(2,), (4, 3)]),
    ("cross_3x2", lambda xp, a, b: xp.cross(a, b), [(4, 3), (4, 2)]),
    ("cross_2x2", lambda xp, a, b: xp.cross(a, b), [(4, 2), (2,)]),
]
NO_AUTOGRAD |= {name for name, _, _ in CROSS_2}


def _numpy(fn, arrays):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2's 2-vector cross
        return np.asarray(fn(np, *arrays))


def _inputs(shapes):
    return [rand(s, seed=i) for i, s in enumerate(shapes)]


# (half the cases and NumPy 2's 2-vectors in .ci/run only)
@pytest.mark.parametrize("name, fn, shapes", sampled(CASES, 2) + [slow(*c) for c in CROSS_2],
                         ids=[c[0] for c in CASES + CROSS_2])
def test_values_and_gradients(name, fn, shapes):
    arrays = _inputs(shapes)
    want = _numpy(fn, arrays)
    xs = [ng.tensor(a, requires_grad=True) for a in arrays]
    out = fn(ng, *xs)
    assert out.shape == want.shape and out.dtype == want.dtype
    np.testing.assert_allclose(out.numpy(), want, rtol=RTOL, atol=0)

    seed = rand(want.shape, seed=9)
    got = [g.numpy() for g in ng.grad((out * ng.tensor(seed)).sum(), xs)]
    for g, ref in zip(got, _jacobian_vjp(fn, arrays, seed)):
        np.testing.assert_allclose(g, ref, rtol=GRAD_RTOL, atol=1e-14)
    if name not in NO_AUTOGRAD:
        for i, g in enumerate(got):
            ref = autograd.grad(lambda *a: anp.sum(fn(anp, *a) * seed), i)(*arrays)
            np.testing.assert_allclose(g, ref, rtol=GRAD_RTOL, atol=1e-14)
    assert ng.gradcheck(lambda *t: (fn(ng, *t) * ng.tensor(seed)).sum(), xs)
    if name in SECOND_ORDER:
        assert ng.gradgradcheck(lambda *t: fn(ng, *t), xs)


def _jacobian_vjp(fn, arrays, seed):
    """``J^T seed`` for each input, J from NumPy's function on basis inputs (less its value
    at zero: constant padding is affine)."""
    out = []
    for i, a in enumerate(arrays):
        def at(value, i=i, shape=a.shape):
            return _numpy(fn, [*arrays[:i], value.reshape(shape), *arrays[i + 1:]])

        offset = at(np.zeros(a.size))
        out.append(np.array([np.sum((at(basis) - offset) * seed)
                             for basis in np.eye(a.size)]).reshape(a.shape))
    return out


# ---- drawn shapes and arguments, at fixed ranks ---------------------------------------

sizes = st.integers(1, 5)


@given(shape=st.tuples(sizes, sizes), shift=st.integers(-12, 12), axis=st.sampled_from(
    [0, 1, -1, None, (0, 1)]))
def test_roll_matches_numpy(shape, shift, axis):
    a = rand(shape)
    np.testing.assert_array_equal(ng.roll(ng.tensor(a), shift, axis).numpy(),
                                  np.roll(a, shift, axis))


@given(shape=st.tuples(sizes, sizes), widths=st.tuples(st.integers(0, 7), st.integers(0, 7)),
       mode=st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
def test_pad_matches_numpy(shape, widths, mode):
    a = rand(shape)
    pad_width = (widths, widths[::-1])
    np.testing.assert_array_equal(ng.pad(ng.tensor(a), pad_width, mode).numpy(),
                                  np.pad(a, pad_width, mode))


@given(shape=st.tuples(sizes, sizes, sizes), offset=st.integers(-6, 6),
       axes=st.sampled_from([(0, 1), (1, 0), (2, 0), (-1, 1)]))
def test_diagonal_and_trace_match_numpy(shape, offset, axes):
    a = rand(shape)
    x = ng.tensor(a)
    np.testing.assert_array_equal(x.diagonal(offset, *axes).numpy(),
                                  np.diagonal(a, offset, *axes))
    np.testing.assert_allclose(x.trace(offset, *axes).numpy(), np.trace(a, offset, *axes),
                               rtol=RTOL, atol=1e-15)


@given(n=st.integers(0, 9), sections=st.integers(1, 5))
def test_array_split_matches_numpy(n, sections):
    a = rand((2, n))
    got = ng.array_split(ng.tensor(a), sections, axis=1)
    want = np.array_split(a, sections, axis=1)
    assert [p.shape for p in got] == [p.shape for p in want]
    for p, q in zip(got, want):
        np.testing.assert_array_equal(p.numpy(), q)


@given(counts=st.lists(st.integers(0, 3), min_size=3, max_size=3))
def test_repeat_counts_match_numpy(counts):
    a = rand((2, 3))
    np.testing.assert_array_equal(ng.repeat(ng.tensor(a), counts, axis=1).numpy(),
                                  np.repeat(a, counts, axis=1))


# ---- dtypes, methods, data inputs -----------------------------------------------------

def test_integer_and_bool_inputs_keep_numpy_dtypes():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = ng.tensor(a)
    for fn in (lambda xp, t: xp.tril(t), lambda xp, t: xp.pad(t, 1, constant_values=2.7),
               lambda xp, t: xp.trace(t), lambda xp, t: xp.diag(t[0]),
               lambda xp, t: xp.kron(t, t[:1]), lambda xp, t: xp.triu(t > 4)):
        want = fn(np, a)
        got = fn(ng, x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


def test_methods_are_numpys_and_functions_take_data():
    a = rand((3, 4))
    x = ng.tensor(a)
    np.testing.assert_array_equal(x.repeat(2, axis=0).numpy(), a.repeat(2, axis=0))
    np.testing.assert_array_equal(x.diagonal(-1).numpy(), a.diagonal(-1))
    np.testing.assert_allclose(x.trace(1).numpy(), a.trace(1), rtol=RTOL)
    np.testing.assert_array_equal(ng.flip(a.tolist(), 1).numpy(), np.flip(a, 1))
    np.testing.assert_array_equal(ng.hstack([x, a]).numpy(), np.hstack([a, a]))
    assert ng.linalg.tensordot is ng.tensordot and ng.linalg.cross is ng.cross
    np.testing.assert_array_equal(ng.repeat(x, 1.5).numpy(), np.repeat(a, 1.5))  # truncated
    np.testing.assert_array_equal(ng.roll(x, 1.5).numpy(), np.roll(a, 1.5))
    # data only (no tensor): made on the default device
    for fn in (ng.cross, ng.kron, ng.inner, ng.outer, ng.dot, ng.matmul):
        np.testing.assert_array_equal(fn([1, 2, 0], [0, 1, 3]).numpy(),
                                      getattr(np, fn.__name__)([1, 2, 0], [0, 1, 3]))
    np.testing.assert_array_equal(ng.pad(ng.zeros(0), 2, constant_values=3.0).numpy(),
                                  np.pad(np.zeros(0), 2, constant_values=3.0))
    assert ng.atleast_2d(x) is x  # as NumPy returns the array itself
    assert ng.vstack([x, x], dtype="float32").dtype == np.float32


# ---- errors: NumPy's type (its AxisError is the ValueError of SPEC §3), before any kernel --

ERRORS = [
    (lambda xp, a: xp.flipud(a), ()),
    (lambda xp, a: xp.fliplr(a), (3,)),
    (lambda xp, a: xp.flip(a, (0, 0)), (2, 3)),
    (lambda xp, a: xp.rot90(a, axes=(0, 0)), (2, 3)),
    (lambda xp, a: xp.rot90(a, axes=(0,)), (2, 3)),
    (lambda xp, a: xp.rot90(a, axes=(0, 2)), (2, 3)),
    (lambda xp, a: xp.rot90(a, axes=(0, 3)), (2, 3, 4)),
    (lambda xp, a: xp.roll(a, (1, 2), axis=(0, 1, 1)), (2, 3)),
    (lambda xp, a: xp.roll(a, 1, axis=2), (2, 3)),
    (lambda xp, a: xp.repeat(a, -1), (3,)),
    (lambda xp, a: xp.repeat(a, [1, 2]), (3,)),
    (lambda xp, a: xp.repeat(a, 2, axis=1), (3,)),
    (lambda xp, a: xp.moveaxis(a, (0, 0), (1, 0)), (2, 3)),
    (lambda xp, a: xp.moveaxis(a, (0, 1), (1,)), (2, 3)),
    (lambda xp, a: xp.rollaxis(a, 0, 3), (2, 3)),
    (lambda xp, a: xp.diagonal(a, 0, 1, 1), (2, 3)),
    (lambda xp, a: xp.diagonal(a), (3,)),
    (lambda xp, a: xp.trace(a), (3,)),
    (lambda xp, a: xp.tril(a), ()),
    (lambda xp, a: xp.hstack([]), (3,)),
    (lambda xp, a: xp.hstack(x for x in [a]), (3,)),
    (lambda xp, a: xp.vstack([a, a[:2]]), (3,)),
    (lambda xp, a: xp.vstack([a, a], dtype="int64"), (3,)),
    (lambda xp, a: xp.append(a, a[None], axis=0), (3,)),
    (lambda xp, a: xp.array_split(a, 0), (3,)),
    (lambda xp, a: xp.tile(a, -1), (3,)),
    (lambda xp, a: xp.pad(a, 1.5), (3,)),
    (lambda xp, a: xp.pad(a, -1), (3,)),
    (lambda xp, a: xp.pad(a, [[1, 2], [3, 4], [5, 6]]), (2, 3)),
    (lambda xp, a: xp.pad(a, 1, "foo"), (3,)),
    (lambda xp, a: xp.pad(a, 1, "edge", constant_values=3), (3,)),
    (lambda xp, a: xp.pad(a, 1, "edge"), (2, 0)),
    (lambda xp, a: xp.diag(a), (2, 2, 2)),
    (lambda xp, a: xp.inner(a, a[:2]), (3,)),
    (lambda xp, a: xp.tensordot(a, a, ([0], [1])), (2, 3)),
    (lambda xp, a: xp.tensordot(a, a, ([0, 1], [1])), (2, 3)),
    (lambda xp, a: xp.tensordot(a, a, ([2], [0])), (2, 3)),
    (lambda xp, a: xp.cross(a, a), (4,)),
    (lambda xp, a: xp.cross(a, a), ()),
    (lambda xp, a: xp.cross(a, a, axisa=2), (3,)),
]


@pytest.mark.parametrize("fn, shape", ERRORS, ids=range(len(ERRORS)))
def test_errors_are_numpys(fn, shape):
    a = rand(shape)
    with pytest.raises(Exception) as numpy_error:
        fn(np, a)
    expected = numpy_error.type
    if issubclass(expected, np.exceptions.AxisError):
        expected = ValueError
    x = ng.tensor(a)
    with ng.engine.record() as rec, pytest.raises(expected) as error:
        fn(ng, x)
    assert rec.kernels_launched == 0
    assert str(error.value)


def test_unsupported_pad_options_say_so():
    x = ng.ones(3)
    with pytest.raises(NotImplementedError, match="'mean' is not supported"):
        ng.pad(x, 1, "mean")
    with pytest.raises(NotImplementedError, match="reflect_type='odd'"):
        ng.pad(x, 1, "reflect", reflect_type="odd")


# ---- fusion: gathers and views are read inside the consuming kernel ---------------------

@pytest.mark.parametrize("fn", [
    lambda x: ng.flip(x),
    lambda x: ng.pad(x, 2, "reflect"), lambda x: ng.pad(x, (1, 2), constant_values=3.0),
    lambda x: ng.diagonal(x, 1), lambda x: ng.tril(x), lambda x: ng.repeat(x, [2, 0, 1, 3], 1),
    lambda x: ng.rot90(x), lambda x: ng.cross(x[:, :3], x[:, 1:]),
], ids=["flip", "pad_reflect", "pad_constant", "diagonal", "tril", "repeat",
        "rot90", "cross"])
def test_forward_is_one_kernel(fn):
    x = ng.tensor(rand((3, 4))).realize()
    fn(x).exp().sum().numpy()  # compile
    with ng.engine.record() as rec:
        fn(x).exp().sum().numpy()
    assert rec.kernels_launched == 1


# ---- roll: read rolled by an elementwise kernel, else one copy; the roll back as its
# gradient ---------------------------------------------------------------------------

def _sweep(xp, u):
    """One step of the 5-point periodic stencil (four rolls of `u`)."""
    return u + 0.2 * (xp.roll(u, 1, 0) + xp.roll(u, -1, 0) + xp.roll(u, 2, 1)
                      + xp.roll(u, -1, 1) - 4 * u)


def test_a_stencil_sweep_is_one_kernel_that_reads_its_input_rolled():
    a = rand((7, 9))
    x = ng.tensor(a).realize()
    _sweep(ng, x).numpy()  # compile
    with ng.engine.record() as rec:
        got = _sweep(ng, x).numpy()
    assert rec.kernels_launched == 1  # no copy: each roll is an index of the kernel's
    np.testing.assert_array_equal(got, _sweep(np, a))  # the same arithmetic: bit for bit


@pytest.mark.parametrize("shift, axis", [(1, 1), (-2, 0), ((1, -3), (0, 2)), (4, 2)])
def test_rolls_read_by_a_kernel_along_any_axes_give_numpys_values(shift, axis):
    a, w = rand((3, 5, 6)), rand((3, 5, 6), seed=1)
    x = ng.tensor(a).realize()
    y = ng.roll(x, shift, axis) * ng.tensor(w) + x
    np.testing.assert_array_equal(y.numpy(), np.roll(a, shift, axis) * w + a)


def test_sweeps_values_and_gradients_against_autograd():
    a = rand((6, 8))

    def loss(xp, u):
        for _ in range(5):
            u = _sweep(xp, u)
        return (u * u).sum()
    value, grad = ng.value_and_grad(lambda u: loss(ng, u))(a)
    np.testing.assert_allclose(value, loss(np, a), rtol=RTOL)
    np.testing.assert_allclose(grad, autograd.grad(lambda u: loss(anp, u))(a), rtol=RTOL)
    assert ng.gradcheck(lambda u: loss(ng, u), (ng.tensor(a, requires_grad=True),))


def test_remembered_sweeps_give_what_the_first_call_gave(monkeypatch):
    """Schedules, step plans and their written-out replays (from the 32nd) of a program
    of rolled reads: every call equals the first, and the same with nothing
    remembered, bit for bit."""
    from numgrad import plan as remembering

    step = ng.value_and_grad(lambda u: (_sweep(ng, _sweep(ng, u)) ** 2).sum())
    a = rand((5, 6))
    first = step(a)
    for _ in range(40):
        value, grad = step(a)
        assert value == first[0] and np.array_equal(grad, first[1])
    monkeypatch.setattr(remembering, "ON", False)
    value, grad = step(a)
    assert value == first[0] and np.array_equal(grad, first[1])


def test_a_roll_read_through_a_broadcast_is_copied_first():
    v, w = rand(5), rand((5, 3), seed=1)
    x = ng.tensor(v).realize()
    y = ng.roll(x, 2, 0)[:, None] * ng.tensor(w)
    y.numpy()  # compile
    with ng.engine.record() as rec:
        got = (ng.roll(x, 2, 0)[:, None] * ng.tensor(w)).numpy()
    assert rec.kernels_launched == 2  # the copy, then the kernel
    np.testing.assert_array_equal(got, np.roll(v, 2, 0)[:, None] * w)


def test_a_roll_is_one_copy_and_its_gradient_the_roll_back():
    a, w = rand((3, 4)), rand((3, 4), seed=1)
    x = ng.tensor(a, requires_grad=True)
    y = ng.roll(x, (1, -1, 2), (0, 1, 0))
    # shifts of one axis add up, modulo its length (axis 0's to none)
    assert y._buf.op.name == "roll" and y._buf.arg == ((1, 3),)
    (g,) = ng.grad((y * ng.tensor(w)).exp().sum(), x)
    assert g._buf.op.name == "roll" and g._buf.arg == ((1, 1),)
    np.testing.assert_allclose(g.numpy(), np.roll(w * np.exp(np.roll(a, -1, 1) * w), 1, 1),
                               rtol=RTOL)
    x = ng.tensor(a).realize()
    ng.roll(x, 1, 1).exp().sum().numpy()  # compile
    with ng.engine.record() as rec:
        ng.roll(x, 1, 1).exp().sum().numpy()
    assert rec.kernels_launched == 2  # the copy, then the reduction reading it


def test_a_roll_by_whole_turns_is_a_new_tensor_of_the_same_values():
    x = ng.tensor(rand((2, 3)), requires_grad=True)
    y = ng.roll(x, (2, 3), (0, 1))
    assert y is not x and y._buf.op.name == "reshape"
    np.testing.assert_array_equal(ng.grad(y.sum(), x)[0].numpy(), np.ones((2, 3)))


def test_the_jacobian_of_a_roll_is_a_permutation_and_its_hessian_zero():
    a = rand((5,))
    jac = ng.jacobian(lambda x: ng.roll(x, 2))(ng.tensor(a))
    np.testing.assert_array_equal(jac.numpy(), np.roll(np.eye(5), 2, 0))
    hess = ng.hessian(lambda x: (ng.roll(x, 2) * x).sum())(ng.tensor(a))
    np.testing.assert_array_equal(hess.numpy(), np.roll(np.eye(5), 2, 0) + np.roll(np.eye(5), 2, 1))


# ---- the CUDA target, in Numba's simulator (a subprocess: the simulator is chosen when
# Numba is imported) ---------------------------------------------------------------------

CUDA_PROGRAM = """
import numpy as np, numgrad as ng
a, b = np.random.default_rng(0).standard_normal((2, 2, 3))
x = ng.tensor(a, device=DEVICE, requires_grad=True)
y = ng.tensor(b, device=DEVICE)
outs = [ng.flip(x, 1), ng.roll(x, 1), ng.pad(x, 1, "reflect"), ng.pad(x, (1, 0)),
        ng.diagonal(x, 1), ng.tril(x), ng.repeat(x, [1, 2, 0], 1), ng.cross(x, y),
        ng.tile(x, 2), ng.kron(x, y)]
loss = (ng.pad(ng.roll(x, 1, 1), 1, "edge") * ng.pad(y, 1, "edge")).sum() + ng.trace(x, 1)
(g,) = ng.grad(loss, x)
assert all(t.device == DEVICE for t in [*outs, g])
RESULT = [t.numpy().tolist() for t in [*outs, g]]
if __name__ == "__main__":
    print(repr(RESULT))
"""


def test_cuda_simulator_gives_the_cpu_values():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run(
        [sys.executable, "-c", CUDA_PROGRAM.replace("DEVICE", "'cuda'")], env=env,
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    namespace = {"__name__": "cpu"}
    exec(CUDA_PROGRAM.replace("DEVICE", "'cpu'"), namespace)
    got, want = eval(result.stdout), namespace["RESULT"]
    assert len(got) == len(want) == 11
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=1e-15)
