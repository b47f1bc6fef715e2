"""The tiered CPU target, numgrad's default (SPEC §7): a kernel the disk cache holds is
loaded at its first launch (a few milliseconds); one it does not is run on the NumPy
interpreter while a worker process compiles it into the disk cache
(`numgrad.kernels.compile_worker`), and loaded at the first launch after that.

So a new program's first results come at the interpreter's speed with no compile in
the way, a known program's at compiled speed, and a loop switches to compiled kernels
as they become ready. The compiler runs in a process rather than a thread: Numba's
compiler holds the GIL, so in a thread it slowed the user's loop as much as it
compiled (`docs/design.md`). This process imports Numba and the CPU target (two thirds
of a second of the GIL) only when there is something to load: at the worker's first
answer, or at the first launch of a program the cache folder has compiled before
(`cache.note_compiled`); it imports them in a thread, and launches meanwhile are
interpreted. Buffers and movements are the CPU's; launches choose the CPU target's loop
skeleton themselves, so the two tiers run the same launches and only who runs the
program differs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import itertools
import os
import pickle
import threading
import time

from numgrad import kernels as _kernels
from numgrad.kernels import COMPILED, DISK, HIT, blas_threads, cache, compile_worker, interpreter
from numgrad.kernels.codegen import MAX_LOOPS, Program
from numgrad.kernels.host import *  # noqa: F403 - buffers and movements
from numgrad.ops import TABLE

#: this target in kernel cache keys (its compiled kernels are the CPU target's own)
key = "tiered"

_cpu = None  # numgrad.kernels.cpu, once the thread has imported it
_importing = False  # whether the thread was started
_import_error: Exception | None = None  # why the thread could not import it (raised by launches)
#: jobs sent to the worker, by (program, loop shape)
_sent: dict[tuple, int] = {}
_job_numbers = itertools.count()
#: the worker's answers, by job: `compile_worker.COMPILED`, `DISK` or `FAILED`
_answers: dict[int, str] = {}
#: why the worker failed a job (for a developer: the next launch of the kernel
#: compiles it here)
_failures: dict[int, str] = {}
#: per program launched: its digest, and whether the cache folder has compiled it before
_programs: dict[Program, tuple[str, bool]] = {}
_idle = threading.Condition()
#: While the thread imports Numba, a launch `YIELD_EVERY` seconds or more after the last
#: launch that waited waits `YIELD_FOR` seconds for it. Without this, a loop of small
#: launches can keep the GIL from the thread for good: CPython makes its holder hand the
#: GIL over only when it has not let go of it for a whole switch interval, and NumPy's
#: calls let go of it for moments all the time (a loop of 3 ms steps ran interpreted for
#: 20 s and more, its kernels never sent to the worker). The thread then has about a
#: sixth of the time: Numba imported in about 1.5 s of such a loop.
YIELD_EVERY, YIELD_FOR = 0.010, 0.002
#: A launch whose kernel is ready to load waits for the thread instead (its import
#: takes two thirds of a second alone), at most this long.
IMPORT_SECONDS = 10.0
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
    _restore_blas()
    program, cpu = kernel, _cpu
    if cpu is None:
        cpu = _unloaded(program, tuple(shape), (outs, shape, inputs, args))
    if cpu is not None and not (loops := cpu.variant(program, shape)).interpreted:
        compiled = cpu.kernel(program, loops)  # writes its source; compiles nothing
        how = HIT if compiled.overloads else _obtain(cpu, compiled, program, loops,
                                                     (outs, shape, inputs, args))
        if how is not None:
            # (a kernel the worker failed to compile compiles here, and raises)
            ran = cpu.launch(compiled, loops, outs, shape, inputs, args)
            return how if ran == HIT else ran
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


def loadable(program: Program, shape: tuple[int, ...]) -> bool:
    """Whether the next launch of `program` over `shape` may run it compiled: the CPU
    target is imported, and the worker answered for it, or was not asked (the disk
    cache may hold it). (Prepared plans that interpret it are told when this may have
    changed, `numgrad.kernels.newly_compiled`, and then run a launch of it again.)"""
    job = _sent.get((program, shape))
    return _cpu is not None and (job is None or job in _answers)


def wait() -> None:
    """Block until the worker has answered for every kernel sent to it, and the CPU
    target is imported if there is anything to load (the next launch of each kernel
    then runs it compiled)."""
    with _idle:
        _idle.wait_for(lambda: _answers.keys() >= set(_sent.values())
                       and (_cpu is not None or _import_error is not None or not _importing))


def pending() -> int:
    """The number of kernel structures (programs) sent to the worker and not answered
    for yet: `wait` waits for them."""
    with _idle:
        return len({program for (program, _), job in _sent.items() if job not in _answers})


def interpreting(launches: list[tuple[Program, tuple[int, ...]]]) -> None:
    """A prepared plan's replay that interprets `launches` ((program, shape) pairs; it
    calls NumPy's functions itself, `numgrad.plan.prepared`): while the thread imports
    the CPU target, let it run as those launches would (`_let_import_run`)."""
    _restore_blas()
    if _importing and _cpu is None:
        with _idle:
            _let_import_run(any(_sent.get(key) in _answers for key in launches))


def _let_import_run(ready: bool) -> None:
    """While the thread imports the CPU target, wait for it: until it is done if a
    kernel about to be interpreted is `ready` (compiled: worth the wait), else now and
    then (`YIELD_EVERY`). (Call with `_idle` held.)"""
    global _yielded
    if not _importing or _cpu is not None:
        return
    if ready:
        _idle.wait_for(lambda: _cpu is not None or _import_error is not None, IMPORT_SECONDS)
    elif time.perf_counter() - _yielded >= YIELD_EVERY:
        _idle.wait(YIELD_FOR)  # (the thread runs meanwhile)
        _yielded = time.perf_counter()


def _unloaded(program: Program, shape: tuple[int, ...], launch_args: tuple):
    """A launch before the CPU target is imported: have the worker compile its kernel
    (unless the cache folder has it: the import starts, and the launch after it loads
    it). Returns the CPU target if it is imported by now."""
    with _idle:
        if _import_error is not None:
            raise _import_error
        if _cpu is not None:
            return _cpu
        name, known = _program(program)
        job = _sent.get((program, shape))
        if not _importing and (known or _answers):
            _start_import()
        _let_import_run(job in _answers)
        if not known and job is None and len(shape) <= MAX_LOOPS:
            _send(program, shape, _described(launch_args, 1), name)
        return _cpu


def _program(program: Program) -> tuple[str, bool]:
    """`program`'s digest (the same in every process) and whether the cache folder
    has compiled it before."""
    found = _programs.get(program)
    if found is None:
        name = hashlib.sha256(pickle.dumps(program, protocol=4)).hexdigest()[:32]
        found = _programs[program] = (name, cache.compiled_before(name))
    return found


def _rows(program: Program) -> tuple:
    """The table rows `program` uses, without their Python functions, so that they
    pickle: the worker adds those its table lacks (rows added at run time; the rows
    whose code is written at their first use are numgrad's own). (A row the worker has
    another version of renders another kernel than this process would load: that one
    then compiles here, as any kernel the worker could not make.)"""
    names = {name for name, *_ in program.code + program.epilogue} | {program.reduce}
    return tuple(dataclasses.replace(row, vjp=None, ref=None) for name in names
                 if (row := TABLE.get(name)) is not None and isinstance(row.code, str))


def _described(launch_args: tuple, threads: int) -> tuple:
    """The kernel call of `launch_args` as the worker types it (`compile_worker.describe`),
    `threads` the CPU kernel's thread count (an int: its type is all that counts)."""
    outs, shape, inputs, args = launch_args
    return compile_worker.describe((*outs, tuple(shape), threads, *inputs, *args))


def _obtain(cpu, compiled, program: Program, loops, launch_args: tuple) -> str | None:
    """How `compiled`, not loaded yet, can run now: loaded from the disk cache
    (`DISK`), compiled by the worker (its answer), or to be compiled here (the worker
    failed); None while the worker is at it. (Plans waiting for compiled kernels are
    told: `numgrad.kernels.newly_compiled`.)"""
    with _idle:
        how = _loaded(cpu, compiled, program, loops, launch_args)
        if how is not None:
            _kernels.newly_compiled += 1
        return how


def _loaded(cpu, compiled, program: Program, loops, launch_args: tuple) -> str | None:
    outs, shape, inputs, args = launch_args
    shape = tuple(shape)
    job = _sent.get((program, shape))
    answer = _answers.get(job) if job is not None else None
    if job is not None and answer is None:
        return None
    signature = tuple(map(cpu.numba.typeof, (*outs, shape, cpu.threads(loops), *inputs,
                                             *args)))
    if job is None:
        if cpu.jit.load(compiled, signature):
            cache.note_compiled(_program(program)[0])
            return DISK
        _send(program, shape, _described(launch_args, cpu.threads(loops)),
              _program(program)[0])
        return None
    if answer != compile_worker.FAILED and cpu.jit.load(compiled, signature):
        return answer
    return COMPILED  # (here, by the launch)


def _send(program: Program, shape: tuple[int, ...], call: tuple, name: str) -> None:
    """Send the kernel of `program` over `shape` to the worker (call with `_idle`
    held)."""
    global _worker
    job = _sent[program, shape] = next(_job_numbers)
    blas_threads.lower()  # (the worker takes a core)
    try:
        if _worker is None:
            _worker = compile_worker.Worker(_answer)
        _worker.send(job, program, shape, call, name, _rows(program))
    except OSError as error:  # no process could be started: the next launch compiles it
        _answer(job, compile_worker.FAILED, f"the compile worker could not start: {error}")


def _restore_blas() -> None:
    """BLAS's threads back, if lowered, once the worker has answered every job
    (`blas_threads`; from the thread that launches, as they were lowered)."""
    if blas_threads.lowered():
        with _idle:
            if len(_answers) == len(_sent):
                blas_threads.restore()


def _answer(job: int, how: str, why: str) -> None:
    """The worker's answer for `job`: the CPU target is imported to load it (or, where
    the worker failed, to compile it)."""
    with _idle:
        _answers[job] = how
        if how == compile_worker.FAILED:
            _failures[job] = why
        if not _importing:
            _start_import()
        _kernels.newly_compiled += 1
        _idle.notify_all()


def _start_import() -> None:
    """Start the thread importing the CPU target (call with `_idle` held)."""
    global _importing
    _importing = True
    _importer.start()


def _import_cpu() -> None:
    """The thread: import the CPU target and load Numba's registries."""
    global _cpu, _import_error
    try:
        cpu = importlib.import_module("numgrad.kernels.cpu")
        cpu.jit.prepare()
    except Exception as error:  # (a bad NUMGRAD_VECTOR_BITS, say): the next launch raises it
        with _idle:
            _import_error = error
            _idle.notify_all()
        return
    with _idle:
        _cpu = cpu
        _kernels.newly_compiled += 1
        _idle.notify_all()


def _new_importer() -> threading.Thread:
    return threading.Thread(target=_import_cpu, name="numgrad-import", daemon=True)


def _after_fork() -> None:
    """In a forked child: new locks and no worker (its own starts when it sends a
    kernel; the parent's copy of the pipe closes here, so the parent's worker still
    stops when the parent exits); kernels not answered for are sent again."""
    global _idle, _importer, _importing, _worker
    if _worker is not None:
        _worker.close()
    _idle, _worker = threading.Condition(), None
    if _cpu is None:
        _importer, _importing = _new_importer(), False
    for key, job in list(_sent.items()):
        if job not in _answers:
            del _sent[key]


_importer = _new_importer()  # started by `_start_import`
os.register_at_fork(after_in_child=_after_fork)
