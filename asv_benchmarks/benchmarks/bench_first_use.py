"""First-use cost (issue 37, "No compile stall"): the first value and gradient of a new
function, in a new process with an empty kernel cache (``benchmarks/first_use.py``).

``FirstUseCells``: ten small notebook cells (n = 1000), each called once, then again
until its kernels run compiled; ``FirstUseRK4``: the neural ODE by RK4 at T = 50 steps,
eagerly and under ``ng.jit``; ``FirstUseKernels``: the kernels the RK4 loss compiles
at T = 50, 200 and 400 (compiled in the foreground, to count them). Each measurement
runs in a process of its own with an empty ``NUMGRAD_CACHE_DIR``, in the CPU kernel
mode of the environment (``NUMGRAD_CPU_KERNELS``, or numgrad's default).
``tools/first_use_table.py`` prints the same measurements for several modes side by
side.

They are slow to measure, however quick the run: compiling is what they time. With
``NUMGRAD_CPU_KERNELS=numba`` the RK4 loss's first call compiles its kernels in the
foreground (about half a minute at T = 50, more at 400 on 2 cores): ``timeout`` is
generous. (`first_use` is imported whole: asv would take its functions for benchmarks.)
"""

from . import first_use


class FirstUseCells:
    """The ten cells in one new process, one after another, as a notebook runs them."""

    timeout = 900
    number, repeat, rounds = 1, 1, 1

    def setup_cache(self):
        return first_use.run_cold(cells=True, timeout=self.timeout)

    def track_first_calls_total(self, report):
        """Seconds of the ten cells' first calls together (imports not counted)."""
        return report["cells_first_total_s"]

    track_first_calls_total.unit = "seconds"

    def track_time_to_compiled_speed(self, report):
        """The most seconds, over the cells, from the end of a cell's first call to the
        end of the first call within 1.5x of its steady time (`first_use.settle`; a
        cell whose kernels were not all compiled by then counts as `first_use.SETTLE`)."""
        return report["cells_to_speed_max_s"]

    track_time_to_compiled_speed.unit = "seconds"


class FirstUseRK4:
    """The neural ODE's first value and gradient at T = 50 steps, eagerly and under
    ``ng.jit``, each in a new process (the first call only)."""

    steps = 50
    timeout = 900
    number, repeat, rounds = 1, 1, 1

    def setup_cache(self):
        return {"eager": first_use.run_cold(cells=False, rk4=self.steps, seconds=0,
                                            timeout=self.timeout),
                "jit": first_use.run_cold(cells=False, jit=self.steps, seconds=0,
                                          timeout=self.timeout)}

    def track_first_result_eager(self, reports):
        """Seconds of the first call (value and the four weights' gradients)."""
        return reports["eager"]["rk4"]["first_s"]

    track_first_result_eager.unit = "seconds"

    def track_first_result_jit(self, reports):
        """Seconds of the first call of the ``ng.jit`` function (trace, plan, run)."""
        return reports["jit"]["jit"]["first_s"]

    track_first_result_jit.unit = "seconds"


class FirstUseKernels:
    """The kernel structures the RK4 loss needs (its first call's compiles, new
    process, empty cache), counted with ``NUMGRAD_CPU_KERNELS=numba``: the tiered
    default interprets them while a worker compiles the same set in the background,
    so only a foreground compile counts them all. Compile work that does not grow with
    the loop's length is the same count at every T."""

    params = [50, 200, 400]
    param_names = ["steps"]
    timeout = 900
    number, repeat, rounds = 1, 1, 1

    def track_kernels_compiled(self, steps):
        report = first_use.run_cold("numba", cells=False, rk4=steps, seconds=0,
                                    timeout=self.timeout)
        return report["rk4"]["kernels_compiled"]

    track_kernels_compiled.unit = "kernels"
