"""The Python Array API standard's (2024.12) ``linalg`` extension in ``ng.linalg``:
vector_norm, matrix_norm, svdvals, eigvalsh, matrix_rank, diagonal, trace, vecdot and
matrix_transpose.

Values against NumPy 2's ``np.linalg`` functions of the same names (float64, rtol 1e-12
relative to the largest expected magnitude), batched inputs and every ``ord``; gradients
against central finite differences (``ng.gradcheck``) and HIPS autograd (rtol 1e-10) at
points without ties or zeros; signatures as the standard writes them; and argument
errors raised at the call, before any kernel runs. Arrays are small: each new kernel
structure compiles once.
"""

import inspect
import math

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import quick
from test_linalg import RTOL, close

import numgrad as ng

LA = ng.linalg
rng = np.random.default_rng(11)
INF = math.inf


def _no_ties(*shape):
    """Entries of distinct magnitudes, none near 0, random signs: max, min and abs are
    differentiable there."""
    n = math.prod(shape)
    mags = 0.5 + rng.permutation(n) / n + 0.1 * rng.random(n) / n
    return (mags * rng.choice([-1.0, 1.0], n)).reshape(shape)


def _symmetric(*shape):
    x = rng.standard_normal(shape)
    return (x + x.swapaxes(-1, -2)) / 2


V = _no_ties(2, 3, 4)          # a batch of vectors / of 3x4 matrices
T = rng.standard_normal((2, 4, 3))  # tall matrices
SQ = rng.standard_normal((3, 3))
SQB = rng.standard_normal((2, 3, 3))
SYM = _symmetric(2, 3, 3)
WITH_ZEROS = np.where(rng.random((2, 5)) < 0.4, 0.0, rng.standard_normal((2, 5)))


# ---- signatures --------------------------------------------------------------------

P, K = inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.KEYWORD_ONLY
NO = inspect.Parameter.empty
SIGNATURES = {
    "vector_norm": [("x", P, NO), ("axis", K, None), ("keepdims", K, False), ("ord", K, 2)],
    "matrix_norm": [("x", P, NO), ("keepdims", K, False), ("ord", K, "fro")],
    "svdvals": [("x", P, NO)],
    "eigvalsh": [("x", P, NO)],
    "matrix_rank": [("x", P, NO), ("rtol", K, None)],
    "diagonal": [("x", P, NO), ("offset", K, 0)],
    "trace": [("x", P, NO), ("offset", K, 0), ("dtype", K, None)],
    "vecdot": [("x1", P, NO), ("x2", P, NO), ("axis", K, -1)],
    "matrix_transpose": [("x", P, NO)],
}


@pytest.mark.parametrize("name", SIGNATURES)
def test_signature_is_the_standards(name):
    fn = getattr(LA, name)
    assert name in LA.__all__
    params = inspect.signature(fn).parameters.values()
    assert [(p.name, p.kind, p.default) for p in params] == SIGNATURES[name]
    assert fn.__doc__


def test_top_level_names_keep_numpys_axes():
    # ng.diagonal and ng.trace are NumPy's (axes 0 and 1); the linalg ones use the last two.
    x = ng.tensor(V)
    close(ng.diagonal(x).numpy(), np.diagonal(V))
    close(ng.trace(x).numpy(), np.trace(V))
    assert LA.diagonal is not ng.diagonal and LA.trace is not ng.trace
    assert LA.vecdot is ng.vecdot and LA.matrix_transpose is ng.matrix_transpose


# ---- values against NumPy ------------------------------------------------------------

VECTOR_ORDS = [2, 1, 3, 0.5, -1, -2.5, INF, -INF]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norm_every_ord_batched(ord):  # noqa: A002
    close(LA.vector_norm(ng.tensor(V), axis=-1, ord=ord).numpy(),
          np.linalg.vector_norm(V, axis=-1, ord=ord))


def test_vector_norm_ord_0_counts_nonzeros():
    got = LA.vector_norm(ng.tensor(WITH_ZEROS), axis=1, ord=0)
    close(got.numpy(), np.linalg.vector_norm(WITH_ZEROS, axis=1, ord=0))
    assert got.dtype == np.float64


@pytest.mark.parametrize("axis, keepdims, ord", [
    (None, False, 2), (None, True, 2), (None, False, INF), (None, False, 1),
    (0, True, 2), ((0, 2), False, 2), ((-1, 0), True, 3), ((2, 1), False, -INF),
    ((0, 1, 2), False, 1),
])
def test_vector_norm_axes(axis, keepdims, ord):  # noqa: A002
    close(LA.vector_norm(ng.tensor(V), axis=axis, keepdims=keepdims, ord=ord).numpy(),
          np.linalg.vector_norm(V, axis=axis, keepdims=keepdims, ord=ord))


def test_vector_norm_defaults_and_integers():
    close(LA.vector_norm(ng.tensor(V)).numpy(), np.linalg.vector_norm(V))
    ints = np.arange(-3, 3).reshape(2, 3)
    got = LA.vector_norm(ng.tensor(ints), axis=1)
    assert got.dtype == np.float64
    close(got.numpy(), np.linalg.vector_norm(ints, axis=1))


MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, INF, -INF]


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_every_ord_batched(ord):  # noqa: A002
    close(LA.matrix_norm(ng.tensor(V), ord=ord).numpy(), np.linalg.matrix_norm(V, ord=ord))


@pytest.mark.parametrize("ord", ["fro", 2, -INF])
def test_matrix_norm_keepdims_and_one_matrix(ord):  # noqa: A002
    close(LA.matrix_norm(ng.tensor(T), keepdims=True, ord=ord).numpy(),
          np.linalg.matrix_norm(T, keepdims=True, ord=ord))
    close(LA.matrix_norm(ng.tensor(SQ), ord=ord).numpy(), np.linalg.matrix_norm(SQ, ord=ord))


@pytest.mark.parametrize("x", [T, T.swapaxes(-1, -2), SQ], ids=["tall", "wide", "square"])
def test_svdvals(x):
    close(LA.svdvals(ng.tensor(x)).numpy(), np.linalg.svdvals(x))


def test_eigvalsh_ascending():
    got = LA.eigvalsh(ng.tensor(SYM)).numpy()
    close(got, np.linalg.eigvalsh(SYM))
    assert (np.diff(got, axis=-1) > 0).all()
    # only the lower triangle is read, as NumPy's default
    lower = np.tril(SYM) + 5 * np.triu(np.ones((3, 3)), 1)
    close(LA.eigvalsh(ng.tensor(lower)).numpy(), np.linalg.eigvalsh(lower))


def _rank_deficient():
    low = rng.standard_normal((4, 2)) @ rng.standard_normal((2, 3))  # rank 2
    tiny = np.diag([1.0, 1e-9, 1e-17])  # rank 2 at the default rtol, 1 at rtol 1e-8
    return np.stack([low, rng.standard_normal((4, 3)), np.zeros((4, 3)),
                     np.vstack([tiny, np.zeros(3)])])


RANKED = _rank_deficient()


@pytest.mark.parametrize("rtol", [None, 1e-8, 0.5, np.array([1e-8, 1e-8, 0.1, 1e-12])],
                         ids=["default", "float", "large", "per-matrix"])
def test_matrix_rank(rtol):
    ours = rtol if rtol is None or np.isscalar(rtol) else ng.tensor(rtol)
    got = LA.matrix_rank(ng.tensor(RANKED), rtol=ours)
    assert np.issubdtype(got.dtype, np.integer)
    assert not got.requires_grad
    np.testing.assert_array_equal(got.numpy(), np.linalg.matrix_rank(RANKED, rtol=rtol))


def test_matrix_rank_default_is_the_standards_and_reads_no_gradient():
    np.testing.assert_array_equal(LA.matrix_rank(ng.tensor(RANKED)).numpy(), [2, 3, 0, 2])
    np.testing.assert_array_equal(LA.matrix_rank(ng.tensor(RANKED), rtol=1e-8).numpy(),
                                  [2, 3, 0, 1])
    x = ng.tensor(T, requires_grad=True)
    assert LA.matrix_rank(x).tolist() == [3, 3]
    assert not LA.matrix_rank(x).requires_grad


@pytest.mark.parametrize("offset", [0, 1, -2, 5])
def test_diagonal_last_two_axes(offset):
    close(LA.diagonal(ng.tensor(V), offset=offset).numpy(),
          np.linalg.diagonal(V, offset=offset))


@pytest.mark.parametrize("offset, dtype", [(0, None), (1, None), (-1, None),
                                           (0, np.float32)])
def test_trace_last_two_axes(offset, dtype):
    got = LA.trace(ng.tensor(V), offset=offset, dtype=dtype)
    want = np.linalg.trace(V, offset=offset, dtype=dtype)
    assert got.dtype == want.dtype
    close(got.numpy(), want, RTOL if dtype is None else 1e-6)


def test_trace_of_integers():
    ints = np.arange(24).reshape(2, 3, 4)
    for dtype in (None, np.float64):
        got = LA.trace(ng.tensor(ints), dtype=dtype)
        want = np.linalg.trace(ints, dtype=dtype)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("shape2, axis", [((3, 4), -1), ((2, 3, 4), -2), ((4,), -1)])
def test_vecdot(shape2, axis):
    y = rng.standard_normal(shape2)
    close(LA.vecdot(ng.tensor(V), ng.tensor(y), axis=axis).numpy(),
          np.linalg.vecdot(V, y, axis=axis))


def test_matrix_transpose():
    close(LA.matrix_transpose(ng.tensor(V)).numpy(), np.linalg.matrix_transpose(V))


# ---- gradients: finite differences and HIPS autograd ------------------------------------

def _weights(*shape):
    return rng.standard_normal(shape)


W24, W23, W2 = _weights(2, 4), _weights(2, 3), _weights(2)


def sym(a):
    """The symmetric part of `a` (ng or autograd)."""
    return (a + a.swapaxes(-1, -2)) / 2


def weighted(x, w):
    """sum(x * w): a scalar that depends on every entry (works for ng and autograd)."""
    return (x * (ng.tensor(w) if isinstance(x, ng.Tensor) else w)).sum()


# name: (ours, autograd's equivalent, inputs)
GRAD_CASES = {
    "vector_norm_1": (lambda a: weighted(LA.vector_norm(a, axis=-1, ord=1), W23),
                      lambda a: weighted(anp.sum(anp.abs(a), -1), W23), [V]),
    "vector_norm_2": (lambda a: weighted(LA.vector_norm(a, axis=-1), W23),
                      lambda a: weighted(anp.linalg.norm(a, axis=-1), W23), [V]),
    "vector_norm_3": (lambda a: weighted(LA.vector_norm(a, axis=1, ord=3), W24),
                      lambda a: weighted(anp.linalg.norm(a, 3, axis=1), W24), [V]),
    "vector_norm_inf": (lambda a: weighted(LA.vector_norm(a, axis=-1, ord=INF), W23),
                        lambda a: weighted(anp.max(anp.abs(a), -1), W23), [V]),
    "vector_norm_all": (lambda a: LA.vector_norm(a), lambda a: anp.linalg.norm(a), [V]),
    "vector_norm_axes": (lambda a: weighted(LA.vector_norm(a, axis=(0, 2), ord=3), W23[0]),
                         lambda a: weighted(anp.sum(anp.abs(a) ** 3, (0, 2)) ** (1 / 3),
                                            W23[0]), [V]),
    "matrix_norm_fro": (lambda a: weighted(LA.matrix_norm(a), W2),
                        lambda a: weighted(anp.linalg.norm(a, "fro", axis=(1, 2)), W2), [T]),
    "matrix_norm_nuc": (lambda a: weighted(LA.matrix_norm(a, ord="nuc"), W2),
                        lambda a: weighted(anp.linalg.norm(a, "nuc", axis=(1, 2)), W2), [T]),
    "matrix_norm_2": (lambda a: weighted(LA.matrix_norm(a, ord=2), W2),
                      lambda a: weighted(anp.max(anp.linalg.svd(a, compute_uv=False), -1),
                                         W2), [T]),
    "svdvals": (lambda a: weighted(LA.svdvals(a), W23),
                lambda a: weighted(anp.linalg.svd(a, compute_uv=False), W23), [T]),
    # eigvalsh reads one triangle: moving both (a symmetric input) is what it differentiates
    "eigvalsh": (lambda a: weighted(LA.eigvalsh(sym(a)), W23),
                 lambda a: weighted(anp.linalg.eigh(sym(a))[0], W23), [SYM]),
    # autograd differentiates the main diagonal of square matrices over axes (-1, -2)
    # (the same values) and traces over axes (0, 1) only
    "diagonal": (lambda a: weighted(LA.diagonal(a), W23),
                 lambda a: weighted(anp.diagonal(a, 0, -1, -2), W23), [SQB]),
    "trace": (lambda a: weighted(LA.trace(a, offset=-1), W2),
              lambda a: weighted(anp.trace(anp.transpose(a, (1, 2, 0)), -1), W2), [V]),
    "vecdot": (lambda a, b: weighted(LA.vecdot(a, b, axis=-2), W24),
               lambda a, b: weighted(anp.sum(a * b, -2), W24), [V, T.swapaxes(-1, -2)]),
}


@pytest.mark.parametrize("name", quick(list(GRAD_CASES), list(GRAD_CASES)[::2]))
def test_gradients_match_finite_differences_and_autograd(name):
    ours, theirs, inputs = GRAD_CASES[name]
    ts = tuple(ng.tensor(x, requires_grad=True) for x in inputs)
    assert ng.gradcheck(ours, ts)
    grads = ng.grad(ours(*ts), ts)
    for i, g in enumerate(grads):
        close(g.numpy(), autograd.grad(theirs, i)(*inputs), 1e-10)


@pytest.mark.parametrize("fn, x", [
    (lambda a: LA.vector_norm(a, axis=-1, ord=2), V),
    (lambda a: LA.matrix_norm(a, ord="nuc"), T),
    (LA.svdvals, T[0]),
    (lambda a: LA.eigvalsh(sym(a)), SYM[0]),
    (lambda a: LA.diagonal(a, offset=1), V),
    (lambda a: LA.trace(a), V),
    (lambda a: LA.matrix_transpose(a), V[0]),
], ids=["vector_norm", "matrix_norm", "svdvals", "eigvalsh", "diagonal", "trace",
        "matrix_transpose"])
def test_gradcheck_of_the_whole_output(fn, x):
    assert ng.gradcheck(fn, (ng.tensor(x, requires_grad=True),))


# ---- argument errors: at the call, before any kernel -----------------------------------

ERRORS = [
    (lambda x: LA.matrix_norm(x[0, 0]), np.linalg.LinAlgError, "1-dimensional array given"),
    (lambda x: LA.matrix_norm(x, ord=3), ValueError, r"matrix_norm: .*ord 3"),
    (lambda x: LA.matrix_norm(x, ord="f"), ValueError, r"matrix_norm: .*ord 'f'"),
    (lambda x: LA.matrix_norm(x, ord=None), ValueError, r"matrix_norm: .*ord None"),
    (lambda x: LA.vector_norm(x, ord="fro"), ValueError, r"vector_norm: .*ord 'fro'"),
    (lambda x: LA.vector_norm(x, ord=None), ValueError, r"vector_norm: .*ord None"),
    (lambda x: LA.vector_norm(x, axis=3), np.exceptions.AxisError, "axis 3 is out of bounds"),
    (lambda x: LA.vector_norm(x, axis=(0, -3)), ValueError, "repeated axis"),
    (lambda x: LA.vector_norm(x, axis=1.5), TypeError, "axis"),
    (lambda x: LA.svdvals(x[0, 0]), np.linalg.LinAlgError, "1-dimensional array given"),
    (lambda x: LA.eigvalsh(x), np.linalg.LinAlgError, "must be square"),
    (lambda x: LA.matrix_rank(x[0, 0]), np.linalg.LinAlgError, "1-dimensional array given"),
    (lambda x: LA.diagonal(x[0, 0]), ValueError, r"diagonal: .*at least two dimensions"),
    (lambda x: LA.trace(x[0, 0]), ValueError, r"trace: .*at least two dimensions"),
    (lambda x: LA.matrix_transpose(x[0, 0]), ValueError, r"at least 2 dimensions.*\(4,\)"),
]


@pytest.mark.parametrize("fn, error, message", ERRORS)
def test_bad_arguments_raise_at_the_call(fn, error, message):
    x = ng.tensor(V) + 1  # pending: a check must not compute it
    with ng.engine.record() as rec:
        with pytest.raises(error, match=message):
            fn(x)
    assert rec.kernels_launched == 0
