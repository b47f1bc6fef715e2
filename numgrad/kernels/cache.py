"""Compiled kernels by structural key: in memory, then on disk, then compiled.

Numba can only cache functions that live in a file, so each generated source is
written to ``<cache dir>/k_<hash>.py`` and imported; Numba's ``cache=True`` then
keeps the machine code beside it in ``__pycache__`` (`numgrad.kernels.jit` adds
what is Numba's: its version in every key, recovery from damaged machine code).
Files are written atomically (a temporary file, then a rename), and a module file
whose text is not exactly the expected source (truncated, corrupt, foreign) is
rewritten.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

#: Bump when generated code changes meaning, to orphan old entries.
FORMAT_VERSION = 1

_memory: dict[tuple, Callable] = {}


def cache_dir() -> Path:
    """``NUMGRAD_CACHE_DIR``, else the user's cache folder (``~/.cache/numgrad``)."""
    if os.environ.get("NUMGRAD_CACHE_DIR"):
        return Path(os.environ["NUMGRAD_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "numgrad"


def lookup(key: tuple, source: Callable[[], str], name: str = "kernel") -> Callable:
    """The kernel (a Numba dispatcher) for `key`: `name` in the module whose text
    `source` renders (called only on a memory miss). Numba compiles it on its first
    call.
    """
    if key in _memory:
        return _memory[key]
    text = source()
    digest = hashlib.sha256(f"{FORMAT_VERSION}|{key!r}|{text}".encode()).hexdigest()[:32]
    kernel = _import(_write(f"k_{digest}", text), f"numgrad_kernel_{digest}", name)
    _memory[key] = kernel
    return kernel


def clear() -> None:
    """Forget every kernel, in memory and on disk."""
    _memory.clear()
    shutil.rmtree(cache_dir(), ignore_errors=True)


def info() -> dict:
    """The cache folder, its size in bytes and its number of kernel modules."""
    folder = cache_dir()
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
    return {
        "path": str(folder),
        "bytes": sum(p.stat().st_size for p in files),
        "kernels": sum(1 for p in files if p.suffix == ".py"),
    }


def _write(stem: str, text: str) -> Path:
    folder = _writable_dir()
    path = folder / f"{stem}.py"
    try:
        if path.read_text() == text:
            return path
    except (OSError, UnicodeDecodeError):
        pass
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{stem}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return path


def _writable_dir() -> Path:
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if os.access(folder, os.W_OK):
            return folder
    except OSError:
        pass
    # An unwritable cache folder costs recompiles, never a failure.
    global _fallback
    if _fallback is None:
        _fallback = Path(tempfile.mkdtemp(prefix="numgrad-cache-"))
    return _fallback


_fallback: Path | None = None


def _import(path: Path, module_name: str, name: str) -> Callable:
    # Registered in sys.modules, so Numba can find the module again when it
    # unpickles the cached machine code.
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return getattr(module, name)
