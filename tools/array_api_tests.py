"""Run the Array API standard's conformance suite (data-apis/array-api-tests, vendored in
tests/array_api/vendor/) against numgrad, and print its pass rate by module.

    python tools/array_api_tests.py [--max-examples N] [--seed S] [--raw] [-- PYTEST_ARGS]

The suite tests ``numgrad`` as the namespace (``ARRAY_API_TESTS_MODULE=numgrad``) at the
standard's version numgrad declares (``numgrad.__array_api_version__``), without complex
dtypes (numgrad has none), with tests/array_api/skips.txt and xfails.txt (each entry
says why); ``--raw`` leaves those two files out, to count every failure. Hypothesis runs
`--max-examples` examples per test (a tenth of that, at least 1, for the tests that check
element by element) from the seed `--seed`, so a run is repeatable, with no deadline
per example (the suite's is 800 ms: a kernel compiled on first use, or a core shared
with another job, is not a conformance failure).

Exits with pytest's status: 0 when nothing failed but the expected failures (`.ci/run`
runs it so). Examples::

    NUMGRAD_CPU_KERNELS=numpy python tools/array_api_tests.py   # CI's run (about a minute)
    python tools/array_api_tests.py --raw --max-examples 100     # every failure, counted
    python tools/array_api_tests.py -- -k test_vecdot -x  # one test, stop at a failure
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent.parent / "tests" / "array_api"
OUTCOMES = ("passed", "xpassed", "failed", "error", "xfailed", "skipped")
#: the suite's warnings about its own reading of the standard (special cases it cannot
#: parse, a dtype list it cannot use): dozens of lines that say nothing of numgrad. Its
#: warnings of entries of skips.txt or xfails.txt that match no test still show.
QUIET = ["-W", "ignore:case for:UserWarning", "-W", "ignore:Special cases found for:UserWarning",
         "-W", "ignore::UserWarning:array_api_tests.test_signatures"]


class Tally:
    """A pytest plugin that keeps each test's outcome, by node id."""

    def __init__(self):
        self.outcomes: dict[str, str] = {}

    def pytest_runtest_logreport(self, report):
        expected = hasattr(report, "wasxfail")
        if report.failed:
            self.outcomes[report.nodeid] = "failed" if report.when == "call" else "error"
        elif report.skipped and report.when in ("setup", "call"):
            self.outcomes[report.nodeid] = "xfailed" if expected else "skipped"
        elif report.passed and report.when == "call":
            self.outcomes[report.nodeid] = "xpassed" if expected else "passed"


def table(outcomes: dict[str, str]) -> list[str]:
    """Counts by module, and the pass rate of the tests that ran."""
    by_module = collections.defaultdict(collections.Counter)
    for nodeid, outcome in outcomes.items():
        module = nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
        by_module[module][outcome] += 1
        by_module["total"][outcome] += 1
    lines = [f"{'module':42}" + "".join(f"{o:>9}" for o in OUTCOMES)]
    for module in [*sorted(m for m in by_module if m != "total"), "total"]:
        counts = by_module[module]
        lines.append(f"{module:42}" + "".join(f"{counts[o]:9}" for o in OUTCOMES))
    total = by_module["total"]
    passed = total["passed"] + total["xpassed"]
    ran = passed + total["failed"] + total["error"] + total["xfailed"]
    lines.append(f"{passed} of {ran} tests run pass ({100 * passed / max(ran, 1):.1f} %); "
                 f"{total['xfailed']} expected failures, {total['skipped']} skipped")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=50,
                        help="hypothesis examples per test (default 50, CI's)")
    parser.add_argument("--seed", default="0", help="hypothesis seed (default 0)")
    parser.add_argument("--raw", action="store_true",
                        help="without skips.txt and xfails.txt: every failure counts")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    options = parser.parse_args()

    os.environ["ARRAY_API_TESTS_MODULE"] = "numgrad"
    os.environ["ARRAY_API_TESTS_SKIP_DTYPES"] = "complex64,complex128"
    import pytest

    # The suite's own pytest.ini and conftest.py, not numgrad's (pyproject.toml's options,
    # tests/conftest.py's profile and kernel mode). Options with a value are given as
    # --name=value: pytest takes a separate value of an option it does not know yet (the
    # suite's, from its conftest.py) for a path when it looks for its configuration.
    vendor = HERE / "vendor"
    os.chdir(vendor)
    lists = [] if options.raw else [f"--skips-file={HERE / 'skips.txt'}",
                                     f"--xfails-file={HERE / 'xfails.txt'}"]
    tally = Tally()
    status = pytest.main([f"--rootdir={vendor}", f"--confcutdir={vendor}",
                          f"--config-file={vendor / 'pytest.ini'}", "array_api_tests", "-q",
                          "-p", "no:cacheprovider", "-rfE",
                          f"--max-examples={options.max_examples}",
                          f"--hypothesis-seed={options.seed}", "--disable-deadline", *lists,
                          *QUIET, *options.pytest_args], plugins=[tally])
    print("\n".join(table(tally.outcomes)))
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
