"""The CUDA target: device buffers, ``numba.cuda`` kernels and a buffer pool.

Every ``numba.cuda`` detail of numgrad lives in this module (numba-cuda is in
maintenance; its successor can replace it here). Buffers are Numba device
arrays and stay on the device between kernels; only `to_numpy` copies back.
Under ``NUMBA_ENABLE_CUDASIM=1`` the same code runs in Numba's simulator.

Memory: every buffer is a view of a pooled *block*. `_view` makes every view, so
each view keeps its block's lease alive, and the block goes back to the pool when
the last array using it is gone: a training loop reuses the same blocks step
after step. All work runs in order on the default stream, so a block is never
reused while a kernel that reads it is still queued.

Layouts (reshape, transpose, broadcast, basic indexing) are worked out by NumPy
on a *probe*, an array with the buffer's shape and strides over no real memory
(`_probe`), so the rules are exactly NumPy's.
"""

from __future__ import annotations

import json
import math
import os
import weakref
from collections import defaultdict

import numba
import numpy as np
from numba import cuda

from numgrad.kernels import cache
from numgrad.kernels.codegen import Program, Skeleton
from numgrad.kernels.layout import collapse, contiguous_strides

name = "cuda"
SIMULATOR = bool(numba.config.ENABLE_CUDASIM)
#: Threads per block; a power of two (block reductions halve it).
MAX_THREADS = 256
#: Blocks of a grid-stride launch, at most.
MAX_BLOCKS = 4096
#: A reduction with at least this many outputs gives each output one thread;
#: fewer outputs each get blocks of threads, which combine their partial results.
ROWS_THRESHOLD = 4096
#: ... and so does one whose outputs each reduce fewer than this many elements.
SMALL_ROW = 64
#: Blocks a block reduction aims to spread its work over.
TARGET_TASKS = 1024
#: Matmul tile edge (threads per block: its square), and blocks along the batch.
#: The simulator runs each thread as a Python thread, so it uses small tiles and
#: one block for all the batch; the PTX check compiles the GPU's tile.
GPU_TILE = 16
TILE, BATCH_BLOCKS = (4, 1) if SIMULATOR else (GPU_TILE, 65535)

#: Kernels compile differently per device: the compute capability is in every key.
if SIMULATOR:
    target = "cuda-simulator"
elif cuda.is_available():
    target = "cuda-sm{}{}".format(*cuda.get_current_device().compute_capability)
else:
    target = "cuda-unavailable"


def is_available() -> bool:
    """Whether kernels can run: a GPU with a working driver, or the simulator."""
    return cuda.is_available()


def device_name() -> str:
    if SIMULATOR:
        return "Numba's CUDA simulator (kernels run on the CPU)"
    if not is_available():
        return "no CUDA device"
    name = cuda.get_current_device().name  # bytes in older numba-cuda releases, str in newer
    return name.decode() if isinstance(name, bytes) else name


def synchronize() -> None:
    """Wait for every kernel and copy queued so far."""
    cuda.synchronize()


# ---- the buffer pool ----------------------------------------------------------------

class _Block:
    """A lease on one pooled allocation; arrays viewing it hold it."""

    __slots__ = ("memory", "nbytes", "__weakref__")

    def __init__(self, memory, nbytes: int):
        self.memory, self.nbytes = memory, nbytes


_free: dict[int, list] = defaultdict(list)
#: device allocations made, blocks reused from the pool, bytes the pool holds
pool_stats = {"allocations": 0, "reuses": 0, "bytes_reserved": 0}


def _size_class(nbytes: int) -> int:
    """`nbytes` rounded up to one of 8 sizes per power of two (at most 12.5% waste)."""
    nbytes = max(nbytes, 512)
    step = 1 << max(0, nbytes.bit_length() - 4)
    return -(-nbytes // step) * step


def _take(nbytes: int) -> _Block:
    size = _size_class(nbytes)
    if _free[size]:
        memory = _free[size].pop()
        pool_stats["reuses"] += 1
    else:
        memory = np.empty(size, np.uint8) if SIMULATOR else cuda.device_array(size, np.uint8)
        pool_stats["allocations"] += 1
        pool_stats["bytes_reserved"] += size
    block = _Block(memory, size)
    weakref.finalize(block, _free[size].append, memory)
    return block


def empty_cache() -> None:
    """Give the pool's unused blocks back to the device."""
    for size, blocks in _free.items():
        pool_stats["bytes_reserved"] -= size * len(blocks)
        blocks.clear()


def _view(block: _Block, offset: int, shape, strides, dtype, fresh: bool = False):
    """A device array over `block`, starting `offset` bytes in."""
    shape, strides, dtype = tuple(shape), tuple(strides), np.dtype(dtype)
    if SIMULATOR:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        host = np.ndarray(shape, dtype, buffer=block.memory, offset=offset, strides=strides)
        array = FakeCUDAArray(host)
    else:
        from numba.cuda.cudadrv.devicearray import DeviceNDArray

        memory = block.memory.gpu_data
        array = DeviceNDArray(shape, strides, dtype,
                              gpu_data=memory.view(offset) if offset else memory)
    array._ng_block, array._ng_offset, array._ng_fresh = block, offset, fresh
    return array


def _restride(array, shape, strides, offset: int = 0):
    """Another view of `array`'s block: `offset` bytes from `array`'s start."""
    return _view(array._ng_block, array._ng_offset + offset, shape, strides, array.dtype)


def _probe(array) -> np.ndarray:
    """A NumPy array with `array`'s shape and strides over one element: for layout
    arithmetic only (views of it are fine; reading it is not)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, array.dtype), array.shape, array.strides)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _is_contiguous(array) -> bool:
    expected = contiguous_strides(array.shape, array.dtype.itemsize)
    return all(n == 1 or s == e for n, s, e in zip(array.shape, array.strides, expected))


# ---- the backend interface ----------------------------------------------------------

def empty(shape, dtype):
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    return _view(_take(nbytes), 0, shape, contiguous_strides(shape, dtype.itemsize), dtype,
                 fresh=True)


def from_numpy(array: np.ndarray):
    """A device copy of `array`."""
    out = empty(array.shape, array.dtype)
    if array.size:
        out.copy_to_device(np.ascontiguousarray(array))
    return out


def to_numpy(array) -> np.ndarray:
    """A host copy of `array`."""
    if not array.size:
        return np.empty(array.shape, array.dtype)
    if not _is_contiguous(array):
        array = _contiguous(array)
    return array.copy_to_host()


def copy(array, source):
    """`array`, a buffer of device `source` (the CPU's are NumPy arrays), copied here."""
    return from_numpy(array if source == "cpu" else source.backend.to_numpy(array))


def full(shape, value, dtype):
    """`value` broadcast to `shape`: one element on the device, read with stride 0."""
    one = from_numpy(np.full((1,), value, dtype))
    return _restride(one, shape, (0,) * len(shape))


def strides(array) -> tuple[int, ...]:
    return tuple(array.strides)


def as_strided(array, shape, strides, writeable: bool = False):
    return _restride(array, shape, strides)


def is_view(array) -> bool:
    return not array._ng_fresh


def reshape(array, shape):
    try:
        view = _probe(array).reshape(shape, copy=False)
    except ValueError:  # not expressible as a view: copy first
        return reshape(_contiguous(array), shape)
    return _restride(array, view.shape, view.strides)


def permute(array, axes):
    view = _probe(array).transpose(axes)
    return _restride(array, view.shape, view.strides)


def expand(array, shape):
    view = np.broadcast_to(_probe(array), shape)
    return _restride(array, view.shape, view.strides)


def index(array, key):
    """``array[key]``: a view for basic keys, a gather for integer arrays."""
    if not any(isinstance(k, np.ndarray) for k in key):
        probe = _probe(array)
        view = probe[key]
        if not isinstance(view, np.ndarray):  # an element: as a 0-d view instead
            view = probe[key + (Ellipsis,)]
        return _restride(array, view.shape, view.strides, _address(view) - _address(probe))
    positions = _positions(array, key)
    out = empty(positions.shape, array.dtype)
    _run("gather", positions.size, _flat(out), _flat_block(array), from_numpy(
        positions.ravel() + array._ng_offset // array.dtype.itemsize))
    return out


def index_add(array, arg):
    """Zeros of ``arg[1]``'s shape with `array` added at ``arg[0]`` (repeats add up)."""
    key, shape = arg
    out = _contiguous(full(shape, 0, array.dtype))
    positions = _positions(out, key)
    values = np.broadcast_to(_probe(array), positions.shape)  # a layout, for its strides
    values = _contiguous(_restride(array, values.shape, values.strides))
    _run("scatter_add", positions.size, _flat(out), _flat(values),
         from_numpy(positions.ravel()))
    return out


def index_put(array, values, key):
    """A copy of `array` with ``[key]`` set to `values` (of the key's shape); where a
    position repeats, the last value wins, as in NumPy."""
    out = empty(array.shape, array.dtype)
    _copy(out, array)
    positions = _positions(out, key).ravel()
    last = len(positions) - 1 - np.unique(positions[::-1], return_index=True)[1]
    _run("scatter", last.size, _flat(out), _flat(_contiguous(values)),
         from_numpy(positions[last]), from_numpy(last))
    return out


def concatenate(*arrays_and_axis):
    *arrays, axis = arrays_and_axis
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = empty(tuple(shape), arrays[0].dtype)
    start = 0
    for a in arrays:
        _copy(_restride(out, a.shape, out.strides, start * out.strides[axis]), a)
        start += a.shape[axis]
    return out


def matmul(a, b, arg=None):
    """Batched matrix product through shared-memory tiles (any strides, broadcast
    batches included)."""
    *batch, m, _ = a.shape
    n = tuple(b.shape)[-1]
    out = empty((*batch, m, n), a.dtype)
    if not out.size:
        return out
    layouts = [(tuple(x.shape), tuple(x.strides)) for x in (out, a, b)]
    bshape, bstrides, _ = collapse(tuple(batch) or (1,), [
        st[:-2] or (0,) for _, st in layouts], len(batch) or 1)
    if len(bshape) > 1:  # batch dimensions that do not merge: make them contiguous
        return matmul(_contiguous(a), _contiguous(b))
    views = [_restride(x, (bshape[0], *shape[-2:]), (s[0], *st[-2:]))
             for x, (shape, st), s in zip((out, a, b), layouts, bstrides)]
    if SIMULATOR:  # the kernel a GPU would run, for the PTX check
        _record(_matmul_kernel(a.dtype, GPU_TILE), views)
    kernel = _matmul_kernel(a.dtype, TILE)
    if not SIMULATOR:
        _record(kernel, views)
    _configured(kernel, (-(-n // TILE), -(-m // TILE), min(bshape[0], BATCH_BLOCKS)),
                (TILE, TILE))(*views)
    return out


def _matmul_kernel(dtype: np.dtype, tile: int):
    # bool products accumulate as integers (any nonzero sum is True)
    acc = "int64" if dtype == np.bool_ else dtype.name
    return cache.lookup(("matmul", dtype.name, tile, target),
                        lambda: _MATMUL.format(acc=acc, tile=tile))


# ---- generated kernels ---------------------------------------------------------------

def variant(program: Program, shape: tuple[int, ...]):
    """The loop skeleton of a launch: None (elementwise), ``"rows"`` (a thread per
    output) or ``("blocks", acc dtype)`` (blocks per output)."""
    if not program.reduce:
        return None
    rows = math.prod(shape[:program.kept_rank])
    if rows >= ROWS_THRESHOLD or math.prod(shape[program.kept_rank:]) < SMALL_ROW:
        return "rows"
    return ("blocks", program.acc_dtype)


def launch(kernel, variant, outs, shape, inputs, args) -> None:
    if variant is None:
        _record(kernel, [*outs, shape, *inputs, *args])
        _grid(kernel, math.prod(shape))(*outs, shape, *inputs, *args)
        return
    kept = outs[0].ndim
    rows, size = math.prod(shape[:kept]), math.prod(shape[kept:])
    if variant == "rows":
        _record(kernel, [*outs, shape, *inputs, *args])
        _grid(kernel, rows)(*outs, shape, *inputs, *args)
        return
    threads = _threads(size)
    chunks = max(1, min(TARGET_TASKS // rows, size // (4 * threads)))
    partial = empty((rows * chunks,), variant[1])
    call = [*outs, shape, chunks, partial, _chunk_counter(rows), *inputs, *args]
    _record(kernel, call)
    _configured(kernel, min(rows * chunks, MAX_BLOCKS), threads)(*call)


def compile_state(kernel) -> tuple[int, int]:
    """Signatures `kernel` has compiled, and how many of them came from the disk cache."""
    if SIMULATOR:  # nothing compiles: count a kernel's first launch as its compile
        started = getattr(kernel, "_ng_started", False)
        kernel._ng_started = True
        return int(started), 0
    return len(kernel.overloads), sum(kernel.stats.cache_hits.values())


def source_file(kernel) -> str:
    return (kernel.fn if SIMULATOR else kernel.py_func).__code__.co_filename


def render(program: Program, variant=None, name: str = "kernel") -> str:
    """The source of a module defining `name`, the ``cuda.jit`` kernel of `program`.

    Its signature is ``name([red,] out0, ..., shape, [chunks, partial, counter,]
    in0, ..., tab0, ..., arg0, ...)``, as on the CPU without ``threads``. Threads
    walk the loop nest by a grid-stride loop over its flat index.
    """
    outs, ins, args = Skeleton.parameters(program)
    extra = ["chunks", "partial", "counter"] if isinstance(variant, tuple) else []
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
    if variant is None:
        grid.elementwise()
    elif variant == "rows":
        grid.rows()
    else:
        grid.blocks()
    return "\n".join(lines) + "\n"


class _Grid(Skeleton):
    """``cuda.jit`` skeletons: grid-stride loops, and block reductions through
    shared memory whose last block to finish combines the partial results."""

    exprs = {"floor": "math.floor(x)", "ceil": "math.ceil(x)", "rint": "round(x, 0)"}

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

    def blocks(self) -> None:
        # Task = (output row, chunk of its reduced elements). A block folds its
        # chunk with all its threads, halves the partial results down to one in
        # shared memory, and stores it; the last block of a row to finish (an
        # atomic count) combines the row's partials in order and runs the epilogue.
        k, r = self.k, self.r
        self.line(0, f"accs = cuda.shared.array({MAX_THREADS}, {self.acc})")
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


def _threads(work: int) -> int:
    """Threads per block for `work` items: a power of two, at most MAX_THREADS."""
    return min(MAX_THREADS, 1 << max(0, work - 1).bit_length())


def _grid(kernel, work: int):
    threads = _threads(work)
    return _configured(kernel, max(1, min(-(-work // threads), MAX_BLOCKS)), threads)


def _configured(kernel, blocks, threads):
    """``kernel[blocks, threads]`` without numba-cuda's low-occupancy warning: a small
    tensor gets a small grid on purpose, and the warning would fire at every launch."""
    warns = numba.config.CUDA_LOW_OCCUPANCY_WARNINGS
    numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    try:
        return kernel[blocks, threads]
    finally:
        numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = warns


_counter = None


def _chunk_counter(rows: int):
    """Counts of finished blocks for `rows` rows; zero between launches (the last
    block of each row resets its count)."""
    global _counter
    if _counter is None or _counter.size < rows:
        _counter = from_numpy(np.zeros(max(rows, ROWS_THRESHOLD), np.int32))
    return _counter


# ---- copies, gathers and scatters ------------------------------------------------------

def _contiguous(array):
    """`array` itself if C-contiguous, else a contiguous copy."""
    if _is_contiguous(array):
        return array
    out = empty(array.shape, array.dtype)
    _copy(out, array)
    return out


def _copy(dst, src) -> None:
    """``dst[...] = src`` for any layouts, by the generated elementwise kernel."""
    if not src.size:
        return
    shape, (out_strides, in_strides), kept = collapse(
        tuple(src.shape), [tuple(dst.strides), tuple(src.strides)], src.ndim)
    dtype = src.dtype.name
    program = Program(code=(("in", 0),), dtypes=(dtype,), stores=(0,), in_dtypes=(dtype,),
                      arg_dtypes=(), kept_rank=kept)
    kernel = cache.lookup((program, None, target), lambda: render(program))
    launch(kernel, None, [_restride(dst, shape, out_strides)], shape,
           [_restride(src, shape, in_strides)], [])


def _flat(array):
    """A contiguous `array` as 1-D."""
    return _restride(array, (array.size,), (array.dtype.itemsize,))


def _flat_block(array):
    """All of `array`'s block as 1-D items of its dtype."""
    itemsize = array.dtype.itemsize
    return _view(array._ng_block, 0, (array._ng_block.nbytes // itemsize,), (itemsize,),
                 array.dtype)


def _positions(array, key) -> np.ndarray:
    """The item offsets, from `array`'s first element, of the elements ``array[key]``."""
    itemsize = array.dtype.itemsize
    offsets = np.broadcast_to(np.zeros((), np.int64), array.shape)[key]
    for d, (n, stride) in enumerate(zip(array.shape, array.strides)):
        along = np.arange(n, dtype=np.int64) * (stride // itemsize)
        along = along.reshape((n,) + (1,) * (array.ndim - d - 1))
        offsets = offsets + np.broadcast_to(along, array.shape)[key]
    return np.ascontiguousarray(offsets)


def _run(name: str, work: int, *arrays) -> None:
    if work:
        kernel = cache.lookup((name, target), lambda: _MOVES, name=name)
        _record(kernel, list(arrays))
        _grid(kernel, work)(*arrays)


_MOVES = """\
from numba import cuda


@cuda.jit(cache=True)
def gather(out, table, positions):
    n = cuda.grid(1)
    while n < positions.shape[0]:
        out[n] = table[positions[n]]
        n += cuda.gridsize(1)


@cuda.jit(cache=True)
def scatter_add(out, values, positions):
    n = cuda.grid(1)
    while n < positions.shape[0]:
        cuda.atomic.add(out, positions[n], values[n])
        n += cuda.gridsize(1)


@cuda.jit(cache=True)
def scatter(out, values, positions, sources):
    n = cuda.grid(1)
    while n < positions.shape[0]:
        out[positions[n]] = values[sources[n]]
        n += cuda.gridsize(1)
"""

_MATMUL = """\
import numpy as np
from numba import cuda


@cuda.jit(cache=True)
def kernel(out, a, b):
    # out[z] = a[z] @ b[z], one output element per thread, through tiles of a and b
    # in shared memory.
    ta = cuda.shared.array(({tile}, {tile}), np.{acc})
    tb = cuda.shared.array(({tile}, {tile}), np.{acc})
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i = cuda.blockIdx.y * {tile} + ty
    j = cuda.blockIdx.x * {tile} + tx
    m, k, n = a.shape[1], a.shape[2], b.shape[2]
    z = cuda.blockIdx.z
    while z < out.shape[0]:
        acc = np.{acc}(0)
        for start in range(0, k, {tile}):
            ta[ty, tx] = a[z, i, start + tx] if i < m and start + tx < k else 0
            tb[ty, tx] = b[z, start + ty, j] if start + ty < k and j < n else 0
            cuda.syncthreads()
            for q in range({tile}):
                acc += ta[ty, q] * tb[q, tx]
            cuda.syncthreads()
        if i < m and j < n:
            out[z, i, j] = acc
        z += cuda.gridDim.z
"""


# ---- compiling the kernels the simulator ran, to PTX -------------------------------------

def _record(kernel, arguments) -> None:
    """Under ``NUMGRAD_CUDA_KERNEL_LOG=<file>``, append the kernel's source file and
    argument types, so `compile_ptx` can compile what the simulator only interpreted."""
    log = os.environ.get("NUMGRAD_CUDA_KERNEL_LOG")
    if not log:
        return
    types = []
    for a in arguments:
        if isinstance(a, tuple):
            types.append(["tuple", len(a)])
        elif hasattr(a, "_ng_block"):
            types.append(["array", a.dtype.name, a.ndim, a._numba_type_.layout])
        else:
            types.append(["scalar", np.asarray(a).dtype.name])
    entry = json.dumps([source_file(kernel), kernel_name(kernel), types])
    with open(log, "a") as f:
        f.write(entry + "\n")


def kernel_name(kernel) -> str:
    return (kernel.fn if SIMULATOR else kernel.py_func).__name__


def compile_ptx(log: str, cc: tuple[int, int] = (9, 0)) -> int:
    """Compile every distinct kernel recorded in `log` to PTX for compute capability
    `cc` (no GPU needed); returns how many. A kernel that fails raises."""
    import importlib.util

    from numba import types as nt

    def numba_type(t):
        if t[0] == "tuple":
            return nt.UniTuple(nt.int64, t[1])
        if t[0] == "array":
            return nt.Array(numba.from_dtype(np.dtype(t[1])), t[2], t[3])
        return numba.from_dtype(np.dtype(t[1]))

    entries = sorted({line for line in open(log) if line.strip()})
    for line in entries:
        path, fn_name, types = json.loads(line)
        spec = importlib.util.spec_from_file_location("numgrad_ptx_check", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        signature = tuple(numba_type(t) for t in types)
        try:
            cuda.compile_ptx(getattr(module, fn_name).py_func, signature, cc=cc)
        except Exception as error:
            raise RuntimeError(f"{path}: {fn_name}{signature} does not compile for cc "
                               f"{cc}: {type(error).__name__}: {error}") from error
    return len(entries)


if __name__ == "__main__":
    import sys

    print(f"compiled {compile_ptx(sys.argv[1])} kernels to PTX for cc 9.0")
