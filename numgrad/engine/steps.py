"""The schedule as a value: frozen steps over numbered buffers (*slots*).

A `Schedule` is what the scheduler produces and what execution, ``ng.explain`` and
``ng.viz`` consume. It holds structure and bindings, never a device buffer: each
step names the slots it reads and writes; `Schedule.sources` are slots the caller
binds to computed buffers when it runs the schedule, and `Schedule.uploads` are host
arrays (gather indices) copied to the device at run time. So one schedule can run
again over other buffers of the same shapes and dtypes. (Its `memo` is the exception:
what running it learnt, such as its prepared form, kept for its next runs.)
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass

import numpy as np

from numgrad.kernels.codegen import Program


@dataclass(frozen=True, slots=True)
class Read:
    """A launch's input: slot `slot` seen through fused movements `views`, outermost
    first, each ``(primitive name, arg)`` (expand, permute, or a reshape of unit axes)."""

    slot: int
    views: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True, slots=True)
class Launch:
    """One generated kernel: `program` over the loop nest `loop`.

    The program is written for the uncollapsed nest: its kept dimensions are
    `loop`'s axes not in `reduced`, in order, then the reduced ones. `outputs` are the
    slots it writes (the reduction's result first, if any, then `program.stores`),
    `inputs` and `tables` those it reads, `args` its scalar arguments.
    """

    program: Program
    loop: tuple[int, ...]
    reduced: tuple[int, ...]
    outputs: tuple[int, ...]
    inputs: tuple[Read, ...]
    tables: tuple[int, ...]
    args: tuple

    @property
    def kept_shape(self) -> tuple[int, ...]:
        return tuple(d for i, d in enumerate(self.loop) if i not in self.reduced)

    def region(self, i: int) -> tuple[int, ...]:
        """The shape input `i` is read at: the kept dimensions (epilogue) or the loop's."""
        return self.kept_shape if self.program.in_epilogue[i] else self.loop


@dataclass(frozen=True, slots=True, eq=False)
class Call:
    """A movement, gather, scatter or matmul: the target's function `op`, on the
    buffers of `inputs` and the primitive's static `arg`, writes slot `output`.
    ``op == "full"`` fills a constant (`arg`) into a broadcast buffer."""

    op: str
    inputs: tuple[int, ...]
    arg: object
    output: int

    def bound_arg(self, values: list):
        """`arg` with the values rebound to it (`Schedule.values`): a constant's value,
        or the key of a node that indexes by arrays."""
        return (self.arg[0], values[0]) if self.op == "library" else values[0]


@dataclass(frozen=True, slots=True)
class Slot:
    """A buffer of the schedule: its shape, dtype and device."""

    shape: tuple[int, ...]
    dtype: np.dtype
    device: object


class Schedule:
    """Steps in order, over buffers `slots`. A step runs on the device of what it
    writes (a copy between devices is a `Call` on the destination).

    A schedule rebound to a new graph of its structure (`numgrad.plan.schedules.recall`)
    has `values`: per step of the remembered one (`template`), the scalar arguments (a
    launch's) or the argument's values (a call's, `Call.bound_arg`) of the new graph,
    or None where there are none. Its `steps` are made with them when first read: a
    prepared replay reads `template` and `values` (making a step costs a
    microsecond, and a plan has dozens).
    """

    __slots__ = ("template", "slots", "sources", "uploads", "memo", "values", "_made")

    def __init__(self, steps: tuple[Launch | Call, ...], slots: tuple[Slot, ...],
                 sources: tuple[int, ...], uploads: tuple[tuple[int, np.ndarray], ...],
                 memo: dict | None = None, values: list | None = None):
        init = object.__setattr__  # (frozen: `__setattr__` refuses)
        init(self, "template", steps)
        init(self, "slots", slots)
        init(self, "sources", sources)
        init(self, "uploads", uploads)
        #: what running the schedule learnt (`engine.prepared.run_reused`), shared with
        #: its rebindings to new graphs of its structure (`numgrad.plan.schedules.recall`)
        init(self, "memo", {} if memo is None else memo)
        init(self, "values", values)
        init(self, "_made", None)

    def __setattr__(self, name: str, value) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}: a schedule is frozen")

    @property
    def steps(self) -> tuple[Launch | Call, ...]:
        if self.values is None:
            return self.template
        if self._made is None:
            object.__setattr__(self, "_made", tuple(
                step if values is None else
                Launch(step.program, step.loop, step.reduced, step.outputs, step.inputs,
                       step.tables, tuple(values)) if isinstance(step, Launch) else
                Call(step.op, step.inputs, step.bound_arg(values), step.output)
                for step, values in zip(self.template, self.values)))
        return self._made

    def __repr__(self) -> str:
        return f"Schedule({len(self.template)} steps, {len(self.slots)} slots)"
