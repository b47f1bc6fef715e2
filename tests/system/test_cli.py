"""``python -m numgrad``: info, demo, bench and cache."""

import importlib.util
import os
import platform
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import numgrad as ng
from numgrad import __main__ as cli
from numgrad import demo as demo_module
from numgrad.kernels import cache


def run_module(*args, **env):
    """``python -m numgrad ARGS`` in a fresh process (so Numba reads `env` at import)."""
    result = subprocess.run(
        [sys.executable, "-m", "numgrad", *args], capture_output=True, text=True,
        env={**os.environ, **env}, timeout=300)
    return result


# ---- info -----------------------------------------------------------------------------

def test_info_reports_versions_targets_and_cache(capsys):
    import numba

    cli.main(["info"])
    lines = capsys.readouterr().out.splitlines()
    versions = re.fullmatch(r"numgrad (\S+)  numpy (\S+)  numba (\S+)  numba-cuda (.+)  "
                            r"python (\S+)", lines[0]).groups()
    assert versions == (ng.__version__, np.__version__, numba.__version__,
                        cli._version("numba-cuda") or "not installed", platform.python_version())
    assert lines[1] == f"targets: cpu ({numba.config.NUMBA_NUM_THREADS} threads)"
    assert lines[2:4] == cli.cuda_status()
    folder = re.escape(str(cache.cache_dir()))
    assert re.fullmatch(rf"kernel cache: {folder} \(\d+ kernels, \d+\.\d MB\)", lines[4])
    if not ng.device.cuda_is_available():
        assert lines[2] == "cuda: not available (see the numba cuda line)"


def test_info_without_the_simulator_claims_no_simulator():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run([sys.executable, "-m", "numgrad", "info"], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "simulator (NUMBA_ENABLE_CUDASIM=1" not in result.stdout
    cuda_lines = [line for line in result.stdout.splitlines() if line.startswith("cuda:")]
    assert cuda_lines in (["cuda: available (a GPU)"],
                          ["cuda: not available (see the numba cuda line)"])


def test_info_under_the_simulator_says_so():
    result = run_module("info", NUMBA_ENABLE_CUDASIM="1")
    assert result.returncode == 0, result.stderr
    numba_line = next(line for line in result.stdout.splitlines()
                      if line.startswith("numba cuda:"))
    try:
        importable = importlib.util.find_spec("numba.cuda") is not None
    except ImportError:
        importable = False
    if importable:
        assert "the CUDA simulator (NUMBA_ENABLE_CUDASIM=1" in numba_line
        assert "not a GPU" in numba_line
    else:
        assert "not available" in numba_line
    cuda_line = next(line for line in result.stdout.splitlines() if line.startswith("cuda:"))
    # numgrad's own 'cuda' device is reported separately, and truthfully.
    assert ("not available" in cuda_line) != ("available (the CUDA simulator" in cuda_line)


def test_cuda_status_when_numba_cuda_is_missing(monkeypatch):
    monkeypatch.setattr(cli, "_numba_cuda", lambda: (None, "numba.cuda cannot be imported"))
    monkeypatch.setattr(ng.device, "cuda_is_available", lambda: False)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    cuda_line, numba_line = cli.cuda_status()
    assert cuda_line == "cuda: not available (see the numba cuda line)"
    assert numba_line.startswith("numba cuda: not available: numba.cuda cannot be imported")
    assert "simulator (" not in numba_line


def test_cuda_status_when_numgrad_runs_on_the_simulator(monkeypatch):
    monkeypatch.setattr(cli, "_numba_cuda", lambda: ("numba-cuda 0.0", ""))
    monkeypatch.setattr(ng.device, "cuda_is_available", lambda: True)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    cuda_line, numba_line = cli.cuda_status()
    assert cuda_line == "cuda: available (the CUDA simulator, not a GPU)"
    assert "numba-cuda 0.0" in numba_line


# ---- cache ----------------------------------------------------------------------------

def test_cache_info_and_clear(monkeypatch, tmp_path, capsys, numba_cpu):
    folder = tmp_path / "kernels"
    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(folder))
    monkeypatch.setattr(cache, "_memory", {})  # this process's kernels stay as they are
    (ng.tensor([1.0, 2.0]) * 3 + 1).numpy()
    cli.main(["cache", "info"])
    out = capsys.readouterr().out
    assert f"folder:  {folder}" in out
    assert re.search(r"kernels: [1-9]", out)
    cli.main(["cache", "clear"])
    out = capsys.readouterr().out
    assert re.search(rf"removed [1-9]\d* kernels \(.* MB\) from {re.escape(str(folder))}", out)
    assert not folder.exists()
    cli.main(["cache", "info"])
    assert "kernels: 0" in capsys.readouterr().out


def test_cache_info_leaves_out_files_another_process_replaces_meanwhile(monkeypatch, tmp_path):
    # Numba replaces a kernel's index file when another process saves the kernel: a
    # file listed may be gone by the time its size is read (CI's two processes met it).
    folder = tmp_path / "kernels" / "__pycache__"
    folder.mkdir(parents=True)
    (folder.parent / "k_kept.py").write_text("x = 1\n")
    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(folder.parent))
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            for k in range(50):
                path = folder / f"k_{k}.nbi"
                path.write_bytes(b"index")
                path.unlink()

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        infos = [cache.info() for _ in range(300)]
    finally:
        stop.set()
        thread.join()
    assert all(i["kernels"] == 1 and i["bytes"] >= 6 for i in infos)


def test_commands_are_required():
    result = run_module()
    assert result.returncode == 2
    assert "info" in result.stderr and "demo" in result.stderr and "bench" in result.stderr


# ---- demo -----------------------------------------------------------------------------

def test_demo_on_cuda_errors_cleanly_without_a_gpu(capsys, monkeypatch):
    monkeypatch.setattr(ng.device, "cuda_is_available", lambda: False)
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["demo", "--device", "cuda"])
    message = str(exit_info.value.code)
    assert "cuda" in message and "not available" in message
    assert "Traceback" not in capsys.readouterr().err


def test_demo_without_its_extra_names_the_install(monkeypatch):
    # (the demo reads the digits from scikit-learn's files without importing it)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(SystemExit, match=r'pip install -e "\.\[demo\]"'):
        cli.demo(epochs=1)


def test_the_demo_times_steps_on_compiled_kernels_apart_from_interpreted_ones():
    """(`tiered`: the steps run while kernels compile are interpreted.)"""
    times = [(1.5, True), (0.004, True), (0.001, False), (0.003, False)]
    assert demo_module._step_times(times) == (
        "2.00 ms compiled (median of 2 steps), 4.00 ms interpreted (median of 1 step); "
        "the first step took 1.50 s")
    assert demo_module._step_times([(0.5, False)]) == "the first step took 0.50 s"


def test_the_demo_says_once_what_a_slow_first_step_waited_for(capsys):
    # (its progress bar starts after that step, so the compile makes no ETA of minutes)
    with ng.engine.record() as rec:
        demo_module._first_step(0.4, rec)
        assert capsys.readouterr().out == ""
        demo_module._first_step(6.8, rec)
    assert capsys.readouterr().out == (
        "the first step took 6.8 s: it compiled 0 kernels and loaded 0 from the disk cache; "
        "later runs load them all from there\n")


def test_the_demo_reads_scikit_learns_digits_as_load_digits_does_and_holds_out_a_fifth():
    load_digits = pytest.importorskip("sklearn.datasets").load_digits
    images, labels = demo_module._digits()
    expected_images, expected_labels = load_digits(return_X_y=True)
    np.testing.assert_array_equal(images, (expected_images / 16).astype(np.float32))
    np.testing.assert_array_equal(labels, expected_labels)
    test = demo_module.held_out(labels, np.random.default_rng(0))
    assert test.sum() == 360  # every fifth of 1797, ordered by class
    per_class, held = np.bincount(labels), np.bincount(labels[test])
    assert np.all(np.abs(held - per_class / 5) <= 1)  # a fifth of each class
    again = demo_module.held_out(labels, np.random.default_rng(0))
    other = demo_module.held_out(labels, np.random.default_rng(1))
    assert np.array_equal(test, again) and not np.array_equal(test, other)


@pytest.mark.slow
def test_demo_reaches_95_percent_with_progress(capsys):
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    with ng.engine.record() as rec:
        accuracy = cli.demo()
    out = capsys.readouterr().out
    assert 0.95 <= accuracy <= 1  # chance is 0.1
    # the header: digits has 1797 images, a fifth held out
    train, held_out = map(int, re.search(
        r"^digits: (\d+) training and (\d+) held-out images; MLP 64-128-10, Adam lr=0.003, "
        r"batch 64, 12 epochs on cpu$", out, re.M).groups())
    assert (train, held_out) == (1437, 360)
    # the printed accuracy is the returned one, and right and total agree with it
    shown, right, total = re.search(
        r"^held-out accuracy: (\d\.\d{4}) \((\d+) of (\d+)\)$", out, re.M).groups()
    assert float(shown) == round(accuracy, 4) and int(total) == held_out
    assert int(right) / int(total) == pytest.approx(accuracy, abs=1e-12)
    # (on compiled kernels, or interpreted ones: NUMGRAD_CPU_KERNELS=numpy)
    step_ms, steps, first_s = map(float, re.search(
        r"^time per step: (\d+\.\d\d) ms (?:compiled|interpreted) \(median of (\d+) "
        r"steps\); the first step took (\d+\.\d\d) s$", out, re.M).groups())
    assert step_ms > 0 and steps == 12 * 23 - 1 and first_s >= 0
    compiled, loaded, launched = map(int, re.search(
        rf"^kernels: (\d+) compiled, (\d+) loaded from the disk cache "
        rf"\({re.escape(str(cache.cache_dir()))}\), (\d+) launched(?:, \d+ of them "
        rf"interpreted)?$", out, re.M).groups())
    # the demo's counts are the engine's: an enclosing record saw the same work
    assert (compiled, loaded, launched) == (rec.kernels_compiled, rec.disk_hits,
                                            rec.kernels_launched)
    assert launched >= 12 * 23 * 3  # forward, backward and Adam: several kernels a step
    assert re.search(r"training: 100%\|.*\| 276/276 .*step/s.*acc=[01]\.\d{3}.*loss=\d", out)


# ---- bench ----------------------------------------------------------------------------

def _seconds(cell):
    number, unit = cell.split()[:2]
    return float(number) * {"s": 1, "ms": 1e-3, "us": 1e-6}[unit]


@pytest.mark.slow
def test_bench_prints_ratios_and_skips_missing_peers(monkeypatch, capsys):
    def broken(*args):
        raise RuntimeError("no backend here")

    compare = cli.bench_module()
    peers = compare.PEERS
    monkeypatch.setattr(compare, "PEERS", [
        *peers,
        ("Missing", "numgrad_no_such_module", broken, ""),
        ("Broken", "numpy", broken, ""),
    ])
    rows = cli.bench(quick=True, budget=0.01)
    out = capsys.readouterr().out
    assert [row[0] for row in rows] == [name for name, *_ in compare.PEERS]
    by_name = {row[0]: row for row in rows}
    assert all(re.fullmatch(r"\d+(\.\d+)? (ms|us|s)", cell) for cell in by_name["numgrad"][1:])
    assert len(by_name["numgrad"]) == len(by_name["NumPy"]) == 4
    # each bracket is the peer's time over numgrad's, to the precision printed
    for cell, ours in zip(by_name["NumPy"][1:], by_name["numgrad"][1:]):
        ratio = float(re.fullmatch(r"\S+ (?:ms|us|s) \((\S+)x\)", cell).group(1))
        assert ratio == pytest.approx(_seconds(cell) / _seconds(ours), rel=0.1, abs=0.006)
    for name, module, *_ in peers[2:]:  # PyTorch and JAX: timed, or said to be missing
        if importlib.util.find_spec(module) is None:
            assert by_name[name][1].startswith(f"skipped: {module} is not installed")
    assert by_name["Missing"][1].startswith("skipped: numgrad_no_such_module is not installed")
    assert by_name["Broken"][1] == "skipped: RuntimeError: no backend here"
    header = out.splitlines()[1].split("  ")
    assert [h.strip() for h in header if h.strip()] == [
        "chain + grad, n=10,000", "MLP step 64-32-32-10, batch 64", "Hessian, Rosenbrock n=10"]
    assert re.search(r"^Missing +skipped: ", out, re.M)
    assert re.search(r"^numgrad kernels: \d+ compiled, \d+ loaded from the disk cache, "
                     r"[1-9]\d* launched$", out, re.M)


def omp_policy_probe():
    """A peer process's setup (see the next test): one callable, or an error if
    numgrad's OpenMP default reached the process."""
    if "OMP_WAIT_POLICY" in os.environ:
        raise RuntimeError(f"the peer got OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}")
    return [lambda: sum(range(100))]


def test_peers_run_in_processes_of_their_own_without_numgrads_openmp_policy(monkeypatch):
    cli.bench_module()  # (puts the checkout's asv_benchmarks on sys.path)
    from benchmarks.peers import PeerProcess, time_interleaved

    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")  # as numgrad sets it, if unset
    peer = PeerProcess("json", "test_cli:omp_policy_probe")
    try:
        assert peer.count == 1
        ours, theirs = time_interleaved([lambda: sum(range(100)), (peer, 0)], budget=0.01)
        assert 0 < ours < 1e-3 and 0 < theirs < 1e-3  # seconds per call
        # (CPU time: this thread's here, the peer's calling thread's there)
        ours, theirs = time_interleaved([lambda: sum(range(100)), (peer, 0)], budget=0.01,
                                        clock="cpu")
        assert 0 < ours < 1e-3 and 0 < theirs < 1e-3
    finally:
        peer.close()


def test_bench_without_a_source_checkout_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "ASV_BENCHMARKS", tmp_path / "asv_benchmarks")
    with pytest.raises(SystemExit, match="bench needs a source checkout") as exit_info:
        cli.main(["bench", "--quick"])
    assert str(tmp_path / "asv_benchmarks" / "benchmarks") in str(exit_info.value.code)


def test_bench_finds_the_harness_in_the_checkout():
    compare = cli.bench_module()
    assert Path(compare.__file__) == cli.ASV_BENCHMARKS / "benchmarks" / "compare.py"
    assert cli.ASV_BENCHMARKS == Path(__file__).resolve().parents[2] / "asv_benchmarks"


def test_help_describes_each_command_and_the_demos_options():
    done = subprocess.run([sys.executable, "-m", "numgrad", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "``" not in done.stdout  # (plain text, not reST)
    for command in ("info", "demo", "bench", "cache"):
        assert command in done.stdout
    done = subprocess.run([sys.executable, "-m", "numgrad", "demo", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    options = done.stdout.split("options:")[1]
    for option in ("--epochs", "--batch-size", "--hidden", "--lr", "--seed", "--device"):
        assert option in options
    assert options.count("(default:") == 6, options  # (each option says what it does)
