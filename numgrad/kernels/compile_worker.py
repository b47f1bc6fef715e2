"""The compile worker: a process that compiles the tiered target's kernels into the disk
cache, so that Numba's compiler, which holds the GIL while it works, never competes
with the user's thread.

The parent (`Worker`) sends each job, the kernel's module (path, text, names) and the
Numba signature of a launch, pickled on the worker's standard input; the worker
compiles it (or finds it in the disk cache, where another process put it) and answers
one line, ``<job> compiled|disk|failed``, on its standard output. A thread of the
parent reads the answers. The parent never waits for the worker: when the parent's
end of the pipe closes (it exited), the worker compiles the kernels it was sent, for
the parent's next run, and exits.
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from numgrad.kernels import COMPILED, DISK

#: How a job ended, as the worker reports it: `COMPILED`, `DISK` (another process had
#: put it in the disk cache), or this.
FAILED = "failed"


class Worker:
    """The parent's handle on one worker process: `send` jobs, `answered(job, how)`
    called (from a thread) for each answer, and for every job still owed if the
    worker dies. A thread writes the jobs: the pipe holds a few of them, and the
    worker reads the next only when it has compiled the last, so a caller that
    wrote them itself would wait for the compiles."""

    def __init__(self, answered: Callable[[int, str], None]):
        import numgrad

        root = str(Path(numgrad.__file__).resolve().parent.parent)
        path = os.environ.get("PYTHONPATH")
        env = dict(os.environ, PYTHONPATH=root if not path else f"{root}{os.pathsep}{path}")
        self._answered = answered
        #: the jobs not answered for yet; None once the worker has exited
        self._owed: set[int] | None = set()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "numgrad.kernels.compile_worker"], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True)  # (a Ctrl-C in the terminal is the user's process's)
        threading.Thread(target=self._write, name="numgrad-compile-jobs", daemon=True).start()
        threading.Thread(target=self._read, name="numgrad-compile-answers",
                         daemon=True).start()

    def send(self, job: int, module: tuple[str, str, str, str], signature: tuple) -> None:
        """Have the worker compile the kernel `name` of `module` (path, text, module
        name, function name) for `signature` (Numba types). Returns at once."""
        with self._lock:
            gone = self._owed is None
            if not gone:
                self._owed.add(job)
                self._jobs.put((job, module, signature))
        if gone:
            self._answered(job, FAILED)

    def close(self) -> None:
        """Close the worker's input (this process's copy of it)."""
        try:
            self._process.stdin.close()
        except OSError:
            pass

    def _write(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                pickle.dump(job, self._process.stdin)
                self._process.stdin.flush()
            except (OSError, ValueError):  # the worker is gone (or the pipe closed):
                return  # the reader answers for what it owed

    def _read(self) -> None:
        for line in self._process.stdout:
            job, how = line.decode().split()
            with self._lock:
                self._owed.discard(int(job))
            self._answered(int(job), how)
        with self._lock:  # the worker exited: nothing more comes
            owed, self._owed = self._owed, None
        for job in owed:
            self._answered(job, FAILED)


def _serve() -> None:
    """The worker: compile each job read from standard input, in order, until it
    closes."""
    from numgrad.kernels import cache, cpu

    while True:
        try:
            job, (path, text, module, name), signature = pickle.load(sys.stdin.buffer)
        except Exception:  # (EOFError: the parent closed it, or exited)
            return
        try:
            kernel = cache.load_module(Path(path), text, module, name)
            disk_before = cpu.compile_state(kernel)[1]
            with cpu.vector_width.wide:
                kernel.compile(signature)
            how = DISK if cpu.compile_state(kernel)[1] > disk_before else COMPILED
        except Exception:  # the parent compiles it itself, and raises what it meets
            how = FAILED
        try:
            sys.stdout.write(f"{job} {how}\n")
            sys.stdout.flush()
        except OSError:  # the parent exited: the rest is for its next run
            pass


if __name__ == "__main__":
    _serve()
