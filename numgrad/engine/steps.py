"""The schedule as a value: frozen steps over numbered buffers (*slots*).

A `Schedule` is what the scheduler produces and what execution, ``ng.explain`` and
``ng.viz`` consume. It holds structure and bindings, never a device buffer: each
step names the slots it reads and writes; `Schedule.sources` are slots the caller
binds to computed buffers when it runs the schedule, and `Schedule.uploads` are host
arrays (gather indices) copied to the device at run time. So one schedule can run
again over other buffers of the same shapes and dtypes.
"""

from __future__ import annotations

from dataclasses import dataclass

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
        """`arg` with the values rebound to it (`numgrad.plan.bound.Plan.values`): a
        constant's value, or the key of a node that indexes by arrays."""
        return (self.arg[0], values[0]) if self.op == "library" else values[0]


@dataclass(frozen=True, slots=True)
class Slot:
    """A buffer of the schedule: its shape, dtype and device."""

    shape: tuple[int, ...]
    dtype: np.dtype
    device: object


@dataclass(frozen=True, slots=True, eq=False)
class Schedule:
    """Steps in order, over buffers `slots`. A step runs on the device of what it
    writes (a copy between devices is a `Call` on the destination). `sources` are
    the slots bound to computed buffers, `uploads` the index arrays copied in, per
    slot, when it runs. (`numgrad.plan.bound.Plan` binds a schedule to the constants
    of one graph of its structure.)"""

    steps: tuple[Launch | Call, ...]
    slots: tuple[Slot, ...]
    sources: tuple[int, ...]
    uploads: tuple[tuple[int, np.ndarray], ...]

    def __repr__(self) -> str:
        return f"Schedule({len(self.steps)} steps, {len(self.slots)} slots)"
