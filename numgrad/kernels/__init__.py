"""The target contract: what a module must provide to run numgrad's work on a device.

A *target* is one module of this package, found by name (``numgrad.kernels.<name>``);
nothing else lists targets. The engine calls only the names below, so a module that
provides them is a target. Four exist:

- `numgrad.kernels.cpu`: NumPy arrays, Numba-compiled loops (``NUMGRAD_CPU_KERNELS=numba``);
- `numgrad.kernels.interpreter`: NumPy arrays, every `Program` interpreted with NumPy
  ufuncs, nothing compiled (``NUMGRAD_CPU_KERNELS=numpy``);
- `numgrad.kernels.tiered`: the interpreter until the CPU kernel, compiled by a worker
  process, is ready (``NUMGRAD_CPU_KERNELS=tiered``, the default for the ``'cpu'``
  device);
- `numgrad.kernels.cuda`: Numba device arrays and ``numba.cuda`` kernels.

Buffers are the target's own arrays and are never mutated once computed: the engine
allocates every result with `Target.empty` and writes it once. Movements that are views
(reshape, permute, expand, basic indexing) allocate nothing.

Three names are optional, for a target whose kernels are not the CPU target's compiled
functions but may become them (``tiered``): ``compiled(kernel, shape)``, that function
and its variant once loaded, else None; ``loadable(kernel, shape)``, whether the next
launch may load it; ``interpreting(launches)``, told at each replay of a plan that
interprets them. A prepared plan (`numgrad.plan.prepared`) calls compiled functions
directly, and the interpreter's NumPy functions of the others, until they may be
loaded.

`docs/extending.rst` walks through adding a target, with the interpreter as the example.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol

import numpy as np

from numgrad.kernels.codegen import Program

#: How `Target.launch` obtained the kernel it ran; the engine counts each
#: (``ng.engine.record()``): from the in-memory cache, loaded from the disk cache,
#: compiled now, or run by an interpreter (nothing compiled).
HIT, DISK, COMPILED, INTERPRETED = "hit", "disk", "compiled", "interpreted"

#: Counts the moments kernels may have become compiled functions after launches had run
#: them otherwise (the tiered target's: its CPU target imported, a worker's answer, a
#: kernel loaded). A plan not prepared is tried again when this changed
#: (`numgrad.plan.prepared.try_again`), and one that interprets a kernel looks whether it
#: may be loaded now (`PreparedPlan.stale`).
newly_compiled = 0

Array = Any  # a target's buffer type: np.ndarray on the CPU, a device array on CUDA


class Target(Protocol):
    """The names a target module provides (a module satisfies this structurally)."""

    #: the device type this target runs (``'cpu'``, ``'cuda'``)
    name: str
    #: this target in kernel cache keys: what compiled code depends on (``'cpu'``,
    #: ``'cuda-sm90'``, ``'numpy'``)
    key: str

    # ---- buffers ---------------------------------------------------------------------
    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> Array:
        """A new C-contiguous buffer, to be written once by a kernel."""

    def full(self, shape: tuple[int, ...], value, dtype: np.dtype) -> Array:
        """`value` at every position of `shape` (may be one element read with stride 0)."""

    def from_numpy(self, array: np.ndarray) -> Array:
        """A private copy of host `array` on this target."""

    def to_numpy(self, array: Array) -> np.ndarray:
        """A host copy the caller owns."""

    def copy(self, array: Array, source) -> Array:
        """`array`, a buffer of device `source`, copied to this target."""

    def strides(self, array: Array) -> tuple[int, ...]:
        """`array`'s strides in bytes."""

    def as_strided(self, array: Array, shape, strides, writeable: bool = False) -> Array:
        """A view of `array`'s memory with `shape` and byte `strides` (stride 0 broadcasts)."""

    def is_view(self, array: Array) -> bool:
        """Whether `array` shares another buffer's memory (its creation allocated nothing)."""

    def dlpack(self, array: Array, *, stream=None, max_version=None, dl_device=None,
               copy=None):
        """`array` as a DLPack capsule (``__dlpack__``'s arguments), sharing its memory
        where the consumer allows."""

    def dlpack_device(self) -> tuple[int, int]:
        """This target's ``__dlpack_device__``: ``(DLPack device type, index)``."""

    # ---- movements and hand-written kernels, by primitive name (``arg`` is the
    # primitive's static argument, as recorded in the lazy graph) -----------------------
    def reshape(self, array: Array, shape) -> Array: ...
    def permute(self, array: Array, axes) -> Array: ...
    def expand(self, array: Array, shape) -> Array: ...
    def index(self, array: Array, key) -> Array: ...
    def index_add(self, array: Array, arg) -> Array: ...
    def index_put(self, array: Array, values: Array, key) -> Array: ...
    def concatenate(self, *arrays_and_axis) -> Array: ...
    def roll(self, array: Array, shifts) -> Array: ...
    def matmul(self, a: Array, b: Array, arg=None) -> Array: ...
    def library(self, *arrays_and_call) -> Array:
        """``op.ref(*arrays, arg)`` of a library primitive (scan, sort, decomposition);
        the last argument is ``(op, arg)``. A device without the library copies through
        the host."""

    # ---- generated kernels -----------------------------------------------------------
    def variant(self, program: Program, shape: tuple[int, ...]) -> Hashable:
        """The loop skeleton (a hashable value, part of the cache key) for a launch of
        `program` over the collapsed loop nest `shape`."""

    def render(self, program: Program, variant: Hashable) -> str:
        """The source of `program` in that skeleton (shown by ``ng.explain``)."""

    def kernel(self, program: Program, variant: Hashable) -> Callable:
        """The runnable kernel of `program`, cached by structure (memory, then disk)."""

    def launch(self, kernel: Callable, variant: Hashable, outs: list[Array],
               shape: tuple[int, ...], inputs: list[Array], args: list) -> str:
        """Run `kernel` over `shape`: write `outs` from `inputs` (views spanning the loop
        nest) and the scalar `args`. Returns `HIT`, `DISK`, `COMPILED` or `INTERPRETED`."""


#: Every name of the contract; `missing` checks a module against it.
CONTRACT = ("name", "key", "empty", "full", "from_numpy", "to_numpy", "copy", "strides",
            "as_strided", "is_view", "dlpack", "dlpack_device", "reshape", "permute", "expand",
            "index", "index_add", "index_put", "concatenate", "roll", "matmul", "library",
            "variant", "render", "kernel", "launch")


def missing(module) -> list[str]:
    """The contract's names that `module` lacks (empty for a complete target)."""
    return [n for n in CONTRACT if not hasattr(module, n)]
