"""The random-program campaign for what remembers a program (SPEC §9).

    python tests/remembered_programs.py --programs N --seed S [--variants R]
        [--repeats 40] [--threads] [--variant K]

numgrad remembers what it derived from a program (schedules, prepared and written-out
replays, backward recipes, step plans, ``ng.jit`` traces), and each layer arms on the
second, third or 32nd run of a structure. A program's results must not depend on it.
Each program of `random_programs` runs here as a *scenario*, a loop step that a user
would write, `REPEATS` times in a row, and every run's results (values and gradients,
read at once and again after the loop) must equal, bit for bit, the same run with
every remembering layer switched off (`numgrad.plan`). The scenarios:

- ``repeat``: the same inputs at every run (value and ``ng.grad``, or ``backward()``
  into fresh leaves);
- ``changing``: at every run new input values, a Python scalar that changes (a
  learning rate: it scales the first input) and a new batch of output weights, each
  drawn from `DISTINCT` draws in a random order, so that runs both meet new values and
  come back to old ones;
- ``outputs``: ``ng.grad`` of several outputs at once with ``grad_outputs``: the last
  value with an input itself, a view of an input, or an intermediate value; checked
  against autograd too;
- ``jvp``: a JVP as ``d/du <J^T u, v>`` (``create_graph=True``, then a second
  ``ng.grad`` through the first); checked against autograd's double VJP too;
- ``accumulate``: ``backward()`` adding into the same leaves' ``.grad`` at every run;
- ``jit``: value and gradients as one ``ng.jit`` step over changing inputs and scalar;
  its replays equal its own runs with nothing remembered (a trace at every call), and
  the eager values within the campaign's tolerances (a jitted plan fuses differently).

With ``--threads``, every two programs also run at once in `THREADS` threads (each
program in two, on other constants), sharing a parameter (the first input is shifted
by it) and pending tensors that no thread has computed yet (one per run): each
thread's results must equal, bit for bit, the same program run alone.

A mismatch is printed with its seed, variant and scenario and a command to rerun it.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import autograd
import autograd.numpy as anp
import numpy as np
import random_programs as rp

import numgrad as ng
from numgrad import plan as remembering
from numgrad.capture import RetraceWarning

#: Runs of each program: past every arming threshold (plans from the third run, replays
#: written out from the 32nd).
REPEATS = 40
#: The changing scenarios draw each run's values from this many draws.
DISTINCT = 8
#: Threads run at once in the thread mode: each program of a group in two of them, on
#: other constants (so that threads run plans of one structure at once too).
THREADS = 4
SCENARIOS = ("repeat", "changing", "outputs", "jvp", "accumulate", "jit")
#: How often each scenario is drawn.
WEIGHTS = (3, 4, 3, 2, 1, 2)


@contextlib.contextmanager
def nothing_remembered():
    """Every remembering layer switched off (`numgrad.plan`), then restored."""
    before, remembering.ON = remembering.ON, False
    try:
        yield
    finally:
        remembering.ON = before


def forget() -> None:
    """Forget everything remembered so far: schedules (with their prepared replays),
    backward recipes, step plans and jitted functions' traces."""
    remembering.clear()


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether `a` and `b` are one value: shape, dtype and every bit (NaNs alike)."""
    return a.shape == b.shape and a.dtype == b.dtype and (
        a.tobytes() == b.tobytes() or np.array_equal(a, b, equal_nan=True)
        and np.array_equal(np.signbit(a), np.signbit(b)))


@dataclass
class Shared:
    """What the threads of a group share: a parameter and, per run, a pending tensor
    (made anew, identically, for the run alone that a thread is compared with)."""

    param: ng.Tensor
    pending: list

    @classmethod
    def make(cls, repeats: int) -> Shared:
        base = ng.tensor(np.linspace(-1.0, 1.0, 5))
        return cls(ng.tensor(0.25, requires_grad=True),
                   [ng.sin(base * (0.1 * (r + 1))) + 1.0 for r in range(repeats)])


class Scenario:
    """Program `prog` as the loop step `kind`; `run(r)` is its r-th run's results."""

    def __init__(self, prog: rp.Program, kind: str, repeats: int = REPEATS, shift: int = 0):
        """(`shift` moves the scalars along: a twin of the scenario, other constants.)"""
        self.prog, self.kind, self.repeats = prog, kind, repeats
        self.fn = _all_values_function(prog)
        rng = np.random.default_rng([prog.seed, 21, prog.variant])
        #: the draw each run uses (0: the program's own inputs)
        self.draws = [0] * repeats if kind in ("repeat", "outputs", "jvp", "accumulate") \
            else [0, *rng.integers(0, DISTINCT, repeats - 1)]
        self.inputs = [prog.inputs] + [
            [a + 0.01 * rng.standard_normal(a.shape) for a in prog.inputs]
            for _ in range(DISTINCT - 1)]
        self.scalars = [1.0 + 0.125 * (k + shift) for k in range(DISTINCT)]
        self.weights = [prog.weights * (1.0 + 0.5 * k) for k in range(DISTINCT)]
        self.read_first = bool(rng.integers(2))  # the value read before the gradients
        self.by_backward = bool(rng.integers(2))  # the repeat scenario's gradients
        self.extra_outputs = _extra_outputs(prog, rng)
        #: the outputs scenario's outputs that require grad, and their cotangents
        self.differentiable: list[int] | None = None
        self.cotangents: list = []
        self.direction = [np.round(rng.standard_normal(a.shape), 2) for a in prog.inputs]
        self.shared: Shared | None = None
        self.leaves: list | None = None  # the accumulate scenario's
        with nothing_remembered():
            self.used = self._used()
        self.jitted = ng.jit(self._jit_step) if kind == "jit" else None

    def _used(self) -> list[int]:
        """The inputs the output depends on (plain ``ng.grad`` takes only those)."""
        xs = self._leaves(0)
        out, _ = self._forward(xs, 0, 0)
        grads = ng.grad(out, xs, allow_unused=True) if out.requires_grad else [None] * len(xs)
        return [i for i, g in enumerate(grads) if g is not None]

    def _leaves(self, k: int) -> list:
        """Draw `k`'s input values, as new leaves."""
        return [ng.tensor(a, requires_grad=True) for a in self.inputs[k]]

    def scalar(self, k: int) -> float:
        """Draw `k`'s Python scalar: two draws share each (so that a jitted step, traced
        per scalar, meets new inputs with the same one)."""
        return self.scalars[k // 2]

    def batch(self, k: int) -> ng.Tensor:
        """Draw `k`'s output weights (a new batch), as a new tensor: computed, or for
        every third draw pending (the same values: halved after doubling), so that the
        graph's schedule changes while its backward pass stays the same."""
        w = self.weights[5 * k % DISTINCT]
        return ng.tensor(2.0 * w) * 0.5 if k % 3 == 2 else ng.tensor(w)

    def _forward(self, xs: list, k: int, r: int, scalar=None, weights=None, pending=None):
        """The program on leaves `xs` with draw `k`'s scalar and weights (the first input
        scaled by the scalar and, in the thread mode, shifted by the shared parameter
        times run `r`'s pending tensor): the output and every value."""
        scalar = self.scalar(k) if scalar is None else scalar
        first = xs[0] * scalar
        if self.shared is not None:
            pending = self.shared.pending[r] if pending is None else pending
            first = first + self.shared.param * pending.sum() * 0.01
        w = self.batch(k) if weights is None else weights
        return rp.NUMGRAD(self.fn, first, *xs[1:], w)

    @property
    def with_param(self) -> bool:
        """Whether the shared parameter is used (it shifts the first input)."""
        return self.shared is not None and 0 in self.used

    def targets(self, xs: list) -> list:
        """What the gradients are taken of: the used inputs (and the shared parameter)."""
        found = [xs[i] for i in self.used]
        return found + [self.shared.param] if self.with_param else found

    def run(self, r: int) -> list:
        """The r-th run's results (tensors, so that they can be read again later)."""
        k = self.draws[r]
        return getattr(self, "_" + self.kind)(r, k)

    def _repeat(self, r: int, k: int) -> list:
        xs = self._leaves(k)
        out, _ = self._forward(xs, k, r)
        if not out.requires_grad:
            return [out]
        if self.read_first:
            out.numpy()
        wrt = self.targets(xs)
        if self.by_backward and self.shared is None:
            out.backward()
            grads = [x.grad for x in wrt]
        else:
            grads = list(ng.grad(out, wrt))
        return [out, *grads]

    _changing = _repeat

    def _outputs(self, r: int, k: int) -> list:
        xs = self._leaves(k)
        out, values = self._forward(xs, k, r)
        outputs = [values[self.prog.final_index]] + [
            _output(spec, xs, values, ng) for spec in self.extra_outputs]
        if self.differentiable is None:  # (the first run: which outputs, and their seeds)
            self.differentiable = [j for j, o in enumerate(outputs) if o.requires_grad]
            rng = np.random.default_rng([self.prog.seed, 22, self.prog.variant])
            self.cotangents = [np.round(rng.standard_normal(outputs[j].shape), 2)
                               for j in self.differentiable]
        outputs = [outputs[j] for j in self.differentiable]
        if not outputs:
            return [out]
        grads = ng.grad(outputs, self.targets(xs), allow_unused=True,
                        grad_outputs=[ng.tensor(c) for c in self.cotangents])
        return [*outputs, *(g for g in grads if g is not None)]

    def _jvp(self, r: int, k: int) -> list:
        xs = self._leaves(k)
        _, values = self._forward(xs, k, r)
        last = values[self.prog.final_index]
        wrt = self.targets(xs)
        if not last.requires_grad or not wrt:
            return [last]
        u = ng.zeros(last.shape, requires_grad=True)
        vjp = ng.grad(last, wrt, grad_outputs=u, create_graph=True)
        v = [ng.tensor(self.direction[i]) for i in self.used] + \
            ([ng.tensor(1.0)] if self.with_param else [])
        pairs = [(g, d) for g, d in zip(vjp, v) if g.requires_grad]
        if not pairs:  # (no VJP depends on u: the JVP is zero, as through round)
            return [last, *vjp, ng.zeros(last.shape)]
        (jv,) = ng.grad([g for g, _ in pairs], u, grad_outputs=[d for _, d in pairs],
                        materialize_grads=True)
        return [last, *vjp, jv]

    def _accumulate(self, r: int, k: int) -> list:
        if self.leaves is None or r == 0:
            self.leaves = self._leaves(k)
        xs = self.leaves
        out, _ = self._forward(xs, k, r)
        if not out.requires_grad:
            return [out]
        out.backward(inputs=[xs[i] for i in self.used])  # (not into a shared parameter)
        return [out, *(xs[i].grad for i in self.used)]

    def _jit(self, r: int, k: int) -> list:
        xs = self._leaves(k)
        w = self.batch(k)
        if self.shared is None:
            return list(self.jitted(w, *xs, scalar=self.scalar(k)))
        return list(self.jitted(w, *xs, scalar=self.scalar(k),
                                pending=self.shared.pending[r]))

    def _jit_step(self, w, *xs, scalar: float, pending=None):
        """The jit scenario's step: the pending tensor comes as an argument (a tensor the
        step read from elsewhere would be captured: the same one at every call)."""
        out, _ = self._forward(list(xs), 0, 0, scalar, w, pending)
        if not out.requires_grad or not self.used:
            return (out,)
        return (out, *ng.grad(out, self.targets(list(xs))))

    def eager(self, r: int) -> list:
        """The jit scenario's run r, eagerly (what its values are compared with)."""
        return self._repeat(r, self.draws[r])

    def oracle(self, got: list) -> str | None:
        """Where the first run's results (`got`, arrays) differ from autograd's beyond the
        campaign's tolerances (the outputs and jvp scenarios; alone, not threaded)."""
        if self.kind not in ("outputs", "jvp") or len(got) < 2:
            return None
        fn, prog, scalar, w = self.fn, self.prog, self.scalar(0), self.weights[0]
        argnums = tuple(self.used)

        def values(*xs):
            xs = list(xs)
            return rp.AUTOGRAD(fn, xs[0] * scalar, *xs[1:], w)[1]

        try:
            want = self._autograd(values, argnums, list(prog.inputs))
        except Exception:  # (autograd lacks some gradients: `random_programs` skips them too)
            return None
        if not all(np.all(np.isfinite(g)) for g in want):
            return None  # (as `random_programs`: autograd's NaN at hypot(0, 0), prod's zeros)
        have = got[len(got) - len(want):]
        for g, expected in zip(have, want):
            problem = rp.compare(g, expected, "grad")
            if problem:
                return f"{self.kind} against autograd: {problem}"
        return None

    def _autograd(self, values: Callable, argnums: tuple, inputs: list) -> tuple:
        """Autograd's gradients of the outputs scenario, or its JVP (a 1-tuple)."""
        prog = self.prog
        if self.kind == "outputs":
            def loss(*xs):
                vals = values(*xs)
                outs = [vals[prog.final_index]] + [
                    _output(spec, xs, vals, anp) for spec in self.extra_outputs]
                outs = [outs[j] for j in self.differentiable]
                return sum(anp.sum(o * c) for o, c in zip(outs, self.cotangents))

            return autograd.grad(loss, argnums)(*inputs)

        def pulled(u):
            vjp = autograd.make_vjp(
                lambda *xs: values(*xs)[prog.final_index], argnums)(*inputs)[0](u)
            return sum(anp.sum(g * self.direction[i]) for g, i in zip(vjp, self.used))

        last = np.asarray(values(*inputs)[prog.final_index], dtype=float)
        return (autograd.grad(pulled)(np.zeros(last.shape)),)


def _all_values_function(prog: rp.Program) -> Callable:
    """`prog` as ``program(m, F, np, inputs..., w)`` returning its output and the list
    of every value (inputs first)."""
    names = prog.names()
    body = "".join(f"    {line}\n" for line in prog.lines())
    source = (f"def program(m, F, np, {', '.join(names[:len(prog.inputs)])}, w):\n{body}"
              f"    return m.sum({names[prog.final_index]} * w), [{', '.join(names)}]\n")
    space: dict = {}
    exec(compile(source, f"<program {prog.seed}>", "exec"), space)  # noqa: S102
    return space["program"]


def _extra_outputs(prog: rp.Program, rng: np.random.Generator) -> list[tuple]:
    """The outputs the outputs scenario adds to the last value: an input itself, a view
    of one, or an intermediate value (one to three of them)."""
    n, steps = len(prog.inputs), prog.final_index
    choices = [("leaf", i) for i in range(n)] + [("view", i) for i in range(n)] + \
        [("value", j) for j in range(n, steps)]
    picked = rng.choice(len(choices), size=min(len(choices), int(rng.integers(1, 4))),
                        replace=False)
    return [choices[int(i)] for i in picked]


def _output(spec: tuple, xs: list, values: list, m):
    """Output `spec` (`_extra_outputs`) of a run on leaves `xs` with `values`."""
    what, i = spec
    if what == "value":
        return values[i]
    x = xs[i]
    if what == "leaf":
        return x
    ndim = len(np.shape(x))
    return m.transpose(x) if ndim >= 2 else x[::-1] if ndim == 1 else m.reshape(x, (1,))


def _read(results: list) -> list[np.ndarray]:
    return [np.array(t.numpy() if isinstance(t, ng.Tensor) else t, dtype=float)
            for t in results]


def _differ(got: list[np.ndarray], want: list[np.ndarray], exact: bool = True) -> str | None:
    """Where two runs' results differ (bit for bit, or beyond the campaign's value
    tolerance), or None."""
    if len(got) != len(want):
        return f"{len(got)} results, expected {len(want)}"
    for j, (a, b) in enumerate(zip(got, want)):
        problem = (None if same_bits(a, b) else "not the same bits") if exact else \
            rp.compare(a, b, "grad")
        if problem:
            shown = np.array2string(a.ravel()[:4], precision=17)
            expected = np.array2string(b.ravel()[:4], precision=17)
            return f"result {j}: {problem}: {shown} vs {expected}"
    return None


@dataclass
class Found:
    """A mismatch of this campaign."""

    seed: int
    variant: int
    scenario: str
    check: str  # remembered, kept, oracle, jit, threads, error
    detail: str

    def report(self) -> str:
        rerun = f"--seed {self.seed} --programs 1 --variant {self.variant}"
        return (f"MISMATCH seed={self.seed} variant={self.variant} scenario={self.scenario} "
                f"check={self.check}: {self.detail}\n"
                f"(rerun: python tests/remembered_programs.py {rerun})")


def check_scenario(scenario: Scenario) -> list[Found]:
    """Run `scenario` with nothing remembered, then `REPEATS` times with every layer on:
    each run equal to its counterpart with nothing remembered, bit for bit, when read
    at once and again after the loop (nothing handed out is overwritten later)."""
    prog, kind = scenario.prog, scenario.kind
    found: list[Found] = []

    def note(check: str, detail: str) -> None:
        found.append(Found(prog.seed, prog.variant, kind, check, detail))

    def key(r: int) -> int:  # (the same draw computes the same; accumulating does not)
        return r if kind == "accumulate" else scenario.draws[r]

    alone: dict[int, list] = {}
    eager: dict[int, list] = {}
    with nothing_remembered():
        for r in range(scenario.repeats):
            if key(r) not in alone:
                alone[key(r)] = _read(scenario.run(r))
                if kind == "jit":
                    eager[key(r)] = _read(scenario.eager(r))
    problem = scenario.oracle(alone[0])
    if problem:
        note("oracle", problem)
    kept = []
    for r in range(scenario.repeats):
        results = scenario.run(r)
        got = _read(results)
        kept.append((r, key(r), results))
        problem = _differ(got, alone[key(r)])
        if problem:
            note("remembered", f"run {r} (draw {key(r)}) against nothing remembered: "
                               f"{problem}")
            break
        if eager:
            problem = _differ(got, eager[key(r)], exact=False)
            if problem:
                note("jit", f"run {r} (draw {key(r)}) against eager: {problem}")
                break
    if kind != "accumulate":  # (its .grad tensors are replaced, not changed)
        for r, k, results in kept:
            problem = _differ(_read(results), alone[k])
            if problem:
                note("kept", f"run {r}'s results, read again after the loop: {problem}")
                break
    return found


def check_threads(group: list[Scenario]) -> list[Found]:
    """Run the scenarios of `group` at once, each in two threads (itself and a twin on
    other constants), sharing a parameter and pending tensors, with every layer on;
    each thread's results equal, bit for bit, its scenario run alone with nothing
    remembered."""
    scenarios = [t for s in group for t in (s, Scenario(s.prog, s.kind, s.repeats, 1))]
    repeats = min(s.repeats for s in scenarios)
    alone = []
    with nothing_remembered():
        for s in scenarios:
            s.shared = Shared.make(repeats)
            alone.append([_read(s.run(r)) for r in range(repeats)])
    shared = Shared.make(repeats)
    got: list[list] = [[] for _ in scenarios]
    errors: list[str | None] = [None] * len(scenarios)

    def work(i: int) -> None:
        try:
            for r in range(repeats):
                got[i].append(_read(scenarios[i].run(r)))
        except Exception:
            errors[i] = traceback.format_exc(limit=-3)

    for s in scenarios:
        s.shared, s.leaves = shared, None
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # (threads switch often: races show)
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(scenarios))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
        for s in scenarios:
            s.shared = None
    found = []
    for s, runs, want, error in zip(scenarios, got, alone, errors):
        prog = s.prog
        if error:
            found.append(Found(prog.seed, prog.variant, s.kind, "error",
                               f"in a thread: {error}"))
            continue
        for r, (a, b) in enumerate(zip(runs, want)):
            problem = _differ(a, b)
            if problem:
                found.append(Found(prog.seed, prog.variant, s.kind, "threads",
                                   f"run {r} in a thread against alone: {problem}"))
                break
    return found


def scenario_of(seed: int, k: int) -> str:
    """The scenario program `seed`, variant `k` runs as."""
    p = np.array(WEIGHTS, dtype=float)
    return str(np.random.default_rng([seed, 20, k]).choice(SCENARIOS, p=p / p.sum()))


@dataclass
class Result:
    programs: int = 0
    threaded: int = 0
    found: list[Found] = field(default_factory=list)
    scenarios: Counter = field(default_factory=Counter)
    oracle_errors: int = 0
    kernels_compiled: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        checks = Counter(f.check for f in self.found)
        return "\n".join([
            f"programs: {self.programs} ({self.threaded} also in {THREADS} threads at once); "
            "scenarios: " + ", ".join(f"{k} {v}" for k, v in self.scenarios.most_common()),
            f"mismatches: {len(self.found)}" + (f" (checks: {dict(checks)})" if checks else ""),
            f"skipped (NumPy could not run the program): {self.oracle_errors}",
            f"kernels compiled: {self.kernels_compiled}",
            f"time: {self.seconds:.1f} s ({self.programs / max(self.seconds, 1e-9):.2f} "
            "programs/s)"])


def run_campaign(programs: int, seed: int = 0, variants: int = 1, threads: bool = False,
                 repeats: int = REPEATS, only_variant: int | None = None,
                 scenario: str | None = None,
                 log: Callable[[str], None] | None = None, progress_every: int = 0) -> Result:
    """Check `programs` programs (program i: variant ``i % variants`` of the program of
    seed ``seed + i // variants``), each as its scenario (`scenario_of`, or `scenario`);
    with `threads`, every `THREADS` of them at once too."""
    log = log or (lambda line: None)
    result = Result()
    start = time.perf_counter()
    group: list[Scenario] = []
    base = None
    with ng.engine.record() as rec:
        for i in range(programs):
            pseed, k = seed + i // variants, i % variants
            if only_variant is not None:
                pseed, k = seed + i, only_variant
            if base is None or base.seed != pseed:
                base = rp.generate(pseed)
            prog = rp.variant(base, k)
            if prog is None:
                continue
            kind = scenario or scenario_of(pseed, k)
            try:
                s = Scenario(prog, kind, repeats)
                found = check_scenario(s)
            except Exception as e:  # (NumPy's own failure is no numgrad bug)
                if _numpy_fails(prog):
                    result.oracle_errors += 1
                    continue
                found = [Found(pseed, k, kind, "error", rp._error(e))]
                s = None
            result.programs += 1
            result.scenarios[kind] += 1
            for f in found:
                result.found.append(f)
                log(f.report())
            if threads and s is not None and not found:
                group.append(s)
                if 2 * len(group) == THREADS:
                    for f in check_threads(group):
                        result.found.append(f)
                        log(f.report())
                    result.threaded += len(group)
                    group = []
            if progress_every and (i + 1) % progress_every == 0:
                elapsed = time.perf_counter() - start
                log(f"[{i + 1}/{programs}] mismatches {len(result.found)}, kernels compiled "
                    f"{rec.kernels_compiled}, {elapsed:.0f} s")
        result.kernels_compiled = rec.kernels_compiled
    result.seconds = time.perf_counter() - start
    return result


def _numpy_fails(prog: rp.Program) -> bool:
    try:
        prog.run(rp.NUMPY, prog.inputs)
    except Exception:
        return True
    return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", type=int, default=1,
                        help="run each generated program on this many input draws")
    parser.add_argument("--variant", type=int, default=None,
                        help="run only this input draw of each program (to rerun one)")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--threads", action="store_true",
                        help=f"also run every {THREADS} programs at once, one thread each")
    parser.add_argument("--scenario", choices=SCENARIOS, default=None,
                        help="run every program as this scenario")
    parser.add_argument("--progress-every", type=int, default=0)
    args = parser.parse_args(argv)
    # (autograd's note on constant outputs, and the jit scenario's traces per scalar: known)
    warnings.filterwarnings("ignore", "Output seems independent of input")
    warnings.filterwarnings("ignore", category=RetraceWarning)
    print(f"remembered programs: {args.programs} from seed {args.seed}, {args.variants} "
          f"draw(s) each, {args.repeats} runs, threads {'on' if args.threads else 'off'}",
          flush=True)
    result = run_campaign(args.programs, args.seed, args.variants, args.threads,
                          args.repeats, args.variant, args.scenario,
                          lambda line: print(line, flush=True),
                          args.progress_every or max(1, args.programs // 20))
    print(result.summary(), flush=True)
    return 1 if result.found else 0


if __name__ == "__main__":
    sys.exit(main())
