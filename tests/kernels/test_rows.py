"""The rows CPU kernels call rather than inline (`numgrad.kernels.rows`, the table's
`called`): a kernel that uses one calls it, gives what the same kernel with the row
inlined gives, bit for bit, in float64 and float32, and a second kernel that uses it
compiles without compiling the row again."""

import numpy as np
import pytest

import numgrad as ng
from numgrad.kernels import cache, cpu, rows
from numgrad.kernels.codegen import Program
from numgrad.ops import BINARY, TABLE, TERNARY, UNARY

CALLED = sorted(name for name, row in TABLE.items() if row.called)
ARITY = {UNARY: 1, BINARY: 2, TERNARY: 3}


def _operands(name: str, dtype: str) -> list[np.ndarray]:
    """Values across the row's domain and beyond it (0, negatives, inf, nan)."""
    low, high = TABLE[name].domain
    edges = [0.0, -1.5, 30.0, np.inf, np.nan]
    columns = [np.linspace(low, high, 9), np.linspace(high, low, 9), np.linspace(0.1, 0.9, 9)]
    return [np.concatenate([c, edges]).astype(dtype) for c in columns[:ARITY[TABLE[name].kind]]]


def _compute(name: str, operands: list[np.ndarray]) -> np.ndarray:
    tensors = [ng.tensor(v) for v in operands]
    function = getattr(ng, name, None) or getattr(ng.scipy.special, name)
    return (function(*tensors) * 2.0).numpy()


def test_the_called_rows_are_the_long_ones_that_do_not_vectorize():
    assert CALLED == ["betainc", "digamma", "gammainc", "gammaincc", "nextafter",
                      "polygamma"]


#: the rows whose inlined kernels compile in under a second, run by README's command
#: in float64 (the others, and float32, under ``-m slow``)
QUICK = ("digamma", "nextafter")


@pytest.mark.parametrize("name, dtype", [
    pytest.param(name, dtype, marks=[] if name in QUICK and dtype == "float64"
                 else [pytest.mark.slow]) for name in CALLED for dtype in ("float64", "float32")])
def test_a_called_row_gives_the_inlined_rows_values_bit_for_bit(name, dtype, monkeypatch,
                                                                  tmp_path, numba_cpu):
    operands = _operands(name, dtype)
    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(tmp_path / "called"))
    monkeypatch.setattr(cache, "_memory", {})
    with np.errstate(all="ignore"):
        called = _compute(name, operands)
    sources = [k.py_func.__code__.co_filename for k in cache._memory.values()]
    assert any(f"rows.{name}(" in open(s).read() for s in sources)

    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(tmp_path / "inlined"))
    monkeypatch.setattr(cache, "_memory", {})
    monkeypatch.setattr(rows, "call", lambda row: None)
    with np.errstate(all="ignore"):
        inlined = _compute(name, operands)
    sources = [k.py_func.__code__.co_filename for k in cache._memory.values()]
    assert not any("rows." in open(s).read() for s in sources)
    assert called.dtype == inlined.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(called.view(f"u{called.itemsize}"),
                                  inlined.view(f"u{inlined.itemsize}"))


def test_a_second_kernel_calling_a_row_compiles_only_itself(monkeypatch, tmp_path, numba_cpu):
    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_memory", {})
    a, x = ng.tensor(np.linspace(0.5, 5, 11)), ng.tensor(np.linspace(0.1, 6, 11))
    ng.gammainc(a, x).numpy()
    [row] = [k for key, k in cache._memory.items() if key[0] == "row"]
    assert len(row.overloads) == 1
    (ng.gammainc(a, x * 2.0) - 1.0).numpy()
    assert len(row.overloads) == 1  # (the row's code was compiled for the first kernel)
    kernels = [k for key, k in cache._memory.items() if key[0] != "row"]
    assert len(kernels) == 2 and all(len(k.overloads) == 1 for k in kernels)


def test_a_kernel_without_vector_math_has_one_cache_entry_for_both_math_libraries(
        monkeypatch):
    # (The cache file's name hashes the kernel's key, which names no math library, and
    # its source: the same source under both is one file.)
    def program(name: str) -> Program:
        return Program(code=(("in", 0), (name, 0)), dtypes=("float64", "float64"),
                       stores=(1,), in_dtypes=("float64",), arg_dtypes=())

    def render_under(vector: bool, name: str, variant=cpu.SERIAL) -> str:
        monkeypatch.setattr(cpu, "VECTOR_MATH", vector)  # False: NUMGRAD_MATH=libm
        monkeypatch.setattr(cpu, "VECTOR_EXPRS", cpu.vecmath.EXPRS if vector else {})
        cpu._calls_vecmath.cache_clear()  # (it remembers its answers per program)
        try:
            return cpu.render(program(name), variant)
        finally:
            cpu._calls_vecmath.cache_clear()

    assert "vm.exp(" in render_under(True, "exp")
    assert "vecmath" not in render_under(True, "exp", cpu.SCALAR)  # (one element: libm)
    assert "vecmath" not in render_under(True, "negative")
    assert render_under(False, "exp") != render_under(True, "exp")
    assert render_under(False, "negative") == render_under(True, "negative")  # (the same)
