"""The vector math of the generated CPU kernels (`numgrad.kernels.vecmath`): accuracy on a
sample (the full table is ``python tools/ulp_table.py``), NumPy's special values, loops that
LLVM vectorizes, and use from a generated, disk-cached kernel module."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

import numgrad as ng
from numgrad.kernels import cache, vector_width
from numgrad.kernels import vecmath as vm

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import ulp_table  # noqa: E402

NAMES = list(vm.IMPLEMENTATIONS["float64"])  # (EXPRS has cbrt too: estimated by these)
DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_within_3_ulp_of_a_wider_reference(name, dtype):
    # 20000 points over the whole domain (ulp_table.samples), against NumPy in long double
    # (float64) or float64 (float32); where the reference is not finite, NumPy's value exactly.
    errors, special_mismatches = ulp_table.ulp_errors(
        name, ulp_table.samples(name, dtype, 20000, seed=1))
    assert errors.size > 10000
    assert errors.max() <= 3.0
    assert special_mismatches == 0


def _boundaries(dtype) -> list[float]:
    """x where exp(x) overflows or underflows to 0 (rounded), and the normal range's end."""
    info, wide = np.finfo(dtype), np.longdouble
    points = [np.log(wide(info.max)), np.log(wide(info.smallest_subnormal) / 2),
              np.log(wide(info.smallest_normal))]
    return [float(x) for p in points for x in _neighbours(dtype(p))]


def _neighbours(x) -> list:
    up, down = np.nextafter(x, np.inf), np.nextafter(x, -np.inf)
    return [x, up, down, np.nextafter(up, np.inf), np.nextafter(down, -np.inf)]


def _special_points(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    base = [0.0, info.smallest_subnormal, 3 * info.smallest_subnormal,
            info.smallest_normal - info.smallest_subnormal, info.smallest_normal, info.eps,
            0.5, 1.0, 2.0, 1e4, 2.0**60, info.max, np.inf, *_boundaries(dtype)]
    points = np.array(base, dtype)
    return np.concatenate([points, -points, [np.nan]]).astype(dtype)


def _same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Equal including the sign of zero, or both nan."""
    width = f"u{a.itemsize}"
    return (a.view(width) == b.view(width)) | (np.isnan(a) & np.isnan(b))


def _exact_in_numpy(x: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Where NumPy's value is exact by definition: special inputs (zeros, infinities, nan,
    subnormals) or special results (zeros, infinities, nan, +-1)."""
    tiny = np.finfo(x.dtype).smallest_normal
    return (~np.isfinite(x) | (np.abs(x) < tiny) | ~np.isfinite(expected) | (expected == 0)
            | (np.abs(expected) == 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [n for n in NAMES if n != "power"])
def test_special_values_as_numpy(name, dtype):
    x = _special_points(dtype)
    got = ulp_table.ours(name, (x,))
    with np.errstate(all="ignore"):
        expected = ulp_table.REFERENCES[name][0](x)
    exact = _exact_in_numpy(x, expected)
    assert exact.sum() >= 10
    mismatches = [(v, g, e) for v, g, e in zip(x[exact], got[exact], expected[exact])
                  if not _same_bits(np.array([g]), np.array([e]))[0]]
    assert mismatches == []
    # the rest (near the overflow and underflow boundaries): finite where NumPy's is
    assert np.array_equal(np.isfinite(got), np.isfinite(expected))


@pytest.mark.parametrize("dtype", DTYPES)
def test_power_special_cases_as_numpy(dtype):
    info = np.finfo(dtype)
    xs = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, np.inf, -np.inf, np.nan,
          info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max]
    ys = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, 2.5, -2.5, np.inf, -np.inf,
          np.nan, 2.0**60, -(2.0**60), 1e30, -1e30, 1001.0, -1001.0]
    x, y = (a.ravel().astype(dtype) for a in np.meshgrid(xs, ys))
    got = ulp_table.ours("power", (x, y))
    with np.errstate(all="ignore"):
        expected = np.power(x, y)
    exact = ~np.isfinite(expected) | (expected == 0) | (np.abs(expected) == 1)
    assert exact.sum() > 150
    assert _same_bits(got[exact], expected[exact]).all()
    assert np.array_equal(np.isfinite(got), np.isfinite(expected))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_loops_vectorize(name, dtype):
    # The loop of out[i] = f(a[i]) has float vector instructions in its LLVM IR (x86-64
    # has at least SSE2: 2 doubles, 4 floats per vector; AVX-512 gives 8 and 16).
    args = ulp_table.samples(name, dtype, 64)
    out = np.empty_like(args[0])
    f = vm.IMPLEMENTATIONS[np.dtype(dtype).name][name]
    loop = ulp_table.run(f, args, out)
    width = ulp_table._widest_vector(loop, f, *args, out)
    assert width != "scalar" and int(width) >= (2 if dtype == np.float64 else 4)


def test_numba_dispatch_on_types():
    @numba.njit
    def apply(x, y):
        return vm.exp(x), vm.power(x, y)

    e32, p32 = apply(np.float32(1.5), np.float32(2.5))
    assert numba.typeof(e32) == numba.float32 or isinstance(e32, float)
    assert e32 == vm.IMPLEMENTATIONS["float32"]["exp"](np.float32(1.5))
    assert p32 == vm.IMPLEMENTATIONS["float32"]["power"](np.float32(1.5), np.float32(2.5))
    e64, p64 = apply(2, 0.5)  # an integer argument runs the float64 code
    assert e64 == vm.IMPLEMENTATIONS["float64"]["exp"](2.0)
    assert abs(p64 - np.sqrt(2)) <= 2.3e-16
    assert apply(3, 4)[1] == 81  # integer power stays integer, as x ** y


def test_python_scalars():
    assert vm.sin(1e300) == pytest.approx(np.sin(1e300), rel=4.5e-16)
    assert np.signbit(vm.log1p(-0.0)) and vm.tanh(np.float32(-20)) == -1
    assert np.isnan(vm.log(-1.0)) and vm.log(0.0) == -np.inf


_MODULE = '''
import math
import numba
import numpy as np
{header}


@numba.njit(cache=True, error_model='numpy')
def kernel(out, in0, in1):
    for i0 in range(in0.shape[0]):
        x, y = in0[i0], in1[i0]
        out[i0] = {body}
'''


@pytest.mark.slow
def test_generated_module_with_disk_cache(tmp_path):
    # A kernel module as the CPU target writes it (HEADER, EXPRS, cache=True) compiles,
    # gives the functions' values for both dtypes, and loads from Numba's disk cache in a
    # second process.
    body = " + ".join(vm.EXPRS[n] for n in NAMES)
    (tmp_path / "generated_kernel.py").write_text(_MODULE.format(header=vm.HEADER, body=body))
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import generated_kernel as g
        for dtype in (np.float64, np.float32):
            a = np.linspace(0.1, 3, 50).astype(dtype)
            out = np.empty_like(a)
            g.kernel(out, a, a[::-1].copy())
            np.save(f"out_{np.dtype(dtype).name}.npy", out)
        print(sum(g.kernel.stats.cache_hits.values()))
    """)
    runs = [subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                           text=True, check=True) for _ in range(2)]
    assert [r.stdout.strip() for r in runs] == ["0", "2"]
    for dtype in DTYPES:
        a = np.linspace(0.1, 3, 50).astype(dtype)
        b = a[::-1].copy()
        expected = sum(ulp_table.ours(n, (a, b) if n == "power" else (a,)) for n in NAMES)
        got = np.load(tmp_path / f"out_{np.dtype(dtype).name}.npy")
        assert got.dtype == dtype
        np.testing.assert_allclose(got, expected, rtol=8 * np.finfo(dtype).eps)


def _exp_loop():
    @numba.njit
    def loop(out, x):
        for i in range(x.shape[0]):
            out[i] = vm.exp(x[i])
    return loop


def _attributes(dispatcher) -> str:
    """The LLVM attributes of `dispatcher`'s own compiled function (not of what it links)."""
    [(ir, compiled)] = zip(dispatcher.inspect_llvm().values(), dispatcher.overloads.values())
    name = re.escape(compiled.fndesc.mangled_name)
    group = re.search(rf"^define .*@{name}\(.*#(\d+)", ir, re.MULTILINE)[1]
    return re.search(rf"^attributes #{group} = (.*)$", ir, re.MULTILINE)[1]


def test_what_numba_compiles_inside_wide_prefers_the_width_of_the_cpu():
    # Inside `wide`, functions carry LLVM's preferred width of 512 bits where the CPU has
    # AVX-512 (8 float64 lanes: zmm registers); outside it, Numba code is left to LLVM's
    # own choice for the CPU (256 bits on Intel's AVX-512 cores, 512 on AMD's Zen 4).
    x = np.linspace(-5, 5, 64)
    inside, outside = _exp_loop(), _exp_loop()
    with vector_width.wide:
        inside(np.empty_like(x), x)
    outside(np.empty_like(x), x)
    assert (vector_width.ATTRIBUTE in _attributes(inside)) == (vector_width.BITS == 512)
    assert vector_width.ATTRIBUTE not in _attributes(outside)
    [asm_inside] = inside.inspect_asm().values()
    assert ("%zmm" in asm_inside) == (vector_width.BITS == 512)


def test_a_generated_kernel_is_compiled_wide(monkeypatch, tmp_path, numba_cpu):
    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_memory", {})  # compiled here, not loaded
    x = ng.tensor(np.linspace(-3, 3, 1000))
    np.testing.assert_allclose(ng.exp(x * 0.5).numpy(), np.exp(np.linspace(-3, 3, 1000) * 0.5),
                               rtol=1e-15)  # (within 3 ulp, as the ulp table)
    [kernel] = cache._memory.values()
    assert (vector_width.ATTRIBUTE in _attributes(kernel)) == (vector_width.BITS == 512)


@pytest.mark.parametrize("reduction", ["lanes", "outer"])
def test_reduction_loops_vectorize_without_gathers(reduction, monkeypatch, tmp_path, numba_cpu):
    # A reduction folded into lanes (with an elementwise output beside it) and one over
    # the outer dimension (a column sum): their loops vectorize, with plain vector loads
    # and stores. (Signed loop indices, which Numba wraps around when negative, gave
    # gathers and scatters in the first and no vector code in the second.)
    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_memory", {})  # compiled here, so its IR can be read
    if reduction == "lanes":
        y = ng.linspace(-2, 2, 1000) * 1.5 + 0.5
        ng.realize(y, y.sum())
    else:
        ng.realize((ng.linspace(-2, 2, 3000, dtype=ng.float32).reshape(300, 10) * 2).sum(0))
    [kernel] = cache._memory.values()
    ir = "\n".join(kernel.inspect_llvm().values())
    assert not re.search(r"masked\.(gather|scatter)", ir)
    assert re.search(r"fadd (fast )?<\d+ x (double|float)>", ir)


@pytest.mark.parametrize("mode", ["numba", "tiered"])
def test_an_unknown_vector_width_is_an_error_naming_the_choices(mode):
    # (tiered: the first launch is interpreted while the background thread fails to
    # import the CPU target; the next launch raises what it met)
    env = dict(os.environ, NUMGRAD_VECTOR_BITS="1024", NUMGRAD_CPU_KERNELS=mode)
    program = ("import numgrad as ng; from numgrad.kernels import tiered\n"
               "x = ng.linspace(0, 1, 1000)\n"
               "(x.exp() * x).sum().item(); tiered.wait(); (x.exp() * x).sum().item()")
    result = subprocess.run([sys.executable, "-c", program],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "ValueError: NUMGRAD_VECTOR_BITS='1024'; expected '512'" in result.stderr
    assert "'256'" in result.stderr
