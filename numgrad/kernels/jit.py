"""What the Numba-backed targets share: kernels from the disk cache, and launches that
report how their kernel was obtained and recover from a damaged cache entry."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import numba
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target

from numgrad.kernels import COMPILED, DISK, HIT, cache


def kernel(key: tuple, source: Callable[[], str], name: str = "kernel") -> Callable:
    """The Numba dispatcher for `key` (with the Numba version: machine code depends on
    it), from `source` written to the disk cache."""
    return cache.lookup((*key, numba.__version__), source, name)


def launch(kernel, call: Callable[[], None], compile_state: Callable, source_file: str) -> str:
    """Run ``call()``, which launches `kernel`; returns `HIT`, `DISK` or `COMPILED`.

    `compile_state(kernel)` gives the signatures compiled so far and how many of them
    came from the disk cache. A launch that fails without compiling means Numba could
    not load its cached machine code (a damaged file): that is dropped and the kernel
    compiled again. A kernel that compiled never raises here.
    """
    compiled_before, disk_before = compile_state(kernel)
    try:
        call()
    except Exception:
        if compile_state(kernel)[0] > compiled_before:
            raise
        forget_compiled(source_file)
        call()
    compiled, disk = compile_state(kernel)
    if compiled == compiled_before:
        return HIT
    if disk > disk_before:
        return DISK
    logging.getLogger("numgrad").debug("compiled kernel %s", source_file)
    return COMPILED


def load(kernel, signature: tuple) -> bool:
    """Load `kernel`'s machine code for `signature` (Numba types) from the disk cache,
    never compiling: whether it is there now. (What `Dispatcher.compile` does before it
    compiles; Numba has no public call for it. Damaged machine code is dropped.)"""
    with global_compiler_lock:
        if signature in kernel.overloads:
            return True
        try:
            loaded = kernel._cache.load_overload(signature, kernel.targetctx)
        except Exception:
            forget_compiled(kernel.py_func.__code__.co_filename)
            return False
        if loaded is None:
            return False
        kernel._cache_hits[signature] += 1
        kernel.targetctx.insert_user_function(loaded.entry_point, loaded.fndesc,
                                              [loaded.library])
        kernel.add_overload(loaded)
        return True


def prepare() -> None:
    """Load Numba's CPU target registries, as the first load or compile of a kernel does
    (a third of a second: they import SciPy's BLAS), so that it is not done later, under
    a lock that launches wait on."""
    cpu_target.target_context.refresh()


def forget_compiled(source_file: str) -> None:
    """Delete Numba's cached machine code for the kernel module `source_file`."""
    path = Path(source_file)
    for entry in (path.parent / "__pycache__").glob(f"{path.stem}.*"):
        entry.unlink(missing_ok=True)
