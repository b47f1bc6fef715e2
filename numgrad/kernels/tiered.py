"""The tiered CPU target, numgrad's default (SPEC §7): a kernel the disk cache holds is
loaded at its first launch (a few milliseconds); one it does not is run on the NumPy
interpreter while a worker process compiles it into the disk cache
(`numgrad.kernels.compile_worker`), and loaded at the first launch after that.

So a new program's first results come at the interpreter's speed with no compile in
the way, a known program's at compiled speed, and a loop switches to compiled kernels
as they become ready. The compiler runs in a process rather than a thread: Numba's
compiler holds the GIL, so in a thread it slowed the user's loop as much as it
compiled (`docs/design.md`). A thread imports Numba and the CPU target (a third of a
second) first; launches meanwhile are interpreted. Buffers and movements are the CPU's;
launches choose the CPU target's loop skeleton themselves, so the two tiers run the
same launches and only who runs the program differs.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time

from numgrad import kernels as _kernels
from numgrad.kernels import COMPILED, DISK, HIT, compile_worker, interpreter
from numgrad.kernels.codegen import Program
from numgrad.kernels.host import *  # noqa: F403 - buffers and movements

#: this target in kernel cache keys (its compiled kernels are the CPU target's own)
key = "tiered"

_cpu = None  # numgrad.kernels.cpu, once the thread has imported it
_import_error: Exception | None = None  # why the thread could not import it (raised by launches)
#: launches before that, by (program, shape): their outputs, inputs and arguments
_early: dict[tuple, tuple] = {}
#: kernels (by id) sent to the worker: the signature it compiles
_sent: dict[int, tuple] = {}
#: the worker's answers, by kernel: `compile_worker.COMPILED`, `DISK` or `FAILED`
_answers: dict[int, str] = {}
#: why the worker failed a kernel, by kernel (for a developer: the next launch of
#: the kernel compiles it here)
_failures: dict[int, str] = {}
#: how kernels loaded away from their launches were obtained: reported by the first
#: launch that runs each
_obtained: dict[int, str] = {}
_idle = threading.Condition()
#: While the thread imports Numba, a launch `YIELD_EVERY` seconds or more after the last
#: launch that waited waits `YIELD_FOR` seconds for it. Without this, a loop of small
#: launches can keep the GIL from the thread for good: CPython makes its holder hand the
#: GIL over only when it has not let go of it for a whole switch interval, and NumPy's
#: calls let go of it for moments all the time (a loop of 3 ms steps ran interpreted for
#: 20 s and more, its kernels never sent to the worker). The thread then has about a
#: sixth of the time: Numba imported in about 1.5 s of such a loop.
YIELD_EVERY, YIELD_FOR = 0.010, 0.002
_yielded = 0.0  # (when a launch last waited: `time.perf_counter`)
_worker: compile_worker.Worker | None = None  # started by the first kernel sent


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
    """Run the compiled kernel if it is loaded, or can be from the disk cache;
    otherwise have the worker compile it, and interpret the program now."""
    global _yielded
    program, cpu = kernel, _cpu
    if cpu is None:  # still importing: the thread sends it when it is done
        with _idle:
            if _import_error is not None:
                raise _import_error
            if _cpu is None:
                _early.setdefault((program, tuple(shape)), (outs, inputs, args))
                if not _importer.is_alive():
                    _importer.start()
                elif time.perf_counter() - _yielded >= YIELD_EVERY:
                    _idle.wait(YIELD_FOR)  # (the thread runs meanwhile)
                    _yielded = time.perf_counter()
            cpu = _cpu
    if cpu is not None and not (loops := cpu.variant(program, shape)).interpreted:
        compiled = cpu.kernel(program, loops)  # writes its source; compiles nothing
        how = HIT if compiled.overloads else _obtain(cpu, compiled, loops,
                                                     (outs, shape, inputs, args))
        if how is not None:
            # (a kernel the worker failed to compile compiles here, and raises)
            ran = cpu.launch(compiled, loops, outs, shape, inputs, args)
            return _obtained.pop(id(compiled), how) if ran == HIT else ran
    interpreted = interpreter.kernel(program, interpreter.ARRAYS)
    return interpreter.launch(interpreted, interpreter.ARRAYS, outs, shape, inputs, args)


def compiled(program: Program, shape: tuple[int, ...]):
    """The CPU target's compiled kernel of `program` over `shape` and its variant, once
    it is loaded; else None. (Prepared plans call compiled kernels directly:
    `numgrad.plan.prepared`.)"""
    cpu = _cpu
    if cpu is None:
        return None
    loops = cpu.variant(program, shape)
    if loops.interpreted:
        return None
    kernel = cpu.kernel(program, loops)
    return (kernel, loops) if kernel.overloads else None


def wait() -> None:
    """Block until the CPU target is imported and the worker has answered for every
    kernel sent to it (the next launch of each then runs it compiled)."""
    with _idle:
        _idle.wait_for(lambda: (_cpu is not None or not _importer.is_alive())
                       and _answers.keys() >= _sent.keys())


def pending() -> int:
    """The number of kernels launched and neither loaded nor answered for yet: `wait`
    waits for them."""
    with _idle:
        return len(_early) + len(_sent.keys() - _answers.keys())


def _obtain(cpu, compiled, loops, launch_args: tuple) -> str | None:
    """How `compiled`, not loaded yet, can run now: loaded from the disk cache
    (`DISK`), compiled by the worker (its answer), or to be compiled here (the worker
    failed); None while the worker is at it. (Plans waiting for compiled kernels are
    told: `numgrad.kernels.newly_compiled`.)"""
    with _idle:
        how = _loaded(cpu, compiled, loops, launch_args)
        if how is not None:
            _kernels.newly_compiled += 1
        return how


def _loaded(cpu, compiled, loops, launch_args: tuple) -> str | None:
    answer = _answers.get(id(compiled))
    if id(compiled) not in _sent:
        signature = _signature(cpu, loops, launch_args)
        if cpu.jit.load(compiled, signature):
            return DISK
        _send(compiled, signature)
        return None
    if answer is None:
        return None
    if answer != compile_worker.FAILED and cpu.jit.load(compiled, _sent[id(compiled)]):
        return answer
    return COMPILED  # (here, by the launch)


def _signature(cpu, loops, launch_args: tuple) -> tuple:
    """The Numba types of the kernel call that launches `launch_args` make."""
    outs, shape, inputs, args = launch_args
    call = (*outs, shape, cpu.threads(loops), *inputs, *args)
    return tuple(cpu.numba.typeof(a) for a in call)


def _send(compiled, signature: tuple) -> None:
    """Send `compiled` to the worker (call with `_idle` held)."""
    global _worker
    code = compiled.py_func
    module = sys.modules[code.__module__]
    _sent[id(compiled)] = signature
    try:
        if _worker is None:
            _worker = compile_worker.Worker(_answer)
        _worker.send(id(compiled), (code.__code__.co_filename, module.__loader__.text,
                                    code.__module__, code.__name__), signature)
    except OSError as error:  # no process could be started: the next launch compiles it
        _answers[id(compiled)] = compile_worker.FAILED
        _failures[id(compiled)] = f"the compile worker could not start: {error}"


def _answer(job: int, how: str, why: str) -> None:
    with _idle:
        _answers[job] = how
        if how == compile_worker.FAILED:
            _failures[job] = why
        _idle.notify_all()


def _import_cpu() -> None:
    """The thread: import the CPU target, then load or send the kernels launched
    meanwhile."""
    global _cpu, _import_error
    try:
        cpu = importlib.import_module("numgrad.kernels.cpu")
        cpu.jit.prepare()
    except Exception as error:  # (a bad NUMGRAD_VECTOR_BITS, say): the next launch raises it
        with _idle:
            _import_error = error
            _idle.notify_all()
        return
    while True:  # (the kernels are made without the lock: launches go on meanwhile)
        with _idle:
            early = list(_early.items())
            _early.clear()  # (their arrays are not kept)
            if not early:
                _cpu = cpu
                _idle.notify_all()
                return
        for (program, shape), (outs, inputs, args) in early:
            loops = cpu.variant(program, shape)
            if loops.interpreted:
                continue
            compiled = cpu.kernel(program, loops)
            if not compiled.overloads:
                how = _obtain(cpu, compiled, loops, (outs, shape, inputs, args))
                if compiled.overloads:  # (loaded: its first launch reports how)
                    _obtained[id(compiled)] = how


def _new_importer() -> threading.Thread:
    return threading.Thread(target=_import_cpu, name="numgrad-import", daemon=True)


def _after_fork() -> None:
    """In a forked child: new locks and no worker (its own starts when it sends a
    kernel; the parent's copy of the pipe closes here, so the parent's worker still
    stops when the parent exits); kernels not answered for are sent again."""
    global _idle, _importer, _worker
    if _worker is not None:
        _worker.close()
    _idle, _worker = threading.Condition(), None
    if _cpu is None:
        _importer = _new_importer()
    for job in _sent.keys() - _answers.keys():
        del _sent[job]
    _early.clear()


_importer = _new_importer()  # started by the first launch
os.register_at_fork(after_in_child=_after_fork)
