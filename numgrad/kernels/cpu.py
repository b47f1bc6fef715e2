"""The CPU target: NumPy arrays as buffers, Numba-compiled loops, NumPy's BLAS for matmul.

Every function here takes and returns arrays of this target; the engine finds them
by the primitive's name (``reshape``, ``matmul``, ...), so a target is one module.
"""

from __future__ import annotations

import math
import os

# Numba's OpenMP threads otherwise spin after each parallel kernel, starving the
# BLAS threads of the next matmul (and everything else on a 2-core machine).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402 - after the OpenMP setting
import numpy as np  # noqa: E402

from numgrad.kernels.codegen import Program, Skeleton  # noqa: E402

name = "cpu"
#: the target in kernel cache keys
target = "cpu"

#: Launches over at least this many elements use a parallel kernel. Below it the
#: thread start-up costs more than it saves on 2 cores (see docs/design.md), and
#: parallel kernels compile several times slower.
PARALLEL_THRESHOLD = 1 << 20


def empty(shape, dtype) -> np.ndarray:
    return np.empty(shape, dtype)


def full(shape, value, dtype) -> np.ndarray:
    """A read-only array of `shape` holding `value`: one element, broadcast."""
    return np.broadcast_to(np.array(value, dtype), shape)


def from_numpy(array: np.ndarray) -> np.ndarray:
    """A private copy of `array`; the caller may mutate theirs afterwards."""
    return np.array(array, copy=True, order="C")


def to_numpy(array: np.ndarray) -> np.ndarray:
    return np.array(array, copy=True)


def strides(array: np.ndarray) -> tuple[int, ...]:
    return array.strides


def as_strided(array: np.ndarray, shape, strides, writeable: bool = False) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(array, shape, strides, writeable=writeable)


def is_view(array: np.ndarray) -> bool:
    """Whether `array` shares another array's memory (it allocated nothing)."""
    return array.base is not None


def copy(array, source) -> np.ndarray:
    """`array`, a buffer of device `source`, copied here."""
    return source.backend.to_numpy(array)


# ---- generated kernels ---------------------------------------------------------------

def variant(program: Program, shape: tuple[int, ...]) -> bool:
    """Whether a launch over `shape` runs the parallel kernel (large launches only:
    parallel kernels compile several times slower)."""
    return math.prod(shape) >= PARALLEL_THRESHOLD


def launch(kernel, parallel: bool, outs, shape, inputs, args) -> None:
    kernel(*outs, shape, numba.get_num_threads(), *inputs, *args)


def compile_state(kernel) -> tuple[int, int]:
    """How many signatures `kernel` has compiled, and how many it loaded from disk."""
    return len(kernel.overloads), sum(kernel.stats.cache_hits.values())


def source_file(kernel) -> str:
    """The module file `kernel` was compiled from."""
    return kernel.py_func.__code__.co_filename


def render(program: Program, parallel: bool = False, name: str = "kernel") -> str:
    """The source of a module defining `name`, the compiled kernel of `program`.

    The kernel's signature is ``name([red,] out0, ..., shape, threads, in0, ...,
    tab0, ..., arg0, ...)``: `shape` is the loop nest (kept dimensions, then reduced
    ones) and every input is a view spanning it (stride 0 where it does not vary).
    A `parallel` kernel spreads its outer loop over `threads` (an argument, because
    a kernel that asks Numba for it cannot be cached); a reduction with few outputs
    is cut into chunks reduced in parallel.
    """
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


# ---- movement and hand-written kernels, by primitive name ------------------------

def reshape(array, shape):
    return array.reshape(shape)


def permute(array, axes):
    return array.transpose(axes)


def expand(array, shape):
    return np.broadcast_to(array, shape)


def index(array, key):
    return array[key]


def index_add(array, arg):
    """Zeros of ``arg[1]``'s shape with `array` added at ``arg[0]`` (repeats add up)."""
    key, shape = arg
    out = np.zeros(shape, array.dtype)
    np.add.at(out, key, array)
    return out


def index_put(array, values, key):
    out = array.copy()
    out[key] = values
    return out


def concatenate(*arrays_and_axis):
    *arrays, axis = arrays_and_axis
    return np.concatenate(arrays, axis=axis)


def matmul(a, b, arg=None):
    return np.matmul(a, b)


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
