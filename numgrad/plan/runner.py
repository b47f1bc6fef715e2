"""The steps of a prepared plan, typed: each runs itself and writes itself out.

A prepared plan (`numgrad.plan.prepared`) is a list of steps over the array of every
slot (``a``), run with the plan's rebound constants (``values``: `Plan.values`, or
None for the template's own), the thread count, the small arrays its last run handed
out (``kept``, per slot) and the arrays its cached views were made from (``bases``).
A replay runs the steps one by one (`run`) until the plan has been replayed often
enough to earn back writing them out as one Python function (`written_out`: about
10 us per line, a few ms for a training step's plan), which runs the same statements
without the loop over the steps, the attribute reads and the branches. Each step's
class holds both forms side by side, and a test runs every replay in both.

A small array the plan writes anew is written into the array it handed out last time
when nothing else refers to it any more (`unused`): whoever holds a result (a tensor,
a view of it, a pending node that reads it) holds a reference. The plan cannot know
which results a caller keeps, so the count is the ownership test (docs/decisions.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from numgrad.plan.views import make_view


def unused(array, readers: list[int], bases: list) -> bool:
    """Whether nothing but the plan refers to `array`, the small buffer it kept (in
    ``kept``) and of which it made the views `readers` (each: the array in ``bases``, and
    in the argument list itself or through its view)."""
    # (``kept``, the caller's variable, this function's argument, getrefcount's own)
    ours = 4
    for h in readers:  # (a loop: a generator costs more than the test)
        if bases[h] is array:
            ours += 2
    return sys.getrefcount(array) == ours


class Step:
    """One step of a prepared plan."""

    #: the slots let go of once it has run: written anew at each run, no caller's, and
    #: read by no later step (`numgrad.plan.prepared`: their memory is then reused
    #: within the run, as an eager program's is)
    drops: tuple[int, ...] = ()

    def slots(self) -> list[int]:
        """The slots it reads from the run's arrays and writes."""
        raise NotImplementedError

    def run(self, a: list, values, threads: int, kept: list, bases: list) -> int:
        """Run the step; returns the bytes it allocated."""
        raise NotImplementedError

    def lines(self, bound: Callable[[object], str]) -> list[str]:
        """The statements that run the step, with what it holds named by `bound`."""
        raise NotImplementedError

    def let_go(self) -> None:
        """Drop what it keeps from the last run (the arrays it reads)."""


class Called(Step):
    """A call of the backend's `fn` (a matmul, a library call, a movement) whose result
    is a new array or a view; `call` is the template's step (its `index`), whose
    argument a rebound plan's `values` replace."""

    def __init__(self, fn: Callable, call, index: int):
        self.fn, self.call, self.index = fn, call, index
        self.inputs, self.output = call.inputs, call.output

    def arg(self, values):
        bound = values[self.index] if values is not None else None
        return self.call.arg if bound is None else self.call.bound_arg(bound)

    def slots(self):
        return [*self.inputs, self.output]

    def run(self, a, values, threads, kept, bases):
        a[self.output] = self.fn(*[a[s] for s in self.inputs], self.arg(values))
        return 0

    def lines(self, bound):
        return [*self._arg_lines(bound), f"    a[{self.output}] = {self._called(bound)})"]

    def _arg_lines(self, bound) -> list[str]:
        return [f"    arg = {bound(self.call.arg)} if values is None or values[{self.index}] "
                f"is None else {bound(self.call)}.bound_arg(values[{self.index}])"]

    def _called(self, bound) -> str:
        """``fn(a[i], a[j], arg``, the call left open."""
        return f"{bound(self.fn)}({''.join(f'a[{s}], ' for s in self.inputs)}arg"


class CalledInto(Called):
    """A call that writes into a buffer the plan keeps (``out=``)."""

    def run(self, a, values, threads, kept, bases):
        self.fn(*[a[s] for s in self.inputs], self.arg(values), out=a[self.output])
        return 0

    def lines(self, bound):
        return [*self._arg_lines(bound), f"    {self._called(bound)}, out=a[{self.output}])"]


class Filled(Called):
    """``full``: a new array of the slot's `shape` and `dtype`, filled."""

    def __init__(self, fn: Callable, call, index: int, shape: tuple, dtype):
        super().__init__(fn, call, index)
        self.shape, self.dtype = shape, dtype

    def run(self, a, values, threads, kept, bases):
        a[self.output] = self.fn(self.shape, self.arg(values), self.dtype)
        return 0

    def lines(self, bound):
        return [*self._arg_lines(bound), f"    a[{self.output}] = {bound(self.fn)}("
                f"{bound(self.shape)}, arg, {bound(self.dtype)})"]


class Recycled(Called):
    """A call (a small matmul) into the array it gave last time, if nothing else holds
    it; else a new one, kept for the next run. `readers`: its cached views' places."""

    def __init__(self, fn: Callable, call, index: int, readers: list[int]):
        super().__init__(fn, call, index)
        self.readers = readers

    def run(self, a, values, threads, kept, bases):
        ins, arg, out = [a[s] for s in self.inputs], self.arg(values), self.output
        array, allocated = kept[out], 0
        if array is not None and unused(array, self.readers, bases):
            self.fn(*ins, arg, out=array)
        else:
            array = kept[out] = self.fn(*ins, arg)
            allocated = array.nbytes
        a[out] = array
        return allocated

    def lines(self, bound):
        out, called = self.output, self._called(bound)
        return [*self._arg_lines(bound),
                f"    array = kept[{out}]",
                f"    if array is not None and unused(array, {bound(self.readers)}, bases):",
                f"        {called}, out=array)",
                "    else:",
                f"        array = kept[{out}] = {called})",
                "        allocated += array.nbytes",
                f"    a[{out}] = array"]


class Launched(Step):
    """A kernel's launch (`kernel`, its compiled function; None: nothing to compute,
    only its `outputs` made). `outputs`: per slot written anew, ``(slot, its Slot,
    readers)`` (readers None: a large array, never kept). `arguments`: the kernel's
    argument list, filled once; `holes`: per argument filled at each run, ``(position,
    slot, view spec, place in bases or None)``; the thread count goes at `threads_at`,
    and `own` (the template's scalars, or None) at the end unless the rebound plan's
    `values` (at `index`) replace them."""

    def __init__(self, kernel, outputs: list[tuple], arguments: list, holes: list[tuple],
                 threads_at: int, index: int, own: tuple | None, backend):
        self.kernel, self.outputs, self.arguments, self.holes = kernel, outputs, arguments, holes
        self.threads_at, self.index, self.own, self.backend = threads_at, index, own, backend

    def slots(self):
        return [slot for _, slot, _, _ in self.holes] + [slot for slot, _, _ in self.outputs]

    def run(self, a, values, threads, kept, bases):
        allocated = 0
        for slot, info, readers in self.outputs:
            array = kept[slot]
            if array is None or not unused(array, readers, bases):
                array = self.backend.empty(info.shape, info.dtype)
                allocated += array.nbytes
                if readers is not None:
                    kept[slot] = array
            a[slot] = array
        if self.kernel is None:
            return allocated
        # (The argument list is the plan's: filled in and used; the views of small
        # arrays stay in it, those of large ones are emptied again.)
        arguments = self.arguments
        arguments[self.threads_at] = threads
        if self.own:  # the rebound plan's scalars, else the template's own: always
            # written, since another rebinding of the plan may have left its own
            bound = values[self.index] if values is not None else None
            arguments[-len(self.own):] = self.own if bound is None else bound
        for position, slot, spec, cached in self.holes:
            base = a[slot]
            if cached is None or bases[cached] is not base:
                arguments[position] = make_view(self.backend, base, spec)
                if cached is not None:
                    bases[cached] = base
        self.kernel(*arguments)
        for position, _, _, cached in self.holes:
            if cached is None:
                arguments[position] = None
        return allocated

    def lines(self, bound):
        lines = []
        for slot, info, readers in self.outputs:
            shape, dtype = bound(info.shape), bound(info.dtype)
            if readers is None:
                lines += [f"    array = a[{slot}] = empty({shape}, {dtype})",
                          "    allocated += array.nbytes"]
                continue
            lines += [f"    array = kept[{slot}]",
                      f"    if array is None or not unused(array, {bound(readers)}, bases):",
                      f"        array = kept[{slot}] = empty({shape}, {dtype})",
                      "        allocated += array.nbytes",
                      f"    a[{slot}] = array"]
        if self.kernel is None:
            return lines
        args = bound(self.arguments)
        lines.append(f"    {args}[{self.threads_at}] = threads")
        if self.own:
            lines.append(f"    {args}[-{len(self.own)}:] = {bound(self.own)} if values is None "
                         f"or values[{self.index}] is None else values[{self.index}]")
        for position, slot, spec, cached in self.holes:
            made = "base" if spec[3] == "same" else f"view(backend, base, {bound(spec)})"
            lines.append(f"    base = a[{slot}]")
            if cached is None:
                lines.append(f"    {args}[{position}] = {made}")
            else:
                lines += [f"    if bases[{cached}] is not base:",
                          f"        {args}[{position}] = {made}",
                          f"        bases[{cached}] = base"]
        lines.append(f"    {bound(self.kernel)}(*{args})")
        lines += [f"    {args}[{position}] = None" for position, _, _, cached in self.holes
                  if cached is None]
        return lines

    def let_go(self):
        for position, _, _, cached in self.holes:
            if cached is not None:
                self.arguments[position] = None


def run(steps: list[Step], fixed_bytes: int) -> Callable:
    """``replay(a, values, threads, kept, bases)``, which runs `steps` one by one and
    returns the bytes they allocated, `fixed_bytes` (the calls' results) included."""

    def replay(a, values, threads, kept, bases) -> int:
        allocated = fixed_bytes
        for step in steps:
            allocated += step.run(a, values, threads, kept, bases)
            for slot in step.drops:
                a[slot] = None
        return allocated

    return replay


def written_out(steps: list[Step], fixed_bytes: int, backend) -> Callable:
    """`run`'s function for `steps` written out as one (the same arguments and
    result), made once per plan."""
    names = dict(unused=unused, view=make_view, backend=backend, empty=backend.empty)

    def bound(value) -> str:
        """A name for `value` in the function's namespace."""
        name = f"_{len(names)}"
        names[name] = value
        return name

    lines = ["def replay(a, values, threads, kept, bases):", f"    allocated = {fixed_bytes}"]
    for step in steps:
        lines += step.lines(bound)
        lines += [f"    a[{slot}] = None" for slot in step.drops]
    lines.append("    return allocated")
    exec(compile("\n".join(lines), "<numgrad prepared replay>", "exec"), names)
    return names["replay"]
