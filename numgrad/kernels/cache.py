"""Compiled kernels by structural key: in memory, then on disk, then compiled.

Numba can only cache functions that live in a file, so each generated source is
written to ``<cache dir>/k_<hash>.py`` and imported; Numba's ``cache=True`` then
keeps the machine code beside it in ``__pycache__`` (`numgrad.kernels.jit` adds
what is Numba's: its version in every key, recovery from damaged machine code).

Any number of processes may share the folder. Files are written atomically (a
temporary file, then a link or rename), a module file that exists with the expected
text is never rewritten (so Numba's machine code saved beside it stays valid), and
one whose text is not exactly the expected source (truncated, corrupt, foreign) is
replaced. Modules are compiled from the expected text, never from Python's bytecode
cache. A folder that cannot be used (read-only, a file, impossible to create) costs
one `CacheWarning` and compiling into a private temporary folder, never a failure.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

#: Bump when generated code changes meaning, to orphan old entries.
FORMAT_VERSION = 1

_memory: dict[tuple, Callable] = {}
#: Held while a kernel is written and imported (the engine lock already serializes
#: realizing; this keeps `lookup` safe for any caller).
_lock = threading.RLock()


class CacheWarning(UserWarning):
    """The kernel cache folder cannot be used: kernels compile for this process only."""


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
    kernel = _memory.get(key)
    if kernel is not None:
        return kernel
    with _lock:
        kernel = _memory.get(key)
        if kernel is None:
            text = source()
            digest = hashlib.sha256(f"{FORMAT_VERSION}|{key!r}|{text}".encode()).hexdigest()
            digest = digest[:32]
            path = _write(f"k_{digest}", text)
            kernel = _memory[key] = load_module(path, text, f"numgrad_kernel_{digest}", name)
    return kernel


def clear() -> None:
    """Forget every kernel, in memory and on disk."""
    _memory.clear()
    shutil.rmtree(cache_dir(), ignore_errors=True)


def info() -> dict:
    """The cache folder, its size in bytes and its number of kernel modules. Files
    another process removes meanwhile (Numba replaces a kernel's index file when it
    saves the kernel) are left out."""
    folder = cache_dir()
    size = kernels = 0
    for root, _, names in os.walk(folder):
        for name in names:
            try:
                size += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                continue
            kernels += name.endswith(".py")
    return {"path": str(folder), "bytes": size, "kernels": kernels}


def folder() -> Path:
    """The folder kernels are written to: the cache folder if it is usable, else this
    process's private one (`CacheWarning`)."""
    wanted = cache_dir()
    reason = _unusable_because(wanted)
    return wanted if reason is None else _private_dir(wanted, reason)


def note_compiled(name: str) -> None:
    """Note in the folder that a kernel of the program named `name` (a digest) is
    there: a later process loads it at once (`compiled_before`). Best effort."""
    try:
        (folder() / f"{name}.done").touch()
    except OSError:
        pass


def compiled_before(name: str) -> bool:
    """Whether `note_compiled(name)` was called with this cache folder (a stat)."""
    return (cache_dir() / f"{name}.done").exists()


def _write(stem: str, text: str) -> Path:
    """The path of module `stem` holding `text`, in the cache folder if it is usable."""
    wanted = cache_dir()
    reason = _unusable_because(wanted)
    if reason is None:
        try:
            return _write_in(wanted, stem, text)
        except OSError as error:  # e.g. a full disk, or permissions that changed
            reason = f"writing to it failed: {error.strerror or error}"
    return _write_in(_private_dir(wanted, reason), stem, text)


def _unusable_because(folder: Path) -> str | None:
    """Why `folder` cannot hold the cache, or None if it can."""
    if _private is not None and _private[1] == folder:
        return "it could not be used earlier in this process"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return "it is a file, not a folder"
    except OSError as error:
        return f"it cannot be created: {error.strerror or error}"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "it is not writable"
    return None


def _write_in(folder: Path, stem: str, text: str) -> Path:
    path = folder / f"{stem}.py"
    try:
        if path.read_text() == text:
            return path
        damaged = True
    except (OSError, UnicodeDecodeError):
        damaged = path.exists()
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        if not damaged and _link(tmp, path):
            return path
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def _link(tmp: str, path: Path) -> bool:
    """Create `path` as `tmp` unless it exists. A file another process has just
    written (the same text) stays, with the timestamp Numba's cache index keeps
    for it. False where links are not supported."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass  # written meanwhile; read back by the next lookup of another process
    except OSError:
        return False
    return True


#: The private temporary folder used instead of an unusable cache folder, and that
#: folder; created once per process, with one `CacheWarning`, and deleted at exit.
_private: tuple[Path, Path] | None = None


def _private_dir(folder: Path, reason: str) -> Path:
    global _private
    with _lock:
        if _private is None:
            private = Path(tempfile.mkdtemp(prefix="numgrad-kernels-"))
            atexit.register(shutil.rmtree, private, ignore_errors=True)
            _private = (private, folder)
            warnings.warn(
                f"numgrad cannot use the kernel cache folder {folder}: {reason}. Kernels "
                f"are compiled for this process only, in the private temporary folder "
                f"{private} (deleted at exit), so every new process compiles them again. "
                f"Set NUMGRAD_CACHE_DIR to a writable folder to keep them.",
                CacheWarning, stacklevel=2)
        return _private[0]


class _SourceLoader(importlib.machinery.SourceFileLoader):
    """Loads a kernel module from the text it must hold, never from Python's bytecode
    cache (which another process may be writing, or a crash may have truncated)."""

    def __init__(self, fullname: str, path: str, text: str):
        super().__init__(fullname, path)
        self.text = text

    def get_code(self, fullname):
        return compile(self.text, self.path, "exec", dont_inherit=True)


def load_module(path: Path, text: str, module_name: str, name: str) -> Callable:
    """`name` from the kernel module `module_name` at `path`, imported from `text`.
    Registered in `sys.modules`, so Numba can find the module again when it unpickles
    the cached machine code."""
    loader = _SourceLoader(module_name, str(path), text)
    spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return getattr(module, name)
