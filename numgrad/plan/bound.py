"""A plan: a schedule bound to one graph, with what running it taught.

The engine's `Schedule` is a frozen value: steps over numbered slots, the same for
every graph of its structure. A `Plan` binds it to one graph: the graph's constants
(`values`, per step of the schedule: a launch's scalar arguments, a call's argument
values; None where the schedule's own are the graph's) and its index uploads; and it
shares, with every other binding of the same schedule, its `Runs`: how often it ran,
when it was last tried for preparing, and its prepared form
(`numgrad.plan.prepared`). The engine's scheduler makes plans (`schedule` and, from
the cache of schedules, `numgrad.plan.schedules.recall`); the engine runs them step by
step (`numgrad.engine.launch.run`, which reads `steps`), the remembering layer
prepares and replays them; ``ng.jit``'s traces hold one each.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from numgrad.engine.steps import Call, Launch, Schedule


@dataclass(eq=False, slots=True)
class Runs:
    """What running a schedule taught, shared by its plans: its runs so far, the count
    of kernels compiled when it was last tried for preparing (`numgrad.kernels.
    newly_compiled`; None: never tried), and its prepared form (None: not prepared;
    `numgrad.plan.prepared.PreparedPlan`), made for a caller that reads the slots
    `needed` (None: every slot, an eager realization's), of which it takes `handed`
    (None: all; the others are let go of within the run once read), and gives the
    sources `fixed` (slot: array) the same array at every run (``ng.jit``'s data)."""

    count: int = 0
    tried: int | None = None
    prepared: object = None
    needed: set[int] | None = None
    handed: set[int] | None = None
    fixed: dict = field(default_factory=dict)


class Plan:
    """`schedule` bound to a graph's `values` (or None: the schedule's own) and
    `uploads`, sharing `runs` with the schedule's other plans."""

    __slots__ = ("schedule", "values", "uploads", "runs", "_steps")

    def __init__(self, schedule: Schedule, values: list | None = None,
                 uploads: tuple | None = None, runs: Runs | None = None):
        self.schedule, self.values = schedule, values
        self.uploads = schedule.uploads if uploads is None else uploads
        self.runs = Runs() if runs is None else runs
        self._steps = schedule.steps if values is None else None

    @property
    def slots(self):
        return self.schedule.slots

    @property
    def sources(self) -> tuple[int, ...]:
        return self.schedule.sources

    @property
    def template(self) -> tuple[Launch | Call, ...]:
        """The schedule's steps, with its own constants."""
        return self.schedule.steps

    @property
    def steps(self) -> tuple[Launch | Call, ...]:
        """The steps with this plan's constants, made when first read (a prepared
        replay reads `template` and `values` instead: making a step costs a
        microsecond, and a plan has dozens)."""
        if self._steps is None:
            self._steps = tuple(
                step if values is None else
                Launch(step.program, step.loop, step.reduced, step.outputs, step.inputs,
                       step.tables, tuple(values)) if isinstance(step, Launch) else
                Call(step.op, step.inputs, step.bound_arg(values), step.output)
                for step, values in zip(self.schedule.steps, self.values))
        return self._steps

    def bound(self, values: list | None, uploads: tuple) -> Plan:
        """The schedule bound to other `values` and `uploads` (sharing its runs)."""
        return Plan(self.schedule, values, uploads, self.runs)

    def __repr__(self) -> str:
        return f"Plan({len(self.template)} steps, {len(self.slots)} slots)"
