"""Generated kernels: their loop skeletons (the variants), source and cached dispatchers."""

from __future__ import annotations

from dataclasses import dataclass

from numgrad.kernels import jit
from numgrad.kernels.codegen import Program, Skeleton
from numgrad.kernels.cuda.device import key


@dataclass(frozen=True)
class Elementwise:
    """A thread per element of the loop nest (a grid-stride loop)."""


@dataclass(frozen=True)
class Rows:
    """A reduction with a thread per output, folding its row alone."""


@dataclass(frozen=True)
class Blocks:
    """A reduction with blocks of threads per output: each folds a chunk into shared
    memory of `width` slots (its most threads), as `acc` (the accumulator's dtype)."""

    acc: str
    width: int


ELEMENTWISE, ROWS = Elementwise(), Rows()
Variant = Elementwise | Rows | Blocks


def kernel(program: Program, variant: Variant):
    """The ``cuda.jit`` dispatcher of `program` in `variant`, cached on disk."""
    return jit.kernel((program, variant, key), lambda: render(program, variant))


def render(program: Program, variant: Variant = ELEMENTWISE, name: str = "kernel") -> str:
    """The source of a module defining `name`, the ``cuda.jit`` kernel of `program`.

    Its signature is ``name([red,] out0, ..., shape, [chunks, partial, counter,]
    in0, ..., tab0, ..., arg0, ...)`` (the bracketed three for `Blocks`), as on the
    CPU without ``threads``. Threads walk the loop nest by a grid-stride loop over its
    flat index.
    """
    outs, ins, args = Skeleton.parameters(program)
    extra = ["chunks", "partial", "counter"] if isinstance(variant, Blocks) else []
    lines = [
        "import math",
        "import numba",
        "import numpy as np",
        "from numba import cuda",
        "",
        "",
        "@cuda.jit(cache=True)",
        f"def {name}({', '.join([*outs, 'shape', *extra, *ins, *args])}):",
    ]
    grid = _Grid(program, lines)
    if isinstance(variant, Elementwise):
        grid.elementwise()
    elif isinstance(variant, Rows):
        grid.rows()
    else:
        grid.blocks(variant.width)
    return "\n".join(lines) + "\n"


class _Grid(Skeleton):
    """``cuda.jit`` skeletons: grid-stride loops, and block reductions through
    shared memory whose last block to finish combines the partial results."""

    exprs = {"floor": "math.floor(x)", "ceil": "math.ceil(x)", "rint": "round(x, 0)",
             "trunc": "math.floor(x) if x >= 0 else math.ceil(x)"}

    @staticmethod
    def product(lo: int, hi: int) -> str:
        return " * ".join(f"shape[{d}]" for d in range(lo, hi))

    def unravel(self, depth: int, flat: str, lo: int, hi: int) -> None:
        """``i{lo}, ..., i{hi-1}`` from the C-order index `flat` over ``shape[lo:hi]``."""
        if hi - lo == 1:
            self.line(depth, f"i{lo} = {flat}")
            return
        self.line(depth, f"rest = {flat}")
        for d in range(hi - 1, lo, -1):
            self.line(depth, f"i{d} = rest % shape[{d}]")
            self.line(depth, f"rest //= shape[{d}]")
        self.line(depth, f"i{lo} = rest")

    def grid_stride(self, total: str) -> None:
        self.line(0, f"total = {total}")
        self.line(0, "n = cuda.grid(1)")
        self.line(0, "while n < total:")

    def elementwise(self) -> None:
        self.grid_stride(self.product(0, self.k))
        self.unravel(1, "n", 0, self.k)
        self.body(1)
        self.line(1, "n += cuda.gridsize(1)")

    def rows(self) -> None:
        self.grid_stride(self.product(0, self.k))
        self.unravel(1, "n", 0, self.k)
        self.line(1, f"acc = {self.identity}")
        for d in range(self.k, self.k + self.r):
            self.line(1 + d - self.k, f"for i{d} in range(shape[{d}]):")
        self.body(1 + self.r)
        self.fold_in(1 + self.r, f"v{self.p.folded}")
        self.finish(1)
        self.line(1, "n += cuda.gridsize(1)")

    def blocks(self, width: int) -> None:
        # Task = (output row, chunk of its reduced elements). A block folds its
        # chunk with all its threads, halves the partial results down to one in
        # shared memory, and stores it; the last block of a row to finish (an
        # atomic count) combines the row's partials in order and runs the epilogue.
        k, r = self.k, self.r
        self.line(0, f"accs = cuda.shared.array({width}, {self.acc})")
        self.line(0, "t = cuda.threadIdx.x")
        self.line(0, "width = cuda.blockDim.x")
        self.line(0, f"rows = {self.product(0, k)}")
        self.line(0, f"size = {self.product(k, k + r)}")
        self.line(0, "task = cuda.blockIdx.x")
        self.line(0, "while task < rows * chunks:")
        self.line(1, "row = task // chunks")
        self.unravel(1, "row", 0, k)
        self.line(1, f"acc = {self.identity}")
        self.line(1, "m = (task - row * chunks) * size // chunks + t")
        self.line(1, "end = (task - row * chunks + 1) * size // chunks")
        self.line(1, "while m < end:")
        self.unravel(2, "m", k, k + r)
        self.body(2)
        self.fold_in(2, f"v{self.p.folded}")
        self.line(2, "m += width")
        self.line(1, "accs[t] = acc")
        self.line(1, "cuda.syncthreads()")
        self.line(1, "half = width // 2")
        self.line(1, "while half > 0:")
        self.line(2, "if t < half:")
        self.line(3, "acc = accs[t]")
        self.fold_in(3, "accs[t + half]")
        self.line(3, "accs[t] = acc")
        self.line(2, "cuda.syncthreads()")
        self.line(2, "half //= 2")
        self.line(1, "if t == 0:")
        self.line(2, "partial[task] = accs[0]")
        self.line(2, "cuda.threadfence()")
        self.line(2, "if cuda.atomic.add(counter, row, 1) == chunks - 1:")
        self.line(3, "counter[row] = 0")
        self.line(3, f"acc = {self.identity}")
        self.line(3, "for j in range(chunks):")
        self.fold_in(4, "partial[row * chunks + j]")
        self.finish(3)
        self.line(1, "cuda.syncthreads()")
        self.line(1, "task += cuda.gridDim.x")
