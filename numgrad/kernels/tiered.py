"""The tiered CPU target (``NUMGRAD_CPU_KERNELS=tiered``, SPEC §7): a kernel not yet in
memory runs on the NumPy interpreter while a background thread compiles it with Numba
(or loads it from the disk cache); once it is ready, launches run it.

So a new program's first results come at the interpreter's speed, with no compile in
the way, and a loop switches to compiled kernels as they become ready. The thread
also imports Numba and the CPU target (a third of a second) first. Buffers and
movements are the CPU's; launches choose the CPU target's loop skeleton themselves,
so the two tiers run the same launches and only who runs the program differs.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import queue
import threading

from numgrad.kernels import COMPILED, DISK, HIT, interpreter
from numgrad.kernels.codegen import Program
from numgrad.kernels.host import *  # noqa: F403 - buffers and movements

#: this target in kernel cache keys (its compiled kernels are the CPU target's own)
key = "tiered"

_cpu = None  # numgrad.kernels.cpu, once the background thread has imported it
_import_error: Exception | None = None  # why the thread could not import it (raised by launches)
#: launches before that, by (program, shape): their outputs, inputs and arguments
_early: dict[tuple, tuple] = {}
_compiles: queue.SimpleQueue = queue.SimpleQueue()
_started: set[int] = set()  # compiled kernels (by id) sent to the background thread
#: how the thread obtained each kernel: reported by the first launch that runs it
_obtained: dict[int, str] = {}
_done: set[int] = set()  # those it has finished with (compiled, or failed to)
_idle = threading.Condition()
_stopping = False


def variant(program: Program, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The launch's shape: `launch` picks the CPU's loop skeleton for it when the
    compiled tier runs."""
    return tuple(shape)


def render(program: Program, variant: tuple[int, ...]) -> str:
    """The CPU kernel's source (what the compiled tier runs)."""
    cpu = importlib.import_module("numgrad.kernels.cpu")
    return cpu.render(program, cpu.variant(program, variant))


def kernel(program: Program, variant: tuple[int, ...]) -> Program:
    return program


def launch(kernel: Program, variant, outs, shape, inputs, args) -> str:
    """Run the compiled kernel if it is ready; otherwise have it compiled (or loaded
    from the disk cache, which also takes a while) in the background, and interpret
    the program now."""
    program, cpu = kernel, _cpu
    if cpu is None:  # still importing: the thread queues it when it is done
        with _idle:
            if _import_error is not None:
                raise _import_error
            if _cpu is None:
                _early.setdefault((program, tuple(shape)), (outs, inputs, args))
            _ensure_worker()
    else:
        loops = cpu.variant(program, shape)
        compiled = cpu.kernel(program, loops)  # writes its source; compiles nothing
        if compiled.overloads or id(compiled) in _done:
            # (a failed background compile fails again here, and raises)
            how = cpu.launch(compiled, loops, outs, shape, inputs, args)
            return _obtained.pop(id(compiled), how) if how == HIT else how
        if id(compiled) not in _started:
            with _idle:
                _send(compiled, (outs, shape, inputs, args))
    interpreted = interpreter.kernel(program, interpreter.ARRAYS)
    return interpreter.launch(interpreted, interpreter.ARRAYS, outs, shape, inputs, args)


def compiled(program: Program, shape: tuple[int, ...]):
    """The CPU target's compiled kernel of `program` over `shape` and its variant, once
    the background thread has compiled it; else None. (Prepared plans call compiled
    kernels directly: `numgrad.engine.prepared`.)"""
    cpu = _cpu
    if cpu is None:
        return None
    loops = cpu.variant(program, shape)
    kernel = cpu.kernel(program, loops)
    return (kernel, loops) if kernel.overloads else None


def wait() -> None:
    """Block until the CPU target is imported and every compile sent to the background
    thread has finished."""
    with _idle:
        _idle.wait_for(lambda: (_cpu is not None or not _worker.is_alive())
                       and _started <= _done)


def pending() -> int:
    """The number of kernels launched and not compiled (or loaded) yet, nor failed to:
    `wait` waits for them."""
    with _idle:
        return len(_early) + len(_started - _done)


def _send(compiled, launch_args: tuple) -> None:
    """Send `compiled` to the background thread, for the argument types of the launch
    whose outputs, shape, inputs and arguments are `launch_args` (call with `_idle`
    held)."""
    import numba  # imported with the CPU target

    if id(compiled) not in _started:
        _started.add(id(compiled))
        outs, shape, inputs, args = launch_args
        call = (*outs, shape, numba.get_num_threads(), *inputs, *args)
        _compiles.put((compiled, tuple(numba.typeof(a) for a in call)))
        _ensure_worker()


def _ensure_worker() -> None:
    if not _worker.is_alive():
        _worker.start()


def _work() -> None:
    """The background thread: import the CPU target and queue the kernels launched
    meanwhile, then compile what is sent, in order."""
    global _cpu, _import_error
    try:
        cpu = importlib.import_module("numgrad.kernels.cpu")
    except Exception as error:  # (a bad NUMGRAD_VECTOR_BITS, say): the next launch raises it
        with _idle:
            _import_error = error
            _idle.notify_all()
        return
    with _idle:
        for (program, shape), (outs, inputs, args) in _early.items():
            compiled = cpu.kernel(program, cpu.variant(program, shape))
            _send(compiled, (outs, shape, inputs, args))
        _early.clear()  # (their arrays are not kept)
        _cpu = cpu
        _idle.notify_all()
    while True:
        compiled, signature = _compiles.get()
        if not _stopping:
            disk_before = cpu.compile_state(compiled)[1]
            try:
                with cpu.vector_width.wide:
                    compiled.compile(signature)
            except Exception as error:  # the compiled tier's next launch raises it
                logging.getLogger("numgrad").debug("background compile failed: %s", error)
            else:
                loaded = cpu.compile_state(compiled)[1] > disk_before
                _obtained[id(compiled)] = DISK if loaded else COMPILED
        with _idle:
            _done.add(id(compiled))
            _idle.notify_all()


def _stop() -> None:
    """At exit: finish the compile under way (its machine code is being saved), skip
    the rest."""
    global _stopping
    _stopping = True
    with _idle:
        _idle.wait_for(lambda: _started <= _done)


def _new_worker() -> threading.Thread:
    return threading.Thread(target=_work, name="numgrad-compile", daemon=True)


def _after_fork() -> None:
    """In a forked child, which has no background thread: new locks, queue and thread;
    kernels the parent had not finished with are compiled again when launched here."""
    global _compiles, _idle, _worker
    _compiles, _idle, _worker = queue.SimpleQueue(), threading.Condition(), _new_worker()
    _started.intersection_update(_done)
    _early.clear()


_worker = _new_worker()  # started by the first launch that needs it
atexit.register(_stop)
os.register_at_fork(after_in_child=_after_fork)
