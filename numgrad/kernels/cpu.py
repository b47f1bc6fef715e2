"""The CPU target: NumPy arrays as buffers (`numgrad.kernels.host`), Numba-compiled loops.

Kernels are ``numba.njit`` loops over the collapsed loop nest, serial or parallel
(``prange``) per launch, cached on disk (`numgrad.kernels.jit`).
"""

from __future__ import annotations

import functools
import math
import os
from typing import NamedTuple

#: Set where the environment does not say otherwise, before Numba loads OpenMP: its
#: threads otherwise spin after each parallel kernel, starving the BLAS threads of the
#: next matmul (and everything else on a 2-core machine). Other libraries in the
#: process share the OpenMP runtime, so this is their policy too.
OPENMP_DEFAULTS = {"OMP_WAIT_POLICY": "PASSIVE"}
os.environ.update({k: v for k, v in OPENMP_DEFAULTS.items() if k not in os.environ})

import numba  # noqa: E402 - after the OpenMP setting
import numpy as np  # noqa: E402

from numgrad.kernels import interpreter, jit, rows, vecmath, vector_width  # noqa: E402
from numgrad.kernels.codegen import MAX_LOOPS, Program, Skeleton  # noqa: E402
from numgrad.kernels.host import *  # noqa: E402, F403 - buffers and movements
from numgrad.ops import TABLE  # noqa: E402

#: ``NUMGRAD_MATH=libm`` calls libm for exp, log, sin, tanh, ... (scalar code); by default
#: kernels use `numgrad.kernels.vecmath`, branch-free code that LLVM vectorizes.
VECTOR_MATH = os.environ.get("NUMGRAD_MATH", "vector") != "libm"
#: this target's name in `numgrad.explain`
key = "cpu" if VECTOR_MATH else "cpu-libm"
#: the rows whose kernels call `vecmath` (none with libm), and how
VECTOR_EXPRS = vecmath.EXPRS if VECTOR_MATH else {}

#: Waking Numba's threads for a parallel launch costs about this many ns here: they
#: sleep between launches (``OMP_WAIT_POLICY=PASSIVE``, which numgrad sets so that they
#: leave the cores to BLAS). A launch runs a parallel kernel when the time its other
#: threads save (`work_ns` times (1 - 1/threads)) pays for it (see docs/design.md).
WAKE_NS = 150_000
#: Estimated cost per element, in ns: moving one byte, a libm call, a vectorized
#: function (`vecmath`), any other operation.
BYTE_NS, CALL_NS, VECTOR_NS, OP_NS = 0.1, 12.0, 3.0, 0.3
#: An innermost reduced loop at least this long folds into this many independent
#: accumulators (lanes), so that LLVM vectorizes it; the lanes are combined in order at
#: the end.
LANES, LANES_FROM = 16, 64


# ---- generated kernels ---------------------------------------------------------------

class Loops(NamedTuple):
    """A kernel's loop skeleton: `parallel` spreads work over threads; `lanes` folds
    the reduced loop into `LANES` accumulators; `scalar` (one element: nothing to
    vectorize) calls libm, whose functions compile several times faster than
    `vecmath`'s and give what a one-element value computed when recorded gets;
    `interpreted`, a nest deeper than `MAX_LOOPS`, runs on the NumPy interpreter."""

    parallel: bool = False
    lanes: bool = False
    scalar: bool = False
    interpreted: bool = False


SERIAL, PARALLEL, SCALAR = Loops(), Loops(parallel=True), Loops(scalar=True)
INTERPRETED = Loops(interpreted=True)


def work_ns(program: Program, shape: tuple[int, ...]) -> float:
    """The estimated serial time of `program` over `shape`: bytes moved plus operations,
    vectorized functions and libm calls (``math.*`` in the row's expression) priced
    apart."""
    return _element_ns(program) * math.prod(shape)


@functools.lru_cache(maxsize=4096)
def _element_ns(program: Program) -> float:
    ns = 0.0
    for (name, *_), dtype in zip(program.code, program.dtypes):
        if name in ("in", "gather"):
            ns += BYTE_NS * np.dtype(dtype).itemsize
        elif name in VECTOR_EXPRS:
            ns += VECTOR_NS
        elif name not in ("arg", "cast"):
            ns += CALL_NS if "math." in TABLE[name].expr else OP_NS
    return ns + sum(BYTE_NS * np.dtype(program.dtypes[p]).itemsize for p in program.stores)


@functools.lru_cache(maxsize=4096)
def _calls_vecmath(program: Program) -> bool:
    return any(name in VECTOR_EXPRS for name, *_ in program.code + program.epilogue)


def variant(program: Program, shape: tuple[int, ...]) -> Loops:
    """Parallel when the launch's estimated work (`work_ns`) pays for the threads,
    lanes for a long innermost reduced loop, libm for one element."""
    if len(shape) > MAX_LOOPS:
        return INTERPRETED
    if math.prod(shape) == 1 and _calls_vecmath(program):
        return SCALAR  # (without vecmath calls, the serial kernel is the same code)
    threads = numba.get_num_threads()
    parallel = threads > 1 and work_ns(program, shape) * (1 - 1 / threads) >= WAKE_NS
    lanes = bool(program.reduce) and not program.reduce_outer and shape[-1] >= LANES_FROM
    return Loops(parallel, lanes)


def kernel(program: Program, variant: Loops):
    if variant.interpreted:
        return interpreter.kernel(program, interpreter.ARRAYS)
    # (No math library in the key: a process has one, and the cache file's name hashes
    # the source too, so a kernel that calls no vector math, the same source under
    # NUMGRAD_MATH=libm, has one file for both.)
    return jit.kernel((program, variant, "cpu", vector_width.BITS),
                      lambda: render(program, variant))


def launch(kernel, variant: Loops, outs, shape, inputs, args) -> str:
    if variant.interpreted:
        return interpreter.launch(kernel, interpreter.ARRAYS, outs, shape, inputs, args)

    def call() -> None:
        with vector_width.wide:  # (if it compiles now)
            kernel(*outs, shape, threads(variant), *inputs, *args)
    return jit.launch(kernel, call, compile_state, kernel.py_func.__code__.co_filename)


def threads(variant: Loops) -> int:
    """The `threads` argument of a kernel of `variant` (serial kernels ignore it)."""
    return numba.get_num_threads() if variant.parallel else 1


def compile_state(kernel) -> tuple[int, int]:
    """How many signatures `kernel` has compiled, and how many it loaded from disk."""
    return len(kernel.overloads), sum(kernel.stats.cache_hits.values())


def render(program: Program, variant: Loops = SERIAL, name: str = "kernel") -> str:
    """The source of a module defining `name`, the compiled kernel of `program`.

    The kernel's signature is ``name([red,] out0, ..., shape, threads, in0, ...,
    tab0, ..., arg0, ...)``: `shape` is the loop nest (kept dimensions, then reduced
    ones) and every input is a view spanning it (stride 0 where it does not vary).
    A parallel kernel spreads its outer loop over `threads` (an argument, because
    a kernel that asks Numba for it cannot be cached); a reduction with few outputs
    is cut into chunks reduced in parallel.
    """
    parallel = variant.parallel
    vector = VECTOR_MATH and not variant.scalar and _calls_vecmath(program)
    calls = {name: call for name, *_ in program.code + program.epilogue
             if name in TABLE and (call := rows.call(name))}
    outs, ins, args = Skeleton.parameters(program)
    lines = [
        "import math",
        "import numba",
        "import numpy as np",
        *([vecmath.HEADER] if vector else []),
        *([rows.HEADER] if calls else []),
        "",
        "",
        f"@numba.njit(cache=True, error_model='numpy', parallel={parallel}, "
        "no_cfunc_wrapper=True)",
        f"def {name}({', '.join([*outs, 'shape', 'threads', *ins, *args])}):",
    ]
    loops = _Loops(program, lines, variant.lanes, {**(VECTOR_EXPRS if vector else {}), **calls})
    loops.hoist()
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
            self.shifted(d + 1, (d,))  # (out of the inner loops: they vectorize)
        self.body(self.k, shifted=True)

    def __init__(self, program: Program, lines: list[str], lanes: bool, exprs: dict):
        super().__init__(program, lines)
        self.lanes, self.exprs = lanes, exprs

    def fold(self, depth: int, start: str, stop: str) -> None:
        """The reduced loops (the first from `start` to `stop`) folding the code into
        ``acc``; with lanes, element ``i`` of the innermost folds into
        ``accs[i % LANES]``."""
        k, last = self.k, self.k + self.r - 1
        self.line(depth, f"{'accs = np.full(' + str(LANES) + ', ' if self.lanes else 'acc = '}"
                         f"{self.identity}{')' if self.lanes else ''}")
        for d in range(k, last + (not self.lanes)):
            bounds = f"{start}, {stop}" if d == k else f"shape[{d}]"
            self.line(depth + d - k, f"for i{d} in range({bounds}):")
        inner = depth + last - k
        if not self.lanes:
            self.body(inner + 1)
            self.fold_in(inner + 1, f"v{self.p.folded}")
            return
        low, high = (start, stop) if last == k else ("0", f"shape[{last}]")
        self.line(inner, f"for base in range({low}, {high}, {LANES}):")
        self.line(inner + 1, f"for lane in range(min({LANES}, {high} - base)):")
        # (unsigned: Numba wraps a negative signed index around, and LLVM, unable to rule
        # that out where the loop starts at a computed index, vectorizes its loads and
        # stores as gathers and scatters, or not at all: 3-5x slower)
        self.line(inner + 2, f"i{last} = numba.uint64(base + lane)")
        self.line(inner + 2, "acc = accs[lane]")
        self.body(inner + 2)
        self.fold_in(inner + 2, f"v{self.p.folded}")
        self.line(inner + 2, "accs[lane] = acc")
        self.line(depth, f"acc = {self.identity}")
        self.line(depth, f"for lane in range({LANES}):")
        self.fold_in(depth + 1, "accs[lane]")

    def serial_reduction(self) -> None:
        for d in range(self.k):
            self.line(d, f"for i{d} in range(shape[{d}]):")
        self.fold(self.k, "0", f"shape[{self.k}]")
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
        self.line(depth, "for i0 in range(numba.uint64(c * shape[0] // chunks), "
                         "numba.uint64((c + 1) * shape[0] // chunks)):")  # (unsigned: `fold`)
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
        self.fold(k, f"c * shape[{k}] // chunks", f"(c + 1) * shape[{k}] // chunks")
        self.line(k, f"partial[task{inner}] = acc")
        self.line(0, "for i0 in numba.prange(shape[0]):")
        for d in range(1, k):
            self.line(d, f"for i{d} in range(shape[{d}]):")
        self.line(k, f"acc = {self.identity}")
        self.line(k, "for c in range(chunks):")
        self.fold_in(k + 1, f"partial[i0 * chunks + c{inner}]")
        self.finish(k)
