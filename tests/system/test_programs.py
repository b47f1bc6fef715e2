"""The real programs of the benchmark suite (``asv_benchmarks/benchmarks/programs.py``,
issue 38): on numgrad each gives HIPS autograd's value and gradient, and gives the
same bits at every call (the first records, later ones replay step plans) and under
``ng.jit`` (a traced plan) as eagerly.

Tolerance against autograd: 1e-10 relative to the largest magnitude (float64 through
up to a few hundred steps of exp, log and tanh: numgrad's vectorized functions and
NumPy's differ by an ulp or two per call, and a recursion carries that along). Every
program compiles kernels of its own, and ``ng.jit`` fuses its step into more, so the
file is marked slow (`.ci/run` runs it compiled in its first track).
"""

import numpy as np
import pytest

from numgrad.__main__ import bench_module

bench_module()  # (the checkout's asv_benchmarks on sys.path)
from benchmarks.programs import PROGRAMS, gradient  # noqa: E402

pytestmark = pytest.mark.slow
RTOL = 1e-10


def _close(got, want):
    scale = max(np.abs(want).max(initial=0.0), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=RTOL * scale)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_each_program_is_autograds_and_the_same_at_every_call_and_under_jit(name):
    value, grad = gradient("autograd", name)()
    eager = gradient("numgrad", name)
    first = eager()
    _close(first[0], value)
    _close(first[1], grad)
    for _ in range(4):  # (the second call keeps a step plan, later ones replay it)
        again = eager()
        assert again[0] == first[0] and np.array_equal(again[1], first[1])
    jitted = gradient("numgrad-jit", name)
    for _ in range(3):  # (traced, then replayed)
        v, g = jitted()
        assert v == first[0] and np.array_equal(g, first[1])
