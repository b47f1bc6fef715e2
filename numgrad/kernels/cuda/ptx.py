"""The PTX check: log the kernels the simulator ran, then compile them for a real GPU.

The simulator neither type-checks nor compiles. Under ``NUMGRAD_CUDA_KERNEL_LOG=<file>``
(read once, at import) every launch appends its kernel's source file and argument
types to the file; `compile_ptx` then compiles each to PTX. Unset, launches do not
pass through here at all (`numgrad.kernels.cuda.grid` wraps its launch only if set).
"""

from __future__ import annotations

import functools
import json
import os

import numba
import numpy as np
from numba import cuda

from numgrad.kernels.cuda.device import py_func

#: The log file, or None: nothing is recorded.
LOG = os.environ.get("NUMGRAD_CUDA_KERNEL_LOG") or None


def log_as(kernel, stand_in) -> None:
    """Log `stand_in` in place of `kernel` (the simulator's small matmul tile stands in
    for the GPU's, which is the one to compile)."""
    kernel._ng_ptx_as = stand_in


def recording(start):
    """`start` (a launch: ``kernel, blocks, threads, args``), logging each launch first."""

    @functools.wraps(start)
    def logged(kernel, blocks, threads, args) -> None:
        record(getattr(kernel, "_ng_ptx_as", kernel), args)
        start(kernel, blocks, threads, args)

    return logged


def record(kernel, arguments) -> None:
    """Append `kernel`'s source file, name and argument types to `LOG`."""
    types = []
    for a in arguments:
        if isinstance(a, tuple):
            types.append(["tuple", len(a)])
        elif hasattr(a, "_ng_block"):
            types.append(["array", a.dtype.name, a.ndim, _layout(a)])
        else:
            types.append(["scalar", np.asarray(a).dtype.name])
    function = py_func(kernel)
    entry = json.dumps([function.__code__.co_filename, function.__name__, types])
    with open(LOG, "a") as f:
        f.write(entry + "\n")


def _layout(array) -> str:
    """The layout of a device array's Numba type ('C', 'F' or 'A')."""
    typed = getattr(array, "_numba_type_", None)  # (the simulator's arrays made by
    if typed is not None:                         # slicing have none)
        return typed.layout
    flags = array.flags
    return "C" if flags["C_CONTIGUOUS"] else "F" if flags["F_CONTIGUOUS"] else "A"


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
