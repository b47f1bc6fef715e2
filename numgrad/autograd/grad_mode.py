"""Grad mode: whether operations record history. Thread-local, like PyTorch's."""

from __future__ import annotations

import functools
import threading


class _State(threading.local):
    """Each thread's grad mode: on until a thread sets it. (A class default, not
    ``getattr(state, name, default)``: that raises and catches an AttributeError in
    every thread that never set it, 0.7 us at each recorded operation.)"""

    enabled = True


_state = _State()
#: The number of threads with grad mode off. While none is, grad mode is on everywhere,
#: which a recorded operation then reads without the thread-local (70 ns). (A thread
#: that ends with it off stays counted: the others read their thread-local from then on.)
_off = 0
_off_lock = threading.Lock()


def is_grad_enabled() -> bool:
    """Whether operations on tensors that require grad record their history."""
    return not _off or _state.enabled


def _set(flag: bool) -> None:
    global _off
    flag = bool(flag)
    with _off_lock:
        if flag != _state.enabled:
            _off += -1 if flag else 1
        _state.enabled = flag


class _GradMode:
    """A context manager and a decorator that set grad mode to `_flag`."""

    _flag: bool

    def __enter__(self) -> None:
        self._previous = is_grad_enabled()
        _set(self._flag)

    def __exit__(self, *exc) -> None:
        _set(self._previous)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Operations inside do not record history (context manager or decorator)."""

    _flag = False


class enable_grad(_GradMode):
    """Operations inside record history, even within `no_grad` (context manager or decorator)."""

    _flag = True


class set_grad_enabled(_GradMode):
    """Set grad mode: as a call (``set_grad_enabled(False)``) or a context manager."""

    def __init__(self, mode: bool):
        self._flag = bool(mode)
        self._previous = is_grad_enabled()
        _set(mode)

    def __enter__(self) -> None:
        pass

    def __call__(self, fn):
        _set(self._previous)
        flag = self._flag

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(flag):
                return fn(*args, **kwargs)

        return wrapper
