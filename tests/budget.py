"""What README's test command runs, and what only `.ci/run` runs (marked slow).

README's command must pass within 5 minutes on 2 cores from an empty kernel cache,
and each new kernel structure costs 0.1-0.3 s to compile (a special function's
series, seconds). So a parametrized test whose every case compiles kernels of its own
runs a few cases there and every case in `.ci/run` (``-m slow``), as do tests that
start processes from an empty cache or run long loops.
"""

import pytest


def slow(*values):
    """One parameter set (`values`), marked slow."""
    return pytest.param(*values, marks=pytest.mark.slow)


def sampled(cases: list, every: int, start: int = 0) -> list:
    """`cases` (a test's parameter values; a tuple is several parameters: for one
    parameter whose values are tuples, use `quick`) as parameters:
    one in `every` from case `start` runs in README's command, the others are marked slow
    (a sweep over functions or rows, each compiling kernels of its own: whole in
    `.ci/run`)."""
    return [case if i % every == start else slow(*case) if isinstance(case, tuple)
            else slow(case) for i, case in enumerate(cases)]


def quick(values, few) -> list:
    """`values` as parameters: those in `few` run in README's command, the others are
    marked slow."""
    return [v if any(v is f or v == f for f in few) else slow(v) for v in values]
