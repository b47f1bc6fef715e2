"""The tiered CPU target (``NUMGRAD_CPU_KERNELS=tiered``, SPEC §7): a kernel not yet in
memory is interpreted while Numba compiles it in the background; later launches run
the compiled kernel, and a new process finds it in the disk cache.

Each case runs in a fresh process (the CPU mode is read once per process) with its own
cache folder. Tolerances: the interpreted and compiled results agree to 1e-12 relative
(NumPy's functions and numgrad's vector math differ in the last bits).
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

from numgrad.kernels import missing, tiered

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import numgrad as ng
    from numgrad.kernels import tiered

    w = ng.tensor(np.linspace(-1, 1, 7), requires_grad=True)

    def step():
        w.grad = None
        loss = ((w * 3).tanh() * w.sigmoid()).sum()
        loss.backward()
        return loss.item(), w.grad.numpy().tolist()

    counts, values = [], []
    for _ in range(int(sys.argv[1])):
        with ng.engine.record() as rec:
            values.append(step())
        counts.append({"interpreted": rec.kernels_interpreted, "hits": rec.cache_hits,
                       "compiled": rec.kernels_compiled, "disk": rec.disk_hits,
                       "launched": rec.kernels_launched, "pending": tiered.pending()})
        tiered.wait()  # the background compiles finish before the next step
        counts[-1]["after wait"] = tiered.pending()
    print(json.dumps({"counts": counts, "values": values}))
""")


def _run(cache, steps: int) -> dict:
    env = dict(os.environ, NUMGRAD_CPU_KERNELS="tiered", NUMGRAD_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(steps)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _expected():
    w = np.linspace(-1, 1, 7)
    t, s = np.tanh(3 * w), 1 / (1 + np.exp(-w))
    return (t * s).sum(), 3 * (1 - t * t) * s + t * s * (1 - s)


def test_module_is_a_complete_target():
    assert missing(tiered) == []


def test_first_steps_are_interpreted_then_compiled_kernels_run(tmp_path):
    first = _run(tmp_path / "cache", 3)
    new, compiled, warm = first["counts"]
    assert new["interpreted"] == new["launched"] > 0 and new["compiled"] == 0
    # Its kernels are pending until `wait` returns (a compile takes far longer than an
    # interpreted step); then none is.
    assert new["pending"] > 0 and all(c["after wait"] == 0 for c in first["counts"])
    # The launch that first runs a kernel compiled in the background counts it.
    assert compiled["interpreted"] == 0 and compiled["compiled"] == compiled["launched"]
    assert warm["hits"] == warm["launched"] and warm["compiled"] == 0
    # A new process: the kernels load from the disk cache in the background, so its
    # first step is interpreted too, and nothing compiles.
    again = _run(tmp_path / "cache", 2)
    loaded = again["counts"][1]
    assert loaded["interpreted"] == loaded["compiled"] == 0
    assert loaded["disk"] == loaded["launched"]
    value, grad = _expected()
    for loss, g in first["values"] + again["values"]:
        np.testing.assert_allclose(loss, value, rtol=1e-12)
        np.testing.assert_allclose(g, grad, rtol=1e-12)


FORKED = textwrap.dedent("""
    import json, multiprocessing
    import numpy as np
    import numgrad as ng
    from numgrad.kernels import tiered

    def grads(_):
        x = ng.tensor(np.linspace(0, 1, 5), requires_grad=True)
        out = []
        for scale in (1.0, 2.0, 3.0):
            x.grad = None
            (x.sin() * scale).sum().backward()
            tiered.wait()
            out.append(x.grad.numpy().tolist())
        return out

    if __name__ == "__main__":
        here = grads(0)  # the parent's thread is running or done when the children fork
        with multiprocessing.get_context("fork").Pool(2) as pool:
            print(json.dumps([here] + pool.map(grads, range(2))))
""")


def test_forked_processes_compile_in_their_own_thread(tmp_path):
    script = tmp_path / "forked.py"
    script.write_text(FORKED)
    env = dict(os.environ, NUMGRAD_CPU_KERNELS="tiered", NUMGRAD_CACHE_DIR=str(tmp_path / "c"))
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    want = [(np.cos(np.linspace(0, 1, 5)) * s).tolist() for s in (1.0, 2.0, 3.0)]
    for run in json.loads(done.stdout):
        np.testing.assert_allclose(run, want, rtol=1e-12)


PREPARED = textwrap.dedent("""
    import json
    import numpy as np
    import numgrad as ng
    from numgrad.engine import prepared
    from numgrad.kernels import tiered

    replays = []
    run = prepared.PreparedPlan.run
    prepared.PreparedPlan.run = lambda *args: replays.append(1) or run(*args)
    a = np.linspace(-1, 1, 7)
    steps = []
    for i in range(40):
        if i == 30:
            tiered.wait()  # the first 30 steps race the thread importing Numba
        got = (ng.tensor(a) * (i + 0.5)).tanh().numpy()
        np.testing.assert_allclose(got, np.tanh(a * (i + 0.5)), rtol=1e-12)
        steps.append(len(replays))
    print(json.dumps(steps))
""")


def test_a_loop_replays_prepared_once_its_kernel_is_compiled(tmp_path):
    """A loop's schedule, interpreted while its kernel compiles (and while the thread
    imports Numba, which the plan's preparation must not trip on), is prepared when
    the compiled kernel is there: at the next try after step 30 (the 32nd run). Before
    the fix, plans under tiered never replayed, and one prepared while Numba was half
    imported raised AttributeError (the demo under tiered, 2026-12-01)."""
    env = dict(os.environ, NUMGRAD_CPU_KERNELS="tiered", NUMGRAD_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", PREPARED], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    replayed = json.loads(done.stdout)  # replays so far, after each step
    # From the 33rd step on, every step replays (the 32nd prepared the plan).
    assert replayed[31:] == list(range(replayed[31], replayed[31] + 9))
