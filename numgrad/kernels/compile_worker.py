"""The compile worker: a process that compiles the tiered target's kernels into the disk
cache, so that Numba's compiler, which holds the GIL while it works, never competes
with the user's thread, and the user's process need not import Numba before a kernel
is ready.

The parent (`Worker`) sends each job, a kernel's `Program`, the launch's loop shape and
its call described without Numba (`describe`), pickled on the worker's standard input;
the worker writes the kernel's module as the CPU target does, compiles it for the
call's Numba types (`numba_types`; or finds it in the disk cache, where another process
put it), notes the program in the cache folder (`cache.note_compiled`), and answers
one line, ``<job> compiled|disk`` or ``<job> failed <why>``, on its standard output.
A thread of the parent writes the jobs and another reads the answers; a thread of the
worker reads every job as it comes, so the pipe never fills. The parent never waits
for a compile: at its exit it hands over the jobs not written yet (milliseconds) and
closes its end of the pipe, and the worker compiles what it was sent, for the
parent's next run, and exits.
"""

from __future__ import annotations

import atexit
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from numgrad.kernels import COMPILED, DISK, cache
from numgrad.kernels.codegen import Program
from numgrad.ops import TABLE

#: How a job ended, as the worker reports it: `COMPILED`, `DISK` (another process had
#: put it in the disk cache), or this.
FAILED = "failed"
#: The worker's exit code when it could not read a job (the parent answers the jobs it
#: owed as failed, with the exit code)
UNREADABLE = 3
#: The longest the parent's exit waits for the jobs not written yet to be written (the
#: worker reads them as they come, so this is milliseconds unless it hangs).
HANDOVER_SECONDS = 5.0


class ArrayType(NamedTuple):
    """An array argument as Numba types it (``numba.typeof``), told without Numba."""

    dtype: str
    ndim: int
    layout: str  # "C", "F" or "A", as Numba's `map_layout` says
    writeable: bool


def describe(call) -> tuple:
    """The arguments `call` of a kernel launch with each array as its `ArrayType` (the
    rest, scalars and the shape, pickle as they are)."""
    return tuple(ArrayType(a.dtype.str, a.ndim, "C" if a.flags.c_contiguous else
                           "F" if a.flags.f_contiguous else "A", a.flags.writeable)
                 if isinstance(a, np.ndarray) else a for a in call)


def numba_types(description: tuple) -> tuple:
    """The Numba signature of a call `describe` described: what ``numba.typeof`` gives
    for its arguments."""
    import numba
    from numba.np.numpy_support import from_dtype

    return tuple(numba.types.Array(from_dtype(np.dtype(a.dtype)), a.ndim, a.layout,
                                   readonly=not a.writeable)
                 if type(a) is ArrayType else numba.typeof(a) for a in description)


class Worker:
    """The parent's handle on one worker process: `send` jobs, `answered(job, how,
    why)` called (from a thread) for each answer (`why` says why a job failed), and
    for every job still owed if the worker dies. A thread writes the jobs, so that a
    caller never waits on the pipe, and at exit hands over those not written yet."""

    def __init__(self, answered: Callable[[int, str, str], None]):
        import numgrad

        root = str(Path(numgrad.__file__).resolve().parent.parent)
        path = os.environ.get("PYTHONPATH")
        env = dict(os.environ, PYTHONPATH=root if not path else f"{root}{os.pathsep}{path}",
                   NUMGRAD_CACHE_DIR=str(cache.folder()))  # (this process's, if private)
        self._answered = answered
        #: the jobs not answered for yet; None once the worker has exited
        self._owed: set[int] | None = set()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "numgrad.kernels.compile_worker"], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True)  # (a Ctrl-C in the terminal is the user's process's)
        self._writer = threading.Thread(target=self._write, name="numgrad-compile-jobs",
                                        daemon=True)
        self._writer.start()
        threading.Thread(target=self._read, name="numgrad-compile-answers",
                         daemon=True).start()
        atexit.register(self._hand_over)

    def send(self, job: int, program: Program, shape: tuple[int, ...], call: tuple,
             name: str, rows: tuple) -> None:
        """Have the worker compile the CPU kernel of `program` for a launch over `shape`
        with arguments `call` (`describe`d), and note `name` (the program's digest) in
        the cache folder; `rows` are the table rows it uses (added to the worker's
        table where it lacks them). Returns at once."""
        with self._lock:
            gone = self._owed is None
            if not gone:
                self._owed.add(job)
                self._jobs.put((job, program, shape, call, name, rows))
        if gone:
            self._answered(job, FAILED, "the compile worker had exited")

    def close(self) -> None:
        """Close the worker's input (this process's copy of it)."""
        try:
            self._process.stdin.close()
        except OSError:
            pass

    def _hand_over(self) -> None:
        """At exit: let the writer write the jobs still queued, then close the pipe
        (the worker compiles them after this process is gone)."""
        self._jobs.put(None)
        self._writer.join(HANDOVER_SECONDS)

    def _write(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                data = pickle.dumps(job)
            except Exception as error:  # (an argument that does not pickle)
                with self._lock:
                    if self._owed is not None:
                        self._owed.discard(job[0])
                self._answered(job[0], FAILED, f"the job could not be sent: {error}")
                continue
            try:
                self._process.stdin.write(data)
                self._process.stdin.flush()
            except (OSError, ValueError):  # the worker is gone (or the pipe closed):
                return  # the reader answers for what it owed
        self.close()

    def _read(self) -> None:
        for line in self._process.stdout:
            job, how, *why = line.decode().split(maxsplit=2)
            with self._lock:
                self._owed.discard(int(job))
            self._answered(int(job), how, "".join(why).strip())
        with self._lock:  # the worker exited: nothing more comes
            owed, self._owed = self._owed, None
        why = f"the compile worker exited with code {self._process.wait()}"
        for job in owed:
            self._answered(job, FAILED, why)


def _receive(jobs: queue.SimpleQueue) -> None:
    """The worker's reading thread: queue each job as it comes, then None (the parent
    closed the pipe), or a job that could not be read: `UNREADABLE`."""
    while True:
        try:
            jobs.put(pickle.load(sys.stdin.buffer))
        except EOFError:
            jobs.put(None)
            return
        except Exception:
            jobs.put(UNREADABLE)
            return


def _serve() -> int:
    """The worker: compile each job read from standard input, in order, until it
    closes. Numba is imported before the first job is read (the reading thread could
    otherwise meet it half imported)."""
    from numgrad.kernels import cpu

    jobs: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=_receive, args=(jobs,), daemon=True).start()
    while (received := jobs.get()) not in (None, UNREADABLE):
        job, program, shape, call, name, rows = received
        try:
            for row in rows:
                TABLE.setdefault(row.name, row)
            loops = cpu.variant(program, shape)
            if loops.interpreted:
                raise ValueError(f"a loop nest of {len(shape)} dimensions is interpreted")
            kernel = cpu.kernel(program, loops)
            disk_before = cpu.compile_state(kernel)[1]
            with cpu.vector_width.wide:
                kernel.compile(numba_types(call))
            how = DISK if cpu.compile_state(kernel)[1] > disk_before else COMPILED
            cache.note_compiled(name)
        except Exception as error:  # the parent compiles it itself, and raises what it meets
            how = f"{FAILED} {' '.join(f'{type(error).__name__}: {error}'.split())}"
        try:
            sys.stdout.write(f"{job} {how}\n")
            sys.stdout.flush()
        except OSError:  # the parent exited: the rest is for its next run
            pass
    return 0 if received is None else UNREADABLE


if __name__ == "__main__":  # (served by the package's module, whose `ArrayType` jobs hold)
    from numgrad.kernels import compile_worker

    sys.exit(compile_worker._serve())
