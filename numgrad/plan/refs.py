"""Where what a remembered program reads comes from at a replay: one typed family of
references, shared by eager step plans (`numgrad.plan.step_plans`, `numgrad.plan.stage`)
and ``ng.jit`` traces (`numgrad.capture.trace`).

An array reference resolves against a `ReplayContext` (``ref.array(at)``):

- `Outside`: a buffer from outside the program (a step's outside buffer, a trace's
  bound tensor's value when the call starts);
- `OnTape`: a tape buffer that a cut of the forward computed;
- `Result`: a slot an earlier stage of the replay computed (a trace has one stage);
- `Fixed`: an array fixed by the structure (`numgrad.lazy.fixed`, data a trace made);
- `Grad`: a bound tensor's ``.grad``;
- `AtOnce`: a value of one element computed again as the pass computed it.

A `Constant` says where a constant of a step plan comes from (``ref.constant(bufs)``
for the tape buffers `bufs`): the tape (`TapeConstant`), a fold of the tape's
(`Folded`), or the rules (`RuleConstant`). The references are frozen:
equal by value (`Fixed` by identity) and hashable, as ``StepPlan.done`` needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from numgrad.dtypes import python_scalar
from numgrad.lazy import LazyBuffer, at_once, fold
from numgrad.ops import Primitive


@dataclass(slots=True)
class ReplayContext:
    """What the references of one replay resolve against."""

    #: the buffers from outside the program (`Outside`)
    outside: list[LazyBuffer]
    #: the tape's buffers (`OnTape`, and the constants' `TapeConstant`)
    bufs: list[LazyBuffer] | None = None
    #: per stage run so far, its slots' arrays (`Result`)
    results: list[list] | None = None
    #: the bound tensors of a trace (`Grad`)
    bound: list | None = None


class Ref:
    """A reference to an array."""

    __slots__ = ()

    def array(self, at: ReplayContext):
        """Its array at the replay `at`."""
        raise NotImplementedError

    def item(self, at: ReplayContext):
        """Its one element, as a Python scalar (an `AtOnce` operand)."""
        return self.array(at).item()


@dataclass(frozen=True, slots=True)
class Outside(Ref):
    """The `index`-th buffer from outside the program."""

    index: int

    def array(self, at: ReplayContext):
        return at.outside[self.index].realized


@dataclass(frozen=True, slots=True)
class OnTape(Ref):
    """The tape buffer at `position`, computed at a cut of the forward."""

    position: int

    def array(self, at: ReplayContext):
        return at.bufs[self.position].realized


@dataclass(frozen=True, slots=True)
class Result(Ref):
    """Slot `slot` of what stage `stage` of the replay computed."""

    stage: int
    slot: int

    def array(self, at: ReplayContext):
        return at.results[self.stage][self.slot]


@dataclass(frozen=True, slots=True, eq=False)
class Fixed(Ref):
    """An array that never changes (`numgrad.lazy.fixed`'s, or data a trace made),
    compared by identity (an array's ``==`` is an array)."""

    value: object

    def array(self, at: ReplayContext):
        return self.value


@dataclass(frozen=True, slots=True)
class Grad(Ref):
    """Bound tensor `index`'s ``.grad``."""

    index: int

    def array(self, at: ReplayContext):
        return at.bound[self.index]._grad._buf.realized


@dataclass(frozen=True, slots=True)
class AtOnce(Ref):
    """A value of one element that the pass computed at once (`numgrad.lazy.at_once`):
    `op` on `sources`, each a `Ref` or a `Constant`."""

    op: Primitive
    dtype: object
    shape: tuple[int, ...]
    device: object
    sources: tuple

    def array(self, at: ReplayContext):
        values = [s.item(at) for s in self.sources]
        return at_once(self.op, values, self.shape, self.dtype, self.device).realized


class Constant:
    """Where a constant of a step plan comes from."""

    __slots__ = ()

    def constant(self, bufs: list[LazyBuffer]):
        """Its value for the tape buffers `bufs`."""
        raise NotImplementedError

    def positions(self):
        """The tape positions whose constants it reads."""
        return iter(())

    def item(self, at: ReplayContext):
        """Its value at the replay `at`, as a Python scalar (an `AtOnce` operand)."""
        return python_scalar(self.constant(at.bufs))


@dataclass(frozen=True, slots=True)
class TapeConstant(Constant):
    """The tape's constant at `position`."""

    position: int

    def constant(self, bufs: list[LazyBuffer]):
        return bufs[self.position].arg

    def positions(self):
        yield self.position


@dataclass(frozen=True, slots=True)
class Folded(Constant):
    """A constant the backward pass folded (`numgrad.lazy.make`): `op` on the values of
    `sources` (`Constant`s), as a `dtype` scalar."""

    op: Primitive
    dtype: object
    sources: tuple

    def constant(self, bufs: list[LazyBuffer]):
        return fold(self.op, [s.constant(bufs) for s in self.sources], self.dtype)

    def positions(self):
        for s in self.sources:
            yield from s.positions()


@dataclass(frozen=True, slots=True)
class RuleConstant(Constant):
    """A constant the rules wrote, fixed by the structure: `value`."""

    value: object

    def constant(self, bufs: list[LazyBuffer]):
        return self.value
