"""``ng.linalg`` (SPEC §2): inv, pinv, solve, det, slogdet, cholesky, eigh, svd, qr, norm and
matrix_power against NumPy, their gradients against finite differences (``ng.gradcheck``)
and HIPS autograd, second order (``ng.gradgradcheck``), a 50x50 log-determinant Hessian, and
the CUDA target through the host (in Numba's simulator).

Values are compared to NumPy with float64 rtol 1e-12, relative to the largest magnitude of
the expected array (the functions call NumPy's own LAPACK routines, so most agree
exactly); gradients to autograd with the same 1e-12 on well-conditioned inputs (condition
numbers below about 10). Inputs are small, so few kernel structures compile.
"""

import os
import subprocess
import sys
import textwrap

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import sampled
from hypothesis import given
from hypothesis import strategies as st

import numgrad as ng

LA = ng.linalg
RTOL = 1e-12
rng = np.random.default_rng(7)


def close(got, want, rtol=RTOL):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(np.abs(want).max(initial=0.0), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=rtol * scale)


def well_conditioned(*shape):
    """Random square matrices, diagonally shifted so their condition numbers stay small."""
    return rng.standard_normal(shape) + 3 * np.eye(shape[-1])


def spd(*shape):
    x = rng.standard_normal(shape)
    return x @ x.swapaxes(-1, -2) / shape[-1] + np.eye(shape[-1])


A2 = well_conditioned(3, 3)
AB = well_conditioned(2, 3, 3)   # a stack of two
RECT = rng.standard_normal((2, 4, 3))
WIDE = rng.standard_normal((3, 5))
SPD = spd(2, 3, 3)


# ---- values ------------------------------------------------------------------------

VALUE_CASES = {
    "inv": (LA.inv, np.linalg.inv, [A2, AB]),
    "det": (LA.det, np.linalg.det, [A2, AB]),
    "slogdet": (LA.slogdet, np.linalg.slogdet, [A2, AB, -A2]),
    "pinv": (LA.pinv, np.linalg.pinv, [RECT, WIDE, A2]),
    "cholesky": (LA.cholesky, np.linalg.cholesky, [SPD, SPD[0]]),
    "cholesky_upper": (lambda a: LA.cholesky(a, upper=True),
                       lambda a: np.linalg.cholesky(a, upper=True), [SPD]),
    "eigh": (LA.eigh, np.linalg.eigh, [SPD, AB]),
    "eigh_U": (lambda a: LA.eigh(a, "U"), lambda a: np.linalg.eigh(a, "U"), [AB]),
    "svd": (LA.svd, np.linalg.svd, [RECT, WIDE, A2]),
    "svd_reduced": (lambda a: LA.svd(a, full_matrices=False),
                    lambda a: np.linalg.svd(a, full_matrices=False), [RECT, WIDE]),
    "svd_values": (lambda a: LA.svd(a, compute_uv=False),
                   lambda a: np.linalg.svd(a, compute_uv=False), [RECT, WIDE]),
    "svd_hermitian": (lambda a: LA.svd(a, hermitian=True),
                      lambda a: np.linalg.svd(a, hermitian=True), [SPD]),
    "qr": (LA.qr, np.linalg.qr, [RECT, WIDE, A2]),
    "qr_complete": (lambda a: LA.qr(a, "complete"), lambda a: np.linalg.qr(a, "complete"),
                    [RECT, WIDE]),
    "qr_r": (lambda a: LA.qr(a, "r"), lambda a: np.linalg.qr(a, "r"), [RECT, WIDE]),
    "matrix_power_5": (lambda a: LA.matrix_power(a, 5),
                       lambda a: np.linalg.matrix_power(a, 5), [A2, AB]),
    "matrix_power_-3": (lambda a: LA.matrix_power(a, -3),
                        lambda a: np.linalg.matrix_power(a, -3), [AB]),
    "matrix_power_0": (lambda a: LA.matrix_power(a, 0),
                       lambda a: np.linalg.matrix_power(a, 0), [AB]),
}


@pytest.mark.parametrize("name", VALUE_CASES)
def test_values_match_numpy(name):
    ours, theirs, inputs = VALUE_CASES[name]
    for a in inputs:
        got, want = ours(ng.tensor(a)), theirs(a)
        if isinstance(want, tuple):  # NumPy's named results: the same fields, in order
            assert type(got).__name__ == type(want).__name__
            assert got._fields == want._fields
            for g, w in zip(got, want):
                close(g.numpy(), w)
        else:
            close(got.numpy(), want)


def test_integer_input_computes_in_float64_and_float32_stays_float32():
    ints = np.array([[2, 1], [1, 3]])
    assert LA.inv(ng.tensor(ints)).dtype == np.float64
    close(LA.inv(ng.tensor(ints)).numpy(), np.linalg.inv(ints))
    assert LA.matrix_power(ng.tensor(ints), 3).dtype == np.int64  # integer powers stay int
    np.testing.assert_array_equal(LA.matrix_power(ng.tensor(ints), 3).numpy(),
                                  np.linalg.matrix_power(ints, 3))
    single = ng.tensor(A2, dtype="float32")
    for f in (LA.inv, LA.det, lambda a: LA.eigh(a)[0], lambda a: LA.svd(a)[1], LA.norm):
        assert f(single).dtype == np.float32


@pytest.mark.parametrize("n", [2, 60, 257])  # (257: past the kept triangle masks)
def test_triangular_systems_are_solved_by_substitution_with_numpys_values(n):
    from numgrad.linalg import solvers

    lower = np.tril(rng.standard_normal((n, n))) + n * np.eye(n)
    upper, full = lower.T.copy(), lower + np.triu(np.ones((n, n)), 1)
    corner_zero = full.copy()
    corner_zero[0, -1] = corner_zero[-1, 0] = 0  # (zero corners do not make a triangle)
    nan_above = lower.copy()
    nan_above[0, 1] = np.nan
    b = rng.standard_normal((n, 3))
    cases = [(lower, 1), (upper, 0), (full, None), (nan_above, None),
             (np.diag(np.diag(lower)), 1)] + [(corner_zero, None)] * (n > 2)
    for a, kind in cases:
        assert solvers._triangle(a) == kind
        with np.errstate(invalid="ignore"):
            want = np.linalg.solve(a, b)
        np.testing.assert_allclose(LA.solve(ng.tensor(a), ng.tensor(b)).numpy(), want,
                                   rtol=1e-10, atol=1e-12, equal_nan=True)


def test_solve_follows_numpy2_rule_for_b():
    # b is a vector only when it is 1-D; otherwise stacked (M, K) matrices, batches broadcast
    b1 = rng.standard_normal(3)
    close(LA.solve(ng.tensor(AB), ng.tensor(b1)).numpy(), np.linalg.solve(AB, b1))
    assert LA.solve(ng.tensor(AB), ng.tensor(b1)).shape == (2, 3)
    for b in (rng.standard_normal((3, 2)), rng.standard_normal((2, 3, 1)),
              rng.standard_normal((4, 1, 3, 2))):
        got = LA.solve(ng.tensor(AB), ng.tensor(b)).numpy()
        close(got, np.linalg.solve(AB, b))
    b = rng.standard_normal((2, 3))  # 2-D: one (M, K) matrix, not a stack of vectors
    close(LA.solve(ng.tensor(A2[:2, :2]), ng.tensor(b)).numpy(), np.linalg.solve(A2[:2, :2], b))


@pytest.mark.parametrize("dtype, rtol", [("float64", RTOL), ("float32", 1e-5)])
def test_triangular_systems_solve_to_numpys_values_and_gradients(dtype, rtol):
    # A triangular matrix is solved by substitution (LAPACK's ?trtrs, docs/decisions.md):
    # NumPy's values to rtol, autograd's gradients (float64, to RTOL), NumPy's error for
    # a zero on the diagonal; a matrix with a zero corner but no triangle is general.
    n = 6
    lower = np.tril(rng.standard_normal((n, n))) + 3 * np.eye(n)
    corner = lower + np.diag(np.ones(n - 1), 1)  # a[0, -1] == 0, not triangular
    for a in (lower, lower.T, corner):
        for b in (rng.standard_normal(n), rng.standard_normal((n, 3))):
            a_, b_ = a.astype(dtype), b.astype(dtype)
            got = LA.solve(ng.tensor(a_), ng.tensor(b_)).numpy()
            assert got.dtype == dtype
            close(got, np.linalg.solve(a_, b_), rtol)
    if dtype == "float64":
        w = rng.standard_normal((n, 3))

        def loss(L, a, b):
            return (L.linalg.solve(a, b) * w).sum()
        for a in (lower, lower.T):
            b = rng.standard_normal((n, 3))
            got = ng.grad(lambda a, b: loss(ng, a, b), argnum=(0, 1))(ng.tensor(a),
                                                                       ng.tensor(b))
            want = autograd.grad(lambda a, b: loss(anp, a, b), argnum=(0, 1))(a, b)
            for g, h in zip(got, want):
                close(g.numpy(), h)
    singular = np.tril(np.ones((3, 3), dtype))
    singular[1, 1] = 0
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        LA.solve(ng.tensor(singular), ng.ones(3, dtype=dtype)).numpy()


@given(st.lists(st.integers(1, 3), max_size=2), st.lists(st.integers(1, 3), max_size=2),
       st.integers(1, 3), st.integers(1, 2), st.booleans())
def test_batch_dimensions_broadcast_as_numpys(a_batch, b_batch, m, k, vector):
    # Stacked inputs of any batch shape: solve's batches broadcast (where NumPy's do), and
    # the other functions map over the stack.
    a = well_conditioned(*a_batch, m, m)
    b = rng.standard_normal((m,) if vector else (*b_batch, m, k))
    try:
        want = np.linalg.solve(a, b)
    except ValueError:
        with pytest.raises(ValueError, match="do not broadcast"):
            LA.solve(ng.tensor(a), ng.tensor(b))
    else:
        close(LA.solve(ng.tensor(a), ng.tensor(b)).numpy(), want)
    for ours, theirs in ((LA.inv, np.linalg.inv), (LA.det, np.linalg.det),
                         (lambda x: LA.eigh(x)[0], lambda x: np.linalg.eigh(x)[0])):
        close(ours(ng.tensor(a)).numpy(), theirs(a))


def test_pinv_cutoffs_are_numpys():
    u, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    a = u @ np.diag([3.0, 1.0, 1e-14, 0.0]) @ u.T  # one value between the two cutoffs
    for kwargs in ({}, {"rtol": None}, {"rcond": 1e-10}, {"rtol": 1e-10}, {"hermitian": True}):
        close(LA.pinv(ng.tensor(a), **kwargs).numpy(), np.linalg.pinv(a, **kwargs), 1e-9)
    close(LA.pinv(ng.tensor(RECT), rcond=np.array([1e-15, 0.5])).numpy(),
          np.linalg.pinv(RECT, rcond=np.array([1e-15, 0.5])))
    with pytest.raises(ValueError, match="can't be both set"):
        LA.pinv(ng.tensor(a), rcond=1e-3, rtol=1e-3)


NORM_CASES = [
    (None, None), ("fro", None), ("nuc", None), (1, None), (-1, None), (2, None), (-2, None),
    (np.inf, None), (-np.inf, None),
    (None, (2, 0)), ("fro", (0, 1)), ("nuc", (1, 2)), (2, (-1, -2)), (-2, (0, 2)),
    (1, (2, 1)), (-1, (0, 1)), (np.inf, (1, 0)), (-np.inf, (2, 0)),
    (None, 1), (0, 0), (1, -1), (2, 2), (3, 1), (0.5, 0), (-1, 1), (np.inf, 2), (-np.inf, 0),
]


@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_matches_numpy(keepdims):
    x3, x2, x1 = RECT, A2, rng.standard_normal(5)
    for ord_, axis in NORM_CASES:
        x = x2 if axis is None else np.where(np.abs(x3) < 0.2, 0.0, x3) if ord_ == 0 else x3
        got = LA.norm(ng.tensor(x), ord_, axis, keepdims).numpy()
        close(got, np.linalg.norm(x, ord_, axis, keepdims))
    for ord_ in (None, 2, 1, 0, 3, np.inf):
        close(LA.norm(ng.tensor(x1), ord_, keepdims=keepdims).numpy(),
              np.linalg.norm(x1, ord_, keepdims=keepdims))
    close(LA.norm(ng.tensor(x3), keepdims=keepdims).numpy(), np.linalg.norm(x3, keepdims=keepdims))


def test_norm_errors_are_numpys():
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        LA.norm(ng.tensor(np.ones(3)), "fro")
    with pytest.raises(ValueError, match="Invalid norm order for matrices."):
        LA.norm(ng.tensor(A2), 3)
    with pytest.raises(ValueError, match="Duplicate axes given."):
        LA.norm(ng.tensor(A2), axis=(0, -2))
    with pytest.raises(ValueError, match="Improper number of dimensions to norm."):
        LA.norm(ng.tensor(RECT), 2)
    with pytest.raises(TypeError, match="'axis' must be None, an integer or a tuple"):
        LA.norm(ng.tensor(A2), axis="rows")


# ---- errors --------------------------------------------------------------------------

SHAPE_ERRORS = [
    (LA.inv, np.ones(3), "1-dimensional array given. Array must be at least two-dimensional"),
    (LA.det, np.ones((2, 3)), "Last 2 dimensions of the array must be square"),
    (LA.slogdet, np.ones((2, 3)), "Last 2 dimensions of the array must be square"),
    (LA.cholesky, np.ones((2, 3)), "Last 2 dimensions of the array must be square"),
    (LA.eigh, np.ones((3, 2, 3)), "Last 2 dimensions of the array must be square"),
    (LA.svd, np.ones(3), "1-dimensional array given"),
    (LA.qr, np.ones(3), "1-dimensional array given"),
    (LA.pinv, np.ones(()), "0-dimensional array given"),
    (lambda a: LA.matrix_power(a, 2), np.ones((2, 3)), "must be square"),
    (lambda a: LA.solve(a, np.ones(2)), np.ones((2, 3)), "must be square"),
]


@pytest.mark.parametrize("fn, data, message", SHAPE_ERRORS)
def test_shape_errors_raise_linalgerror_at_the_call(fn, data, message):
    x = ng.tensor(data) + 1  # pending: the check must not compute it
    with ng.engine.record() as rec:
        with pytest.raises(np.linalg.LinAlgError, match=message):
            fn(x)
    assert rec.kernels_launched == 0
    assert ng.linalg.LinAlgError is np.linalg.LinAlgError


def test_value_errors_raise_linalgerror_when_computed():
    singular = ng.tensor([[1.0, 2.0], [2.0, 4.0]])
    for fn in (LA.inv, lambda a: LA.solve(a, ng.ones(2)), lambda a: LA.matrix_power(a, -1)):
        out = fn(singular)  # recorded: the values are not known yet
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            out.numpy()
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        LA.cholesky(ng.tensor(-np.eye(2))).numpy()
    assert LA.det(singular).item() == 0.0  # no error: NumPy's 0
    assert LA.slogdet(singular).logabsdet.item() == -np.inf


def test_argument_errors():
    with pytest.raises(ValueError, match=r"solve1: .*\(size 4 is different from 3\)"):
        LA.solve(ng.tensor(A2), ng.ones(4))
    with pytest.raises(ValueError, match=r"solve: .*\(size 2 is different from 3\)"):
        LA.solve(ng.tensor(A2), ng.ones((2, 2)))
    with pytest.raises(ValueError, match=r"batch dimensions of a \(2, 3, 3\) and b \(4, 3, 1\)"):
        LA.solve(ng.tensor(AB), ng.ones((4, 3, 1)))
    with pytest.raises(ValueError, match=r"solve: .* does not have enough dimensions \(has 0"):
        LA.solve(ng.tensor(A2), 1.0)
    with pytest.raises(TypeError, match="exponent must be an integer"):
        LA.matrix_power(ng.tensor(A2), 1.5)
    with pytest.raises(ValueError, match="Unrecognized mode 'full'"):
        LA.qr(ng.tensor(A2), "full")
    with pytest.raises(NotImplementedError, match="mode='raw'"):
        LA.qr(ng.tensor(A2), "raw")
    with pytest.raises(ValueError, match="UPLO argument must be 'L' or 'U'"):
        LA.eigh(ng.tensor(A2), "X")


# ---- gradients: finite differences and HIPS autograd -----------------------------------

W33 = rng.standard_normal((2, 3, 3))
W43 = rng.standard_normal((2, 4, 3))
W3 = rng.standard_normal((2, 3))
W44 = rng.standard_normal((2, 4, 4))


def weighted(x, w):
    """sum(x * w): a scalar that depends on every entry (works for ng and autograd)."""
    return (x * (ng.tensor(w) if isinstance(x, ng.Tensor) else w)).sum()


def _T(x):
    return x.swapaxes(-1, -2)


def symmetric_from(x):
    """A symmetric positive-definite matrix made of `x` (ng or autograd): cholesky and eigh
    read one triangle, so their gradients are checked through a symmetric input."""
    return x @ _T(x) / 3 + 2 * np.eye(x.shape[-1])


def _svd_loss(lib, full):
    def loss(a):
        u, s, vh = lib.linalg.svd(a, full_matrices=full)
        k = min(a.shape[-2:])
        return weighted(u[..., :k], W44[..., :a.shape[-2], :k]) + weighted(s, W3[..., :k]) \
            + weighted(vh[..., :k, :], W44[..., :k, :a.shape[-1]])
    return loss


NG, AG = ng, anp  # losses are written once, for `L.linalg` of either


def _eigh_loss(lib):
    def loss(a):
        w, v = lib.linalg.eigh(symmetric_from(a))
        return weighted(w, W3) + weighted(v, W33)
    return loss


GRAD_CASES = {
    "inv": (lambda L: lambda a: weighted(L.linalg.inv(a), W33), [AB]),
    "solve": (lambda L: lambda a, b: weighted(L.linalg.solve(a, b), W43[:, :3]),
              [AB, RECT[:, :3]]),
    "det": (lambda L: lambda a: weighted(L.linalg.det(a), W3[:, 0]), [AB]),
    "slogdet": (lambda L: lambda a: weighted(L.linalg.slogdet(a)[1], W3[:, 0]), [AB]),
    "pinv": (lambda L: lambda a: weighted(L.linalg.pinv(a), _T(W43)), [RECT]),
    "cholesky": (lambda L: lambda a: weighted(L.linalg.cholesky(symmetric_from(a)), W33), [AB]),
    "eigh": (_eigh_loss, [AB]),
    "svd_tall": (lambda L: _svd_loss(L, False), [RECT]),
    "svd_wide": (lambda L: _svd_loss(L, False), [_T(RECT)]),
    "svd_square": (lambda L: _svd_loss(L, False), [AB]),
    "svd_values": (lambda L: lambda a: weighted(L.linalg.svd(a, compute_uv=False), W3), [RECT]),
    "norm_vector": (lambda L: lambda a: L.linalg.norm(a, axis=1).sum(), [RECT]),
    "norm_3": (lambda L: lambda a: L.linalg.norm(a, 3, axis=-1).sum(), [RECT]),
    "norm_fro": (lambda L: lambda a: L.linalg.norm(a[0], "fro"), [RECT]),
    "norm_nuc": (lambda L: lambda a: L.linalg.norm(a, "nuc", axis=(1, 2)).sum(), [RECT]),
}


@pytest.mark.parametrize("name", sampled(list(GRAD_CASES), 2, start=1))
def test_gradients_match_autograd_and_finite_differences(name):
    make, inputs = GRAD_CASES[name]
    ours, theirs = make(NG), make(AG)
    ts = tuple(ng.tensor(x, requires_grad=True) for x in inputs)
    assert ng.gradcheck(ours, ts)
    grads = ng.grad(ours(*ts), ts)
    for i, g in enumerate(grads):
        close(g.numpy(), autograd.grad(theirs, i)(*inputs))


def test_full_matrices_gradient_ignores_the_arbitrary_basis():
    # U's columns beyond min(M, N) (an arbitrary basis) get no gradient: the gradient
    # of a loss on the first K columns is the reduced SVD's (autograd's).
    for a in (RECT, _T(RECT)):
        t = ng.tensor(a, requires_grad=True)
        (g,) = ng.grad(_svd_loss(NG, True)(t), (t,))
        close(g.numpy(), autograd.grad(_svd_loss(AG, False))(a))


def _qr_loss(mode, weights):
    def loss(a):
        out = LA.qr(a, mode)
        if mode == "r":
            return weighted(out * out, weights[1])
        q, r = out
        k = min(a.shape[-2:])  # 'complete': Q's columns beyond K are an arbitrary basis
        return weighted(q[..., :k], weights[0]) + weighted(r[..., :k, :], weights[1])
    return loss


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_gradient(mode):
    # autograd has no QR rule: finite differences, and modified Gram-Schmidt written in
    # autograd (the same factors once R's diagonal is made positive).
    for a in (RECT[0], RECT[0].T, A2):
        k = min(a.shape)
        weights = rng.standard_normal((a.shape[0], k)), rng.standard_normal((k, a.shape[1]))
        t = ng.tensor(a, requires_grad=True)
        assert ng.gradcheck(_qr_loss(mode, weights), (t,))
        if a.shape[0] < a.shape[1] or mode == "r":
            continue
        signs = np.sign(np.diag(np.linalg.qr(a)[1]))
        loss = _qr_loss(mode, (weights[0] * signs, weights[1] * signs[:, None]))
        (g,) = ng.grad(loss(t), (t,))
        close(g.numpy(), autograd.grad(_gram_schmidt_loss)(a, weights))


def _gram_schmidt_loss(a, weights):
    qs, rs = [], []
    for j in range(a.shape[1]):
        r_col = [anp.dot(q, a[:, j]) for q in qs]
        v = a[:, j] - sum((r * q for r, q in zip(r_col, qs)), anp.zeros(a.shape[0]))
        r_jj = anp.sqrt(anp.dot(v, v))
        qs.append(v / r_jj)
        rs.append(anp.concatenate([anp.stack(r_col + [r_jj]), anp.zeros(a.shape[1] - j - 1)]))
    q, r = anp.stack(qs, 1), anp.stack(rs, 1)
    return anp.sum(q * weights[0]) + anp.sum(r * weights[1])


def test_matrix_power_gradient():
    for n in (5, -2):
        def ours(a, n=n):
            return weighted(LA.matrix_power(a, n), W33)

        def theirs(a, n=n):
            b = anp.linalg.inv(a) if n < 0 else a
            out = b
            for _ in range(abs(n) - 1):
                out = anp.matmul(out, b)
            return anp.sum(out * W33)
        t = ng.tensor(AB, requires_grad=True)
        assert ng.gradcheck(ours, (t,))
        close(ng.grad(ours(t), (t,))[0].numpy(), autograd.grad(theirs)(AB), 1e-11)


SECOND_ORDER = {
    "inv": (LA.inv, [AB[0]]),
    "solve": (LA.solve, [AB[0], RECT[0, :3]]),
    "det": (LA.det, [AB[0]]),
    "slogdet": (lambda a: LA.slogdet(a).logabsdet, [AB[0]]),
    "pinv": (LA.pinv, [RECT[0]]),
    "cholesky": (lambda a: LA.cholesky(symmetric_from(a)), [AB[0]]),
    "eigh": (lambda a: LA.eigh(symmetric_from(a)).eigenvectors, [AB[0]]),
    "svd": (lambda a: LA.svd(a, full_matrices=False).U, [RECT[0]]),
    "qr": (lambda a: LA.qr(a).Q, [RECT[0]]),
    "matrix_power": (lambda a: LA.matrix_power(a, -2), [AB[0]]),
}


@pytest.mark.parametrize("name", sampled(list(SECOND_ORDER), 2))
def test_second_order(name):
    fn, inputs = SECOND_ORDER[name]
    assert ng.gradgradcheck(fn, tuple(ng.tensor(x, requires_grad=True) for x in inputs))


@pytest.mark.parametrize("name", ["inv", "solve", "slogdet", "cholesky", "eigh", "svd_wide"])
def test_batched_seeds_give_the_same_jacobian(name):
    # With batched seeds a rule receives gradients with an extra leading dimension.
    inputs = GRAD_CASES[name][1]
    fn = {"inv": LA.inv, "solve": lambda a: LA.solve(a, ng.tensor(inputs[1])),
          "slogdet": lambda a: LA.slogdet(a).logabsdet,
          "cholesky": lambda a: LA.cholesky(symmetric_from(a)),
          "eigh": lambda a: LA.eigh(symmetric_from(a)).eigenvectors,
          "svd_wide": lambda a: LA.svd(a, full_matrices=False).U}[name]
    x = ng.tensor(inputs[0])
    close(ng.functional.jacobian(fn, x, vectorize=True).numpy(),
          ng.functional.jacobian(fn, x).numpy())


def test_logdet_hessian_50():
    # The Hessian of x -> log det(A + diag(x)) is -(M^-1 o M^-T), M = A + diag(x).
    n = 50
    x0 = rng.uniform(0.1, 1.0, n)
    a = spd(n, n)
    m_inv = np.linalg.inv(a + np.diag(x0))
    want = -(m_inv * m_inv.T)

    def logdet(x):
        return LA.slogdet(ng.tensor(a) + x[:, None] * ng.eye(n)).logabsdet
    for vectorize in (False, True):
        close(ng.functional.hessian(logdet, ng.tensor(x0), vectorize=vectorize).numpy(),
              want, 1e-10)


def test_gradients_at_degenerate_spectra_and_zero_norms():
    # Eigenvalue-only losses at a repeated eigenvalue: the gap terms are left out, so the
    # gradient is V diag(g) V^T, exact; the same for singular values. A zero vector's
    # norm has gradient 0 (PyTorch's choice), not NaN.
    eye = ng.tensor(np.eye(3), requires_grad=True)
    (g,) = ng.grad(LA.eigh(eye).eigenvalues.sum(), (eye,))
    close(g.numpy(), np.eye(3))
    (g,) = ng.grad(LA.norm(eye, "nuc"), (eye,))
    close(g.numpy(), np.eye(3))
    zero = ng.zeros(3, requires_grad=True)
    for ord_ in (None, 2, 3):
        (g,) = ng.grad(LA.norm(zero, ord_), (zero,))
        np.testing.assert_array_equal(g.numpy(), np.zeros(3))


# ---- the CUDA target, through the host --------------------------------------------------

CUDA_CHECK = """
import numpy as np
import numgrad as ng

a = np.array([[4.0, 1.0], [1.0, 3.0]])
b = np.array([[2.0, 0.5, 0.0], [0.5, 3.0, 0.2], [0.0, 0.2, 1.0]])
x = ng.tensor(a, device="cuda", requires_grad=True)
with ng.engine.record() as rec:
    d = ng.linalg.det(x)
    w, v = ng.linalg.eigh(ng.tensor(b, device="cuda"))
    s = ng.linalg.solve(ng.tensor(b, device="cuda"), ng.tensor([1.0, 2.0, 3.0], device="cuda"))
    assert d.device == "cuda" and w.device == "cuda"
    np.testing.assert_allclose(d.numpy(), np.linalg.det(a), rtol=1e-12)
    np.testing.assert_allclose(w.numpy(), np.linalg.eigh(b)[0], rtol=1e-12)
    np.testing.assert_allclose(v.numpy(), np.linalg.eigh(b)[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(s.numpy(), np.linalg.solve(b, [1.0, 2.0, 3.0]), rtol=1e-12)
    (g,) = ng.grad(d, (x,))
    assert g.device == "cuda"
    np.testing.assert_allclose(g.numpy(), np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-12)
assert rec.library_via_host == 4, rec  # det, eigh, solve, and inv for the gradient
print("ok")
"""


def test_cuda_target_goes_through_the_host():
    # In Numba's CUDA simulator, in a child process (the simulator is chosen at import).
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env.pop("NUMGRAD_TEST_DEVICE", None)
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(CUDA_CHECK)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
