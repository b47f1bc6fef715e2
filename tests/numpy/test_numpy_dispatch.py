"""NumPy's functions on tensors (SPEC §8; NEP 13 and NEP 18): ``np.exp(t)``, ``a + t``,
``np.sum(t, axis=0)``, ``np.concatenate([t, u])``, ``np.linalg.solve(A, t)`` and ``t % a``
return tensors with numgrad's values and gradients; what numgrad lacks raises TypeError
naming the NumPy function; ``out=`` raises; ``np.asarray`` copies.

Each expression is written once over a module (``m.exp(x)``) and run with NumPy on
tensors, NumPy on arrays (values, float64 rtol 1e-12) and HIPS autograd's numpy
(gradients, rtol 1e-12), and checked with ng.gradcheck (central differences, its
defaults atol 1e-5, rtol 1e-3).
"""

import inspect
import os
import subprocess
import sys
import textwrap

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import sampled

import numgrad as ng

RTOL = 1e-12
rng = np.random.default_rng(7)
X = rng.uniform(0.5, 1.5, (3, 2))
U = rng.uniform(-1.0, 1.0, (2, 2))
SPD = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.8]])
A = rng.uniform(0.7, 1.9, (3, 2))  # a NumPy array operand (a divisor for %)

# name: (expression over a module m and the differentiated arrays, the arrays)
CASES = {
    "exp": (lambda m, x: m.exp(x), (X,)),
    "sum_axis0": (lambda m, x: m.sum(x, axis=0), (X,)),
    "concatenate": (lambda m, x, u: m.concatenate([x, u]), (X, U)),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), (SPD, X)),
    "tensor_mod_array": (lambda m, x: x % A, (X,)),
    "array_mod_tensor": (lambda m, x: A % x, (X,)),
    "array_add_tensor": (lambda m, x: A + x, (X,)),
    "array_sub_tensor": (lambda m, x: A - x, (X,)),
    "array_mul_tensor": (lambda m, x: A * x, (X,)),
    "array_div_tensor": (lambda m, x: A / x, (X,)),
    "array_matmul_tensor": (lambda m, x: A.T @ x, (X,)),
    "mean_axis1": (lambda m, x: m.mean(x, axis=1), (X,)),
    "where_array_condition": (lambda m, x: m.where(A > 1.2, x, 2.0 * x), (X,)),
    "add_mixed": (lambda m, x: m.add(A, m.multiply(x, x)), (X,)),
}


@pytest.mark.parametrize("name", sampled(list(CASES), 2))
def test_numpy_call_on_tensors_is_numgrads_with_gradients(name):
    fn, arrays = CASES[name]
    xs = [ng.tensor(a, requires_grad=True) for a in arrays]
    out = fn(np, *xs)
    assert isinstance(out, ng.Tensor) and out.requires_grad
    np.testing.assert_allclose(out.numpy(), fn(np, *arrays), rtol=RTOL)
    w = rng.standard_normal(out.shape)
    got = ng.grad((out * w).sum(), xs)
    want = autograd.grad(lambda *a: anp.sum(fn(anp, *a) * w), tuple(range(len(xs))))(*arrays)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e, rtol=RTOL, atol=1e-14)
    assert ng.gradcheck(lambda *t: fn(np, *t), xs)


def test_second_order_through_numpy_calls():
    x = ng.tensor(X, requires_grad=True)
    assert ng.gradgradcheck(lambda t: np.sum(np.exp(t) * np.sin(t), axis=0), (x,))


def test_numpy_calls_stay_lazy():
    x = ng.tensor(X, requires_grad=True)
    x.realize()
    with ng.engine.record() as rec:
        y = np.sum(np.exp(A * x), axis=0)
    assert rec.kernels_launched == 0
    np.testing.assert_allclose(y.numpy(), np.exp(A * X).sum(0), rtol=RTOL)


def test_ufunc_methods_with_an_equivalent():
    x = ng.tensor(X)
    np.testing.assert_allclose(np.add.reduce(x).numpy(), X.sum(0), rtol=RTOL)
    np.testing.assert_allclose(np.maximum.reduce(x, axis=1, keepdims=True).numpy(),
                               X.max(1, keepdims=True), rtol=RTOL)
    np.testing.assert_allclose(np.multiply.outer(x, U).numpy(), np.multiply.outer(X, U),
                               rtol=RTOL)
    assert (np.shape(x), np.ndim(x), np.size(x), np.size(x, 1)) == ((3, 2), 2, 6, 2)


@pytest.mark.parametrize("call, named", [
    (lambda x: np.fft.fft(x), "numpy.fft.fft"),
    (lambda x: np.unwrap(x), "numpy.unwrap"),
    (lambda x: np.add.at(x, 0, 1.0), "numpy.add.at"),
    (lambda x: np.subtract.reduce(x), "numpy.subtract.reduce"),
    (lambda x: np.add.reduceat(x, [0]), "numpy.add.reduceat"),
])
def test_numpy_function_numgrad_lacks_raises_naming_it(call, named):
    x = ng.tensor(X, requires_grad=True)
    with pytest.raises(TypeError, match=f"numgrad has no equivalent of {named}"):
        call(x)


def test_out_raises_and_leaves_the_array_alone():
    x = ng.tensor(X, requires_grad=True)
    buf = np.zeros((3, 2))
    for call in (lambda: np.exp(x, out=buf), lambda: np.add(A, x, out=buf),
                 lambda: np.sum(x, axis=1, out=np.zeros(3))):
        with pytest.raises(TypeError, match="out="):
            call()
    a = A.copy()
    with pytest.raises(TypeError, match="numpy.add: numgrad cannot write into out="):
        a += x  # ndarray's in-place add is np.add(a, x, out=a)
    np.testing.assert_array_equal(a, A)
    np.testing.assert_array_equal(buf, 0.0)


@pytest.mark.parametrize("call, keyword", [
    (lambda x: np.sum(x, initial=1.0), "initial"),
    (lambda x: np.mean(x, where=A > 1), "where"),
    (lambda x: np.exp(x, casting="unsafe"), "casting"),
    (lambda x: np.reshape(x, (6,), order="F"), "order"),
])
def test_a_keyword_numgrad_does_not_take_raises_naming_it(call, keyword):
    with pytest.raises(TypeError, match=f"takes no argument '{keyword}'"):
        call(ng.tensor(X))


def test_positional_arguments_follow_numpys_signature():
    x = ng.tensor(X)
    got = np.sum(x, 1, None, None, True)  # axis, dtype, out, keepdims
    np.testing.assert_allclose(got.numpy(), X.sum(1, keepdims=True), rtol=RTOL)
    np.testing.assert_allclose(np.clip(x, 0.8, 1.2).numpy(), np.clip(X, 0.8, 1.2), rtol=RTOL)
    np.testing.assert_allclose(np.transpose(x, axes=(1, 0)).numpy(), X.T, rtol=RTOL)


def test_asarray_and_array_copy_the_value():
    x = ng.tensor(X)
    for a in (np.asarray(x), np.array(x), np.asarray(x, dtype=np.float32)):
        assert isinstance(a, np.ndarray)
        np.testing.assert_allclose(a, X, rtol=1e-7 if a.dtype == np.float32 else 0)
        a[...] = 0  # the caller owns it
    np.testing.assert_array_equal(x.numpy(), X)
    with pytest.raises(ValueError, match="without a copy"):
        np.asarray(x, copy=False)


def test_a_tensor_that_requires_grad_converted_by_numpy_warns_naming_the_function():
    """SPEC §8: a gradient is never dropped silently. NumPy's ``full`` converts its fill
    value before anything can dispatch: the warning names it (and the fixes), and
    points at the caller's line."""
    t = ng.tensor(2.0, requires_grad=True)
    with pytest.warns(ng.GradientDroppedWarning, match=r"numpy\.full .*Use ng\.full to") as caught:
        a = np.full((3,), t)
    assert caught[0].filename == __file__
    np.testing.assert_array_equal(a, [2.0, 2.0, 2.0])
    with pytest.warns(ng.GradientDroppedWarning, match=r"np\.asarray"):
        np.asarray(t)
    with pytest.warns(ng.GradientDroppedWarning, match=r"numpy\.vectorize .*ng\.<name>"):
        np.vectorize(lambda v: v * 2)(t)
    with pytest.warns(ng.GradientDroppedWarning, match="compiled function"):
        shuffled = np.random.default_rng(0).permutation(ng.tensor([1.0, 2.0],
                                                                   requires_grad=True))
    assert sorted(shuffled.tolist()) == [1.0, 2.0]
    scipy_special = pytest.importorskip("scipy.special")
    with pytest.warns(ng.GradientDroppedWarning,
                      match=r"scipy\.special\.logsumexp .*Use ng\.scipy\.special\.logsumexp"):
        scipy_special.logsumexp(ng.tensor([1.0, 2.0], requires_grad=True))


def test_a_scipy_ufunc_runs_as_numgrad_scipys_or_is_refused_by_its_own_name():
    special = pytest.importorskip("scipy.special")
    t = ng.tensor([0.25, 0.5], requires_grad=True)
    for name in ("expit", "logit"):
        out = getattr(special, name)(t)  # SciPy's ufunc, on a tensor: differentiable
        assert isinstance(out, ng.Tensor) and out.requires_grad
        np.testing.assert_allclose(out.numpy(), getattr(special, name)(t.numpy()), rtol=1e-12)
    (g,) = ng.grad(special.xlogy(t, 3.0 * t).sum(), t)
    np.testing.assert_allclose(g.numpy(), np.log(3.0 * t.numpy()) + 1, rtol=1e-12)
    with pytest.raises(TypeError, match=r"scipy\.special\.k0e; convert"):
        special.k0e(t)


@pytest.mark.filterwarnings("error::numgrad.GradientDroppedWarning")
def test_reading_a_value_on_purpose_does_not_warn():
    t = ng.tensor([1.0, 2.0], requires_grad=True)
    for read in (lambda: t.numpy(), lambda: np.asarray(t.detach()), lambda: t.tolist(),
                 lambda: float(t.sum()), lambda: t.sum().item()):
        read()
    with ng.no_grad():  # (nothing is recorded: no gradient to drop)
        np.asarray(t)


def test_another_librarys_array_answers_for_itself():
    class Foreign:
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            return "foreign"

        def __array_function__(self, func, types, args, kwargs):
            return "foreign"

    x = ng.tensor(X)
    assert np.add(x, Foreign()) == "foreign"
    assert np.concatenate([x, Foreign()]) == "foreign"


def test_mixed_devices_raise_naming_both():
    """In Numba's CUDA simulator, in a child process (the simulator is chosen at import)."""
    script = textwrap.dedent("""
        import numpy as np, numgrad as ng
        c = ng.tensor([1.0, 2.0], device="cpu")
        g = ng.tensor([1.0, 2.0], device="cuda")
        for call in (lambda: np.add(c, g), lambda: np.concatenate([g, c]),
                     lambda: np.where(np.array([True, False]), c, g)):
            try:
                call()
            except RuntimeError as e:
                assert "'cpu'" in str(e) and "'cuda'" in str(e), e
            else:
                raise AssertionError("mixed devices did not raise")
        y = np.multiply(np.array([3.0, 4.0]), g)  # an ndarray joins the tensor's device
        assert y.device == "cuda" and y.tolist() == [3.0, 8.0]
        print("ok")
    """)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_list_holding_tensors_is_not_converted_silently():
    x = ng.tensor(X, requires_grad=True)
    with pytest.raises(TypeError, match="ng.stack"):
        np.add(x, [x[0], x[1], x[2]])


def test_masked_arrays_are_not_taken():
    x = ng.tensor(X)
    with pytest.raises(TypeError, match="numpy.concatenate"):
        np.concatenate([x, np.ma.masked_array(U, mask=U > 0)])


# ---- every SPEC §2 function through NumPy's name (values; gradients are the functions' own
# tests' and the vendored HIPS autograd tests'): the arguments line up with NumPy's ----------

SQ = np.array([[2.0, 0.5, 0.1], [0.5, 1.5, 0.3], [0.1, 0.3, 1.2]])


def _of_half(name):
    return lambda m, x, q: getattr(m, name)(x / 2)


def _of_two(name):
    return lambda m, x, q: getattr(m, name)(x, x[::-1] + 0.25)


CALLS = {  # name: a call over a module m and the values x (3, 2) and q (3, 3, symmetric)
    **{name: _of_half(name) for name in (
        "sinh", "cosh", "arcsinh", "arctanh", "arcsin", "arccos", "arctan", "log2", "log10",
        "exp2", "deg2rad", "rad2deg", "degrees", "radians", "sinc", "nan_to_num", "cumsum",
        "cumprod", "sort", "argsort", "atleast_1d", "atleast_2d", "atleast_3d", "flip",
        "flipud", "fliplr", "rot90", "diagonal", "trace", "tril", "triu")},
    "arccosh": lambda m, x, q: m.arccosh(x + 1),
    **{name: _of_two(name) for name in (
        "arctan2", "hypot", "logaddexp", "logaddexp2", "fmax", "fmin", "mod", "remainder",
        "fmod")},
    "hstack": lambda m, x, q: m.hstack([x, x]),
    "vstack": lambda m, x, q: m.vstack((x, x)),
    "column_stack": lambda m, x, q: m.column_stack([x, x]),
    "dstack": lambda m, x, q: m.dstack([x, x]),
    "moveaxis": lambda m, x, q: m.moveaxis(q[None], 0, -1),
    "rollaxis": lambda m, x, q: m.rollaxis(q[None], 2),
    "roll": lambda m, x, q: m.roll(x, 1, axis=0),
    "repeat": lambda m, x, q: m.repeat(x, 2, axis=1),
    "tile": lambda m, x, q: m.tile(x, (2, 1)),
    "pad": lambda m, x, q: m.pad(x, ((1, 0), (0, 2)), mode="reflect"),
    "append": lambda m, x, q: m.append(x, x, axis=0),
    "array_split": lambda m, x, q: m.array_split(x, 2)[1],
    "diag": lambda m, x, q: m.diag(q, k=1),
    "kron": lambda m, x, q: m.kron(x, q),
    "inner": lambda m, x, q: m.inner(x, x),
    "cross": lambda m, x, q: m.cross(q, q[::-1]),
    "tensordot": lambda m, x, q: m.tensordot(q, x, axes=1),
    "diff": lambda m, x, q: m.diff(q, n=2, axis=0),
    "partition": lambda m, x, q: m.partition(q, 1, axis=1),
    "clip": lambda m, x, q: m.clip(x, 0.8, 1.2),
    "amax": lambda m, x, q: m.amax(x, axis=0),
    "amin": lambda m, x, q: m.amin(q),
    "absolute": lambda m, x, q: m.absolute(x - 1),
    "around": lambda m, x, q: m.around(x * 10),
    "true_divide": lambda m, x, q: m.true_divide(x, x[::-1]),
    "isclose": lambda m, x, q: m.isclose(x, x[::-1], rtol=0.5),
    "isnan": lambda m, x, q: m.isnan(x),
    "inv": lambda m, x, q: m.linalg.inv(q),
    "pinv": lambda m, x, q: m.linalg.pinv(x),
    "solve": lambda m, x, q: m.linalg.solve(q, x),
    "det": lambda m, x, q: m.linalg.det(q),
    "slogdet": lambda m, x, q: m.linalg.slogdet(q)[1],
    "cholesky": lambda m, x, q: m.linalg.cholesky(q),
    "eigh": lambda m, x, q: m.linalg.eigh(q)[0],
    "svd": lambda m, x, q: m.linalg.svd(x, compute_uv=False),
    "qr": lambda m, x, q: m.linalg.qr(x)[1],
    "norm": lambda m, x, q: m.linalg.norm(q, ord="fro"),
    "matrix_power": lambda m, x, q: m.linalg.matrix_power(q, 3),
}


@pytest.mark.parametrize("name", sampled(list(CALLS), 2))
def test_each_function_answers_numpys_call(name):
    got = CALLS[name](np, ng.tensor(X), ng.tensor(SQ))
    assert isinstance(got, ng.Tensor)
    np.testing.assert_allclose(got.numpy(), CALLS[name](np, X, SQ), rtol=RTOL, atol=1e-15)


def test_module_functions_show_their_arguments():
    """``help(ng.sum)`` and ``inspect.signature`` show the method's arguments, not
    ``(x, *args, **kwargs)``: no public function hides its arguments that way."""
    assert list(inspect.signature(ng.sum).parameters) == ["x", "axis", "keepdims", "dtype"]
    assert list(inspect.signature(ng.exp).parameters) == ["x"]
    hidden = [name for name in dir(ng) if inspect.isfunction(getattr(ng, name))
              and {p.kind for p in inspect.signature(getattr(ng, name)).parameters.values()}
              >= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}]
    assert not hidden, hidden


def test_an_axis_out_of_range_is_numpys_axis_error():
    """NumPy's AxisError is a ValueError and an IndexError: code catching either works."""
    for call in (lambda: ng.ones(3).sum(axis=2), lambda: np.sum(ng.ones((2, 2)), axis=-3),
                 lambda: ng.ones(3).mean(axis=1)):
        with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
            call()
