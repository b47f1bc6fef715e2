"""The CPU target: NumPy arrays as buffers (`numgrad.kernels.host`), Numba-compiled loops.

Kernels are ``numba.njit`` loops over the collapsed loop nest, serial or parallel
(``prange``) per launch, cached on disk (`numgrad.kernels.jit`).
"""

from __future__ import annotations

import math
import os

# Numba's OpenMP threads otherwise spin after each parallel kernel, starving the
# BLAS threads of the next matmul (and everything else on a 2-core machine).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402 - after the OpenMP setting

from numgrad.kernels import jit  # noqa: E402
from numgrad.kernels.codegen import Program, Skeleton  # noqa: E402
from numgrad.kernels.host import *  # noqa: E402, F403 - buffers and movements

#: this target in kernel cache keys
key = "cpu"

#: Launches over at least this many elements use a parallel kernel. Below it the
#: thread start-up costs more than it saves on 2 cores (see docs/design.md), and
#: parallel kernels compile several times slower.
PARALLEL_THRESHOLD = 1 << 20


# ---- generated kernels ---------------------------------------------------------------

SERIAL, PARALLEL = "serial", "parallel"


def variant(program: Program, shape: tuple[int, ...]) -> str:
    """`PARALLEL` for large launches, else `SERIAL` (parallel kernels start threads
    and compile several times slower)."""
    return PARALLEL if math.prod(shape) >= PARALLEL_THRESHOLD else SERIAL


def kernel(program: Program, variant: str):
    return jit.kernel((program, variant, key), lambda: render(program, variant))


def launch(kernel, variant: str, outs, shape, inputs, args) -> str:
    return jit.launch(
        kernel, lambda: kernel(*outs, shape, numba.get_num_threads(), *inputs, *args),
        _compile_state, kernel.py_func.__code__.co_filename)


def _compile_state(kernel) -> tuple[int, int]:
    """How many signatures `kernel` has compiled, and how many it loaded from disk."""
    return len(kernel.overloads), sum(kernel.stats.cache_hits.values())


def render(program: Program, variant: str = SERIAL, name: str = "kernel") -> str:
    """The source of a module defining `name`, the compiled kernel of `program`.

    The kernel's signature is ``name([red,] out0, ..., shape, threads, in0, ...,
    tab0, ..., arg0, ...)``: `shape` is the loop nest (kept dimensions, then reduced
    ones) and every input is a view spanning it (stride 0 where it does not vary).
    A `PARALLEL` kernel spreads its outer loop over `threads` (an argument, because
    a kernel that asks Numba for it cannot be cached); a reduction with few outputs
    is cut into chunks reduced in parallel.
    """
    parallel = variant == PARALLEL
    outs, ins, args = Skeleton.parameters(program)
    lines = [
        "import math",
        "import numba",
        "import numpy as np",
        "",
        "",
        f"@numba.njit(cache=True, error_model='numpy', parallel={parallel})",
        f"def {name}({', '.join([*outs, 'shape', 'threads', *ins, *args])}):",
    ]
    loops = _Loops(program, lines)
    if not program.reduce:
        loops.elementwise(parallel)
    elif program.reduce_outer:
        loops.outer_reduction(parallel)
    elif parallel:
        loops.parallel_reduction()
    else:
        loops.serial_reduction()
    return "\n".join(lines) + "\n"


class _Loops(Skeleton):
    """Numba loops: ``range`` or ``numba.prange`` nests over `shape`."""

    def elementwise(self, parallel: bool) -> None:
        for d in range(self.k):
            loop = "numba.prange" if parallel and d == 0 else "range"
            self.line(d, f"for i{d} in {loop}(shape[{d}]):")
        self.body(self.k)

    def fold(self, depth: int, first: str) -> None:
        """Reduced loops (the first over `first`) folding the code into ``acc``."""
        self.line(depth, f"acc = {self.identity}")
        for d in range(self.k, self.k + self.r):
            loop = first if d == self.k else f"range(shape[{d}])"
            self.line(depth + d - self.k, f"for i{d} in {loop}:")
        self.body(depth + self.r)
        self.fold_in(depth + self.r, f"v{self.p.folded}")

    def serial_reduction(self) -> None:
        for d in range(self.k):
            self.line(d, f"for i{d} in range(shape[{d}]):")
        self.fold(self.k, f"range(shape[{self.k}])")
        self.finish(self.k)

    def outer_reduction(self, parallel: bool) -> None:
        # Accumulators for a block of outputs live in an array; the reduced loops
        # run outside, so the innermost loop walks the data contiguously. In
        # parallel, threads take chunks of the first kept dimension.
        k, kept_shape = self.k, ", ".join(f"shape[{d}]" for d in range(self.k))
        self.line(0, f"accs = np.full(({kept_shape},), {self.identity}, {self.acc})")
        self.line(0, f"chunks = max(1, min(shape[0], {'threads' if parallel else '1'}))")
        self.line(0, f"for c in {'numba.prange' if parallel else 'range'}(chunks):")
        for d in range(k, k + self.r):
            self.line(1 + d - k, f"for i{d} in range(shape[{d}]):")
        depth = 1 + self.r
        self.line(depth, "for i0 in range(c * shape[0] // chunks, (c + 1) * shape[0] // chunks):")
        for d in range(1, k):
            self.line(depth + d, f"for i{d} in range(shape[{d}]):")
        self.line(depth + k, f"acc = accs[{self.kept_index}]")
        self.body(depth + k)
        self.fold_in(depth + k, f"v{self.p.folded}")
        self.line(depth + k, f"accs[{self.kept_index}] = acc")
        for d in range(k):
            loop = "numba.prange" if parallel and d == 0 else "range"
            self.line(d, f"for i{d} in {loop}(shape[{d}]):")
        self.line(k, f"acc = accs[{self.kept_index}]")
        self.finish(k)

    def parallel_reduction(self) -> None:
        # Tasks are (first kept index, chunk of the first reduced loop): many rows
        # give one chunk per row, one row (a full reduction) gives many chunks.
        # Partial results are combined in order, then the epilogue runs.
        k = self.k
        rest = "".join(f", shape[{d}]" for d in range(1, k))
        inner = "".join(f", i{d}" for d in range(1, k))
        self.line(0, f"chunks = max(1, min(shape[{k}], 8 * threads // shape[0]))")
        self.line(0, f"partial = np.empty((shape[0] * chunks{rest}), {self.acc})")
        self.line(0, "for task in numba.prange(shape[0] * chunks):")
        self.line(1, "i0, c = task // chunks, task % chunks")
        for d in range(1, k):
            self.line(d, f"for i{d} in range(shape[{d}]):")
        self.fold(k, f"range(c * shape[{k}] // chunks, (c + 1) * shape[{k}] // chunks)")
        self.line(k, f"partial[task{inner}] = acc")
        self.line(0, "for i0 in numba.prange(shape[0]):")
        for d in range(1, k):
            self.line(d, f"for i{d} in range(shape[{d}]):")
        self.line(k, f"acc = {self.identity}")
        self.line(k, "for c in range(chunks):")
        self.fold_in(k + 1, f"partial[i0 * chunks + c{inner}]")
        self.finish(k)
