"""Plans run many times, prepared once: ``ng.jit``'s replays and eager loops on the CPU.

The values a call computes for its own use (intermediates) live in buffers allocated
once, when the plan is prepared, and reused by every replay; so are the views of them
that kernels read, the index arrays gathers read, and each launch's arguments. A
replay then fills in what changes from call to call (the sources, the results and
updated state, which are new arrays at every call, and the outputs of matmuls and
library calls) and calls each kernel's compiled function directly: about a
microsecond per launch, plus the work. A replay needs the engine lock (the buffers
are shared by the calls of one trace).

An eager loop that builds the same graph at every step gets the same schedule back
(`numgrad.engine.reuse`), rebound to the step's buffers and constants: `run_reused`
prepares it at its second run, with no buffers of its own (every value it computes
may be kept by a tensor), and replays it with each step's constants after that.
"""

from __future__ import annotations

import sys

import numpy as np

from numgrad.engine import counters
from numgrad.engine.launch import bind, run
from numgrad.engine.steps import Call, Launch, Schedule
from numgrad.kernels.host import basic_key

#: Calls whose result may be a view of their first input
_MOVEMENTS = ("reshape", "permute", "expand", "index")


class Unsupported(Exception):
    """A plan (or one of its views) that a prepared plan does not handle."""


class PreparedPlan:
    """`plan` with its intermediates in buffers of its own; `run` replays it."""

    def __init__(self, plan: Schedule, arrays: list, spy: list, needed: set[int],
                 fixed: dict[int, object]):
        backend = plan.slots[0].device.backend
        self.plan, self.backend, self.empty = plan, backend, backend.empty
        records = iter(spy)
        launches = [(step, next(records) if isinstance(step, Launch) else None)
                    for step in plan.steps]
        fresh = _fresh(plan, arrays, needed)
        #: the array of every slot that stays from call to call (None: filled per call);
        #: index arrays are uploaded once, and sources that are the same array at every
        #: call (`fixed`, by slot) are bound once
        self.static: list = bind(plan, [])
        for slot, array in fixed.items():
            self.static[slot] = array
        self.steps: list[tuple] = []
        launched = called = allocated = 0
        parallel = False  # whether a kernel needs the thread count (`cpu.threads`)
        for index, (step, record) in enumerate(launches):
            if isinstance(step, Call):
                view = step.op in _MOVEMENTS and _is_view(arrays[step.output],
                                                          arrays[step.inputs[0]])
                if view and self.static[step.inputs[0]] is not None:
                    self.static[step.output] = getattr(backend, step.op)(
                        self.static[step.inputs[0]], step.arg)
                    continue
                result = arrays[step.output]
                into = _into(step, result, fresh)
                if into:  # a value the plan keeps, computed into its own buffer
                    info = plan.slots[step.output]
                    self.static[step.output] = np.zeros(info.shape, info.dtype)
                if not view and (into or not backend.is_view(result)):  # `run_call`'s count
                    called += 1
                    allocated += 0 if into else result.nbytes
                how = "view" if view else "into" if into else \
                    "full" if step.op == "full" else "call"
                self.steps.append((index, how, getattr(backend, step.op)))
                continue
            outputs = []  # slots allocated at each call
            for slot in step.outputs:
                if slot in fresh:
                    outputs.append(slot)
                elif self.static[slot] is None:
                    info = plan.slots[slot]
                    self.static[slot] = backend.empty(info.shape, info.dtype)
            if record is None:  # nothing to compute
                self.steps.append((None, outputs, [], [], 0, index))
                continue
            kernel, variant, shape, targets, views = record
            if not _compiled(kernel):  # tiered: the CPU kernel, once compiled
                ready = getattr(backend, "compiled", None)
                found = ready(kernel, shape) if ready is not None else None
                if found is None:
                    raise Unsupported
                kernel, variant = found
            launched += 1
            parallel = parallel or variant.parallel
            allocated += sum(arrays[s].nbytes for s in outputs)
            arguments, holes = [], []
            slots = [*step.outputs, None, None, *(r.slot for r in step.inputs), *step.tables]
            for slot, array in zip(slots, [*targets, tuple(shape), None, *views]):
                if slot is None:
                    arguments.append(array)  # the loop's shape; the threads, per call
                    continue
                spec = _spec(array, arrays[slot])
                if self.static[slot] is None:
                    holes.append((len(arguments), slot, spec))
                    arguments.append(None)
                else:
                    arguments.append(_view(backend, self.static[slot], spec))
            arguments += [_unboxed_faster(a) for a in step.args]
            # The arguments as a replay makes them, from this run's arrays.
            probe = list(arguments)
            for position, slot, spec in holes:
                probe[position] = _view(backend, arrays[slot], spec)
            self.steps.append((_entry(kernel, [*targets, shape, 1, *views, *step.args], probe),
                               outputs, arguments, holes, len(step.outputs) + 1, index))
        # (Numba is imported when there are kernels: they are its functions.)
        self.threads = sys.modules["numba"].get_num_threads if parallel else int
        self.layouts = [_layout(arrays[s]) for s in plan.sources]
        self.counts = dict(kernels_launched=launched + called, cache_hits=launched,
                           bytes_allocated=allocated)

    @classmethod
    def build(cls, plan: Schedule, arrays: list, spy: list, needed: set[int],
              fixed: dict[int, object]):
        """`plan` prepared, given the run that gave `arrays` (per slot) and `spy` (per
        launch, `run`'s record), for a caller that needs the slots `needed` and gives
        the sources `fixed` (slot: array) the same array at every call; None for a
        plan off the CPU, or whose kernels are not compiled functions (the
        interpreter), or where a view cannot be made again."""
        if any(slot.device.type != "cpu" for slot in plan.slots):
            return None
        try:
            return cls(plan, arrays, spy, needed, fixed)
        except Unsupported:
            return None

    def matches(self, sources: list) -> bool:
        """Whether `sources` are laid out as those the plan was prepared for (the
        kernels' compiled functions are called without checking their arguments)."""
        return all(_layout(a) == s for a, s in zip(sources, self.layouts))

    def run(self, sources: list, plan: Schedule | None = None) -> list:
        """Replay over `sources`, with the constants of `plan` (the prepared plan
        rebound to another graph of its structure) if given; returns the array of
        every slot (those the caller needs are new arrays)."""
        threads = self.threads()
        rebound = plan is not None
        plan = plan or self.plan
        arrays, empty, backend = list(self.static), self.empty, self.backend
        for slot, array in zip(plan.sources, sources):
            arrays[slot] = array
        for step in self.steps:
            if len(step) == 3:  # a call (counted with the plan), by the backend's `fn`
                index, how, fn = step
                call = plan.steps[index]
                if how == "into":
                    fn(*[arrays[s] for s in call.inputs], call.arg, out=arrays[call.output])
                elif how == "full":
                    info = plan.slots[call.output]
                    arrays[call.output] = fn(info.shape, call.arg, info.dtype)
                else:
                    arrays[call.output] = fn(*[arrays[s] for s in call.inputs], call.arg)
                continue
            kernel, outputs, arguments, holes, threads_at, index = step
            for slot in outputs:
                info = plan.slots[slot]
                arrays[slot] = empty(info.shape, info.dtype)
            if kernel is None:
                continue
            # (The argument list is the plan's: filled in, used, emptied again.)
            arguments[threads_at] = threads
            if rebound and (args := plan.steps[index].args):
                arguments[-len(args):] = [_unboxed_faster(a) for a in args]
            for position, slot, spec in holes:
                arguments[position] = _view(backend, arrays[slot], spec)
            kernel(*arguments)
            for position, _, _ in holes:
                arguments[position] = None
        counters.count(**self.counts)
        return arrays


def _layout(array) -> tuple:
    """What of `array` Numba's type of it holds, beyond its dtype and dimensions (which
    the plan's structure fixes)."""
    flags = array.flags
    return array.strides, flags.writeable, flags.aligned


def _entry(kernel, ran: list, probe: list):
    """`kernel`'s compiled function for the argument types of the launch that `ran`,
    if a replay's arguments (`probe`: the threads, None, aside) have those types; else
    `kernel`. Called directly, it skips Numba's dispatch, which types every argument
    again (0.1 us per array)."""
    typeof = kernel.typeof_pyval
    signature = tuple(typeof(a) for a in ran)
    if any(a is not None and typeof(a) != t for a, t in zip(probe, signature)):
        return kernel
    compiled = kernel.overloads.get(signature)
    return kernel if compiled is None else compiled.entry_point


def _into(step: Call, result, fresh: set[int]) -> bool:
    """Whether `step` (which gave `result`) can write into a buffer the plan keeps: a
    matmul, or a scatter-add whose key reaches the same elements at every call (the
    rest of the buffer stays zero), whose output is not written anew at every call."""
    return step.output not in fresh and isinstance(result, np.ndarray) and \
        result.flags.c_contiguous and \
        (step.op == "matmul" or step.op == "index_add" and basic_key(step.arg[0]))


#: NumPy scalar types whose Python counterparts Numba types the same; a compiled
#: function unboxes those faster (W2's 200 float arguments: 2.4 us against 3.7)
_PYTHON_TWINS = (np.float64, np.int64, np.bool_)


def _unboxed_faster(arg):
    """`arg` as the Python scalar of the same Numba type, where there is one."""
    return arg.item() if type(arg) in _PYTHON_TWINS else arg


def _fresh(plan: Schedule, arrays: list, needed: set[int]) -> set[int]:
    """The slots written anew at every call: those the caller needs, and those they
    are views of (a result never shares memory with the plan's own buffers)."""
    fresh = set(needed)
    for step in reversed(plan.steps):
        if isinstance(step, Call) and step.output in fresh and step.op in _MOVEMENTS \
                and _is_view(arrays[step.output], arrays[step.inputs[0]]):
            fresh.add(step.inputs[0])
    return fresh


def _compiled(kernel) -> bool:
    """Whether `kernel` is a compiled Numba function (a dispatcher; the interpreter's and
    the tiered target's kernels are programs). Told by its attributes: Numba may be
    half imported, by the tiered target's thread, while this runs."""
    return hasattr(kernel, "overloads") and hasattr(kernel, "typeof_pyval")


def _is_view(result, base) -> bool:
    """Whether `result` is a view into `base`'s memory."""
    return isinstance(base, np.ndarray) and isinstance(result, np.ndarray) and \
        result.base is not None and np.shares_memory(result, base)


def _spec(view, base) -> tuple:
    """How to make `view` again from another array laid out as `base`: its shape,
    strides and offset (in elements), and whether it is `base` itself ("same"), a
    reshape of it ("reshape": C-contiguous, the same elements) or neither
    ("strided"). The reshape keeps the view's array type (layout, writability)."""
    if not isinstance(base, np.ndarray) or not isinstance(view, np.ndarray):
        raise Unsupported
    offset = _address(view) - _address(base) if view.size else 0
    if offset % view.itemsize or offset and not base.flags.c_contiguous:
        raise Unsupported
    if not offset and view.shape == base.shape and view.strides == base.strides:
        how = "same"
    elif not offset and view.flags.c_contiguous and base.flags.c_contiguous and \
            view.size == base.size:
        how = "reshape"
    else:
        how = "strided"
    return tuple(view.shape), tuple(view.strides), offset // view.itemsize, how


def _view(backend, base, spec):
    """The view `spec` (`_spec`) of `base`, made as an eager launch makes its views (so
    of the same array type)."""
    shape, strides, offset, how = spec
    if how == "same":
        return base
    if how == "reshape":
        return base.reshape(shape)
    if offset:
        base = base.reshape(-1)[offset:]
    return backend.as_strided(base, shape, strides, writeable=True)


def _address(array) -> int:
    return array.__array_interface__["data"][0]


def run_reused(plan: Schedule, sources: list) -> list:
    """Run `plan` over `sources` (as `launch.run`). A plan run again (a schedule the
    cache of schedules gave back, with new constants) is prepared at its second run
    and replayed after that, while its sources are laid out as they were then. A plan
    whose kernels are not compiled functions yet (``tiered``) is tried again at its
    4th, 8th, 16th... run."""
    memo = plan.memo
    runs = memo["runs"] = memo.get("runs", 0) + 1
    prepared = memo.get("prepared")
    if prepared is not None:
        return prepared.run(sources, plan) if prepared.matches(sources) else \
            run(plan, sources)
    if runs < 2 or runs & (runs - 1):
        return run(plan, sources)
    spy: list = []
    arrays = run(plan, sources, spy)
    memo["prepared"] = PreparedPlan.build(plan, arrays, spy, set(range(len(plan.slots))), {})
    return arrays
