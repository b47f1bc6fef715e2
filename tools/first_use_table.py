"""First-use cost (issue 37) in several CPU kernel modes, as a markdown table: each
measurement in a new process with an empty kernel cache of its own, the modes taken in
turn for each measurement (so that the machine's load drifts over them alike).

    python tools/first_use_table.py --modes numba tiered numpy
    python tools/first_use_table.py --modes numba tiered --steps 20 50 --jit-steps 10

Columns: the ten notebook cells of ``asv_benchmarks/benchmarks/first_use.py`` (n = 1000)
run one after another in one process: their first calls' seconds together, their
steady times together, and the worst cell's time from the end of its first call to a
call within 1.5x of its steady time (">" when a cell's kernels were not all compiled
within ``--seconds``: a lower bound); then the RK4 neural ODE's first value and
gradient at each ``--steps`` T with the kernels that call compiled (and the launches it
interpreted, in the tiered and numpy modes), and under ``ng.jit`` at ``--jit-steps``.
With ``--rk4-seconds`` above 0, the RK4 and ``ng.jit`` rows go on calling (as the cells
do) and the table adds their steady times. With ``--repeat``, the median of the rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "asv_benchmarks"))

from benchmarks.first_use import SETTLE, run_cold  # noqa: E402


def measurements(args) -> list[tuple[str, dict]]:
    """(part, `run_cold` keyword arguments) of each process a mode runs."""
    parts = [("cells", {"cells": True, "seconds": args.seconds})]
    parts += [(f"rk4 {t}", {"cells": False, "rk4": t, "seconds": args.rk4_seconds})
              for t in args.steps]
    if args.jit_steps:
        parts.append(("jit", {"cells": False, "jit": args.jit_steps,
                              "seconds": args.rk4_seconds}))
    return parts


def _seconds(value: float) -> str:
    return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"


def _median(reports: list[dict], *keys) -> float | None:
    values = []
    for report in reports:
        for key in keys:
            report = report.get(key) if report is not None else None
        values.append(report)
    return None if None in values else statistics.median(values)


def _kernels(reports: list[dict], part: str) -> str:
    compiled = _median(reports, part, "kernels_compiled")
    interpreted = _median(reports, part, "kernels_interpreted")
    text = f"{compiled:g}"
    return text + (f" ({interpreted:g} interpreted)" if interpreted else "")


def table(args, results: dict[str, dict[str, list[dict]]]) -> str:
    head = ["mode", "cells: first calls", "cells: steady", "cells: worst time to speed"]
    for t in args.steps:
        head += [f"RK4 T={t}: first", f"RK4 T={t}: kernels compiled"]
        if args.rk4_seconds:
            head.append(f"RK4 T={t}: steady")
    if args.jit_steps:
        head += [f"ng.jit T={args.jit_steps}: first",
                 f"ng.jit T={args.jit_steps}: kernels compiled"]
        if args.rk4_seconds:
            head.append(f"ng.jit T={args.jit_steps}: steady")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for mode, parts in results.items():
        cells = parts["cells"]
        unsettled = any(r["cells_unsettled"] for r in cells)
        row = [mode, _seconds(_median(cells, "cells_first_total_s")),
               _seconds(_median(cells, "cells_steady_total_s")),
               (">" if unsettled else "") + _seconds(_median(cells, "cells_to_speed_max_s"))]
        runs = [(f"rk4 {t}", "rk4") for t in args.steps]
        runs += [("jit", "jit")] if args.jit_steps else []
        for name, part in runs:
            reports = parts[name]
            row += [_seconds(_median(reports, part, "first_s")), _kernels(reports, part)]
            if args.rk4_seconds:
                settled = all(r[part]["settled"] for r in reports)
                row.append(("" if settled else "(not compiled) ")
                           + _seconds(_median(reports, part, "steady_s")))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", nargs="+", default=[None],
                        help="NUMGRAD_CPU_KERNELS values (default: the environment's)")
    parser.add_argument("--steps", nargs="*", type=int, default=[50, 200],
                        help="RK4 steps T of the eager rows (default: 50 200)")
    parser.add_argument("--jit-steps", type=int, default=20,
                        help="RK4 steps T under ng.jit (default: 20; 0: none)")
    parser.add_argument("--seconds", type=float, default=SETTLE,
                        help=f"most seconds each cell is called after its first call "
                             f"(default: {SETTLE:g})")
    parser.add_argument("--rk4-seconds", type=float, default=0.0,
                        help="the same for the RK4 rows (default: 0, first call only)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (default: 1)")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds a process may take (default: 1800)")
    parser.add_argument("--json", type=Path, help="also write every report here")
    args = parser.parse_args()

    names = {mode: mode or "default" for mode in args.modes}
    results = {names[m]: {} for m in args.modes}
    for round_ in range(args.repeat):
        for part, kwargs in measurements(args):
            for mode in args.modes:  # in turn
                report = run_cold(mode, timeout=args.timeout, **kwargs)
                print(f"round {round_ + 1}, {names[mode]}, {part}: "
                      f"{report['process_s']:.1f} s process", file=sys.stderr, flush=True)
                results[names[mode]].setdefault(part, []).append(report)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(table(args, results))


if __name__ == "__main__":
    main()
