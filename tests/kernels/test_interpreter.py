"""The NumPy interpreter target (``NUMGRAD_CPU_KERNELS=numpy``): a complete target whose
kernels compute what the Numba CPU kernels compute, compiling and writing nothing.

Equality is checked on the programs and views the engine really builds: the `checked`
fixture makes the CPU device run each kernel launch on the Numba target and on the
interpreter, and compares their outputs. Tolerances: float64 rtol 1e-12 (NumPy's SIMD
loops and libm differ in the last bits, and NumPy sums pairwise), float32 rtol 1e-6;
integers and bools exactly; NaN and infinities in the same places.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from budget import quick

import numgrad as ng
from numgrad import kernels
from numgrad.device import as_device
from numgrad.kernels import cpu, interpreter
from numgrad.kernels.codegen import Program
from numgrad.ops import BINARY, TABLE, UNARY

RTOL = {"float64": 1e-12, "float32": 1e-6}
FLOATS = [-np.inf, -800, -30, -2.5, -1, -0.5, -0.0, 0.0, 0.3, 1, 1.5, 2.5, 30, 800, np.inf,
          np.nan]
INTS = [-(2**31), -1000, -7, -2, -1, 0, 1, 2, 3, 7, 1000, 2**31 - 1]
#: numgrad's name -> its function in `ng`
API_NAME = {"rint": "round"}
UNARY_OPS = [p for p in TABLE.values() if p.kind == UNARY]
BINARY_OPS = [p for p in TABLE.values() if p.kind == BINARY]


def _values(dtype: str) -> np.ndarray:
    if dtype == "bool":
        return np.array([True, False, True])
    return np.array(FLOATS if dtype.startswith("float") else INTS).astype(dtype)


def _assert_same(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert ours.dtype == theirs.dtype
    if theirs.dtype.name in RTOL:
        rtol = RTOL[theirs.dtype.name]
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol)
        zeros = (ours == 0) & (theirs == 0)
        np.testing.assert_array_equal(np.signbit(ours[zeros]), np.signbit(theirs[zeros]))
    else:
        np.testing.assert_array_equal(ours, theirs)


class _Checked:
    """The Numba CPU target, running each kernel launch on the interpreter too."""

    def __init__(self):
        self.programs = []

    def __getattr__(self, name):
        return getattr(cpu, name)

    def kernel(self, program, variant):
        return program, cpu.kernel(program, variant)

    def launch(self, kernel, variant, outs, shape, inputs, args):
        program, compiled = kernel
        how = cpu.launch(compiled, variant, outs, shape, inputs, args)
        ours = [np.empty(o.shape, o.dtype) for o in outs]
        fn = interpreter.kernel(program, interpreter.variant(program, shape))
        assert interpreter.launch(fn, "numpy", ours, shape, inputs, args) == kernels.INTERPRETED
        for mine, theirs in zip(ours, outs):
            _assert_same(mine, theirs)
        self.programs.append(program)
        return how


@pytest.fixture
def checked(monkeypatch):
    target = _Checked()
    monkeypatch.setattr(as_device("cpu"), "_backend", target)
    with ng.default_device("cpu"):
        yield target


def test_module_is_a_complete_target():
    assert kernels.missing(interpreter) == []
    assert interpreter.key == "numpy" and interpreter.name == "cpu"


def test_a_row_whose_reference_is_no_numpy_function_calls_it(checked, monkeypatch):
    # docs/extending.rst adds softplus at run time with a lambda as its reference: the
    # interpreter wrote `np.<lambda>(x)` and raised (the docs' examples under tiered)
    from numgrad import ops
    from numgrad.primitives import _elementwise

    monkeypatch.setitem(TABLE, "softplus_test", ops.Primitive(
        "softplus_test", UNARY, "math.log1p(math.exp(x))",
        vjp=lambda g, out, x, _: (g * x.sigmoid(),), ref=lambda a: np.log1p(np.exp(a)),
        floating=True))
    x = np.array([-2.0, 0.0, 0.5, 3.0])
    got = _elementwise("softplus_test", ng.tensor(x)).numpy()
    np.testing.assert_allclose(got, np.log1p(np.exp(x)), rtol=1e-12)
    assert any(p.code[-1][0] == "softplus_test" for p in checked.programs)


def test_kernels_are_kept_in_memory_and_write_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(tmp_path))
    program = Program(code=(("in", 0), ("exp", 0)), dtypes=("float64",) * 2,
                                      stores=(1,), in_dtypes=("float64",), arg_dtypes=())
    fn = interpreter.kernel(program, interpreter.variant(program, (3,)))
    assert interpreter.kernel(program, interpreter.variant(program, (7, 2))) is fn
    out = np.empty(3)
    interpreter.launch(fn, "numpy", [out], (3,), [np.array([0.0, 1.0, np.inf])], [])
    np.testing.assert_array_equal(out, np.exp([0.0, 1.0, np.inf]))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("dtype", quick(["float64", "float32", "int8", "int16", "int32",
                                           "int64", "uint8", "uint16", "uint32", "uint64",
                                           "bool"], ("float64", "int64", "bool")))
def test_unary_primitives(checked, dtype):
    x = ng.tensor(_values(dtype))
    ops = [op for op in UNARY_OPS if not (op.name == "negative" and dtype == "bool")
           and not (op.integral and dtype.startswith("float"))]
    ng.realize(*(getattr(ng, API_NAME.get(op.name, op.name))(x) for op in ops))
    assert sum(len(p.stores) for p in checked.programs) >= len(ops)


@pytest.mark.parametrize("dtype", quick(["float64", "float32", "int8", "int16", "int32",
                                           "uint8", "uint64", "bool"], ("float64", "int32")))
def test_binary_primitives_on_broadcast_grids(checked, dtype):
    values = _values(dtype)
    x, y = ng.tensor(values[:, None]), ng.tensor(values[None, :])
    results = [getattr(ng, op.name)(x, y) for op in BINARY_OPS
               if op.name != "power" and not (op.integral and dtype.startswith("float"))
               and not (op.no_bools and dtype == "bool")]
    # Integer exponents in [0, 100]: NumPy refuses negative ones (an error in numgrad
    # too).
    integers = not dtype.startswith(("float", "bool"))
    results.append(x ** (ng.minimum(ng.maximum(y, 0), 100) if integers else y))
    ng.realize(*results)


@pytest.mark.slow  # (every pair of dtypes: seconds of compiling, `budget`)
def test_casts_between_every_dtype(checked):
    dtypes = ["float64", "float32", "int8", "int16", "int32", "int64", "uint8", "uint16",
              "uint32", "uint64", "bool"]
    for source in dtypes:
        x = ng.tensor(_values(source))
        # (floats no unsigned type holds are cast as x86's code for C's cast gives, which
        # NumPy's array casts to uint32 give only in their vector loop: finite ones here)
        finite = ng.where(ng.isfinite(x), x, 0) * 1
        ng.realize(*((finite if target.startswith("uint") else x * 1).astype(target)
                     for target in dtypes if target != source))


def test_where_scalars_and_mixed_dtypes(checked):
    a = ng.tensor(np.linspace(-2, 2, 12).reshape(3, 4))
    b = ng.tensor(np.arange(4, dtype=np.int32))
    c = ng.tensor(np.array([1.5, np.nan, -np.inf], np.float32)[:, None])
    ng.realize(ng.where(a > 0, a * b, -a), ng.where(a > 0, 1.0, b), (c * 0.1 + a).exp(),
               ng.maximum(a, c), ng.where(a < 1, True, a > -1) | (b == 2))


@pytest.mark.parametrize("dtype", quick(["float64", "float32", "int32"], ["float64"]))
@pytest.mark.parametrize("axis", quick([0, 1, 2, (0, 2), None], [1, (0, 2), None]))
def test_reductions_with_epilogues(checked, dtype, axis):
    a = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4, 5))
    x = ng.tensor(a * 3 if dtype == "int32" else a).astype(dtype)
    y = ng.tensor(np.random.default_rng(1).uniform(1, 2, (3, 4, 5)))
    kept = np.sum(a, axis=axis, keepdims=True).shape
    z = ng.tensor(np.random.default_rng(2).uniform(1, 2, kept))
    ng.realize((x * y).sum(axis=axis), x.prod(axis=axis) * 2, (x.max(axis=axis) + 1) * 3,
               x.min(axis=axis, keepdims=True) - z, (x.exp().sum(axis=axis) + 1).log(),
               x.mean(axis=axis), ng.sum(x.astype("float32") * 3, axis=axis))
    assert {p.reduce for p in checked.programs} >= {"sum", "prod", "max", "min"}


def test_reductions_of_nan_inf_and_empty_axes(checked):
    a = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 0.0], [-1.0, 2.0, np.inf]])
    x = ng.tensor(a)
    ng.realize(x.max(axis=1), x.min(axis=0), x.sum(axis=1), x.prod(axis=0),
               ng.tensor(np.ones((3, 0))).sum(axis=1), ng.tensor(np.ones((0, 2))).prod(axis=0),
               ng.tensor(np.arange(6, dtype=np.int32) * 2**29).sum())


def test_gathers(checked):
    table = ng.tensor(np.arange(20.0).reshape(4, 5))
    i = np.array([[0, -1], [2, 3]])
    j = np.array([[4, 0], [-2, 1]])
    ng.realize(table[i] * 2, table[i, j].exp(), (table[i, j] + 1).sum(axis=1))
    assert any(p.table_dtypes for p in checked.programs)


def test_a_loss_and_its_gradient(checked):
    rng = np.random.default_rng(3)
    w = ng.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    x, t = ng.tensor(rng.standard_normal((5, 4))), ng.tensor(rng.uniform(0, 1, (5, 3)))
    p = (x @ w).sigmoid()
    loss = -(t * p.log() + (1 - t) * (1 - p).log()).mean()
    (g,) = ng.grad(loss, w)
    ng.realize(loss, g)
    assert any(p.reduce and p.stores for p in checked.programs)


def test_numpy_mode_compiles_nothing_and_writes_no_file(tmp_path):
    script = textwrap.dedent("""
        import json
        import numpy as np
        import numgrad as ng

        special = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, 2.0])
        x = ng.tensor(special)
        w = ng.tensor(np.linspace(-1, 1, 6), requires_grad=True)
        with ng.engine.record() as rec:
            exp, log, top = x.exp().numpy(), x.log().numpy(), x.max().numpy()
            (g,) = ng.grad(((w * 3).tanh() ** 2).sum(), w)
            grad = g.numpy()
        print(json.dumps({"launched": rec.kernels_launched,
                          "interpreted": rec.kernels_interpreted,
                          "compiled": rec.kernels_compiled, "hits": rec.cache_hits,
                          "disk": rec.disk_hits, "exp": exp.tolist(), "log": log.tolist(),
                          "max": top.tolist(), "grad": grad.tolist(),
                          "explain": ng.explain((x * 2).exp().sum())}))
    """)
    env = dict(os.environ, NUMGRAD_CPU_KERNELS="numpy", NUMGRAD_CACHE_DIR=str(tmp_path / "c"))
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", script],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["interpreted"] == out["launched"] > 0
    assert out["compiled"] == out["hits"] == out["disk"] == 0
    assert not list(tmp_path.rglob("k_*.py"))
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, 2.0])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out["exp"], np.exp(special))
        np.testing.assert_array_equal(out["log"], np.log(special))
    assert np.isnan(out["max"])
    w = np.linspace(-1, 1, 6)
    np.testing.assert_allclose(out["grad"], 6 * np.tanh(3 * w) / np.cosh(3 * w) ** 2,
                               rtol=1e-12)
    assert "np.exp(v2)" in out["explain"] and "numba" not in out["explain"]
