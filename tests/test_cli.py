"""``python -m numgrad``: info, demo, bench and cache."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

import numgrad as ng
from numgrad import __main__ as cli
from numgrad.kernels import cache


def run_module(*args, **env):
    """``python -m numgrad ARGS`` in a fresh process (so Numba reads `env` at import)."""
    result = subprocess.run(
        [sys.executable, "-m", "numgrad", *args], capture_output=True, text=True,
        env={**os.environ, **env}, timeout=300)
    return result


# ---- info -----------------------------------------------------------------------------

def test_info_reports_versions_targets_and_cache(capsys):
    cli.main(["info"])
    out = capsys.readouterr().out
    assert f"numgrad {ng.__version__}" in out and "numba " in out and "numba-cuda " in out
    assert "targets: cpu" in out
    assert f"kernel cache: {cache.cache_dir()}" in out
    if not ng.device.cuda_is_available():
        assert "cuda: not available" in out


def test_info_without_the_simulator_claims_no_simulator():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run([sys.executable, "-m", "numgrad", "info"], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "simulator (NUMBA_ENABLE_CUDASIM=1" not in result.stdout
    cuda_lines = [line for line in result.stdout.splitlines() if line.startswith("cuda:")]
    assert len(cuda_lines) == 1


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
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    cuda_line, numba_line = cli.cuda_status()
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

def test_cache_info_and_clear(monkeypatch, tmp_path, capsys):
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
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(SystemExit, match=r'pip install -e "\.\[demo\]"'):
        cli.demo(epochs=1)


def test_demo_reaches_95_percent_with_progress(capsys):
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    accuracy = cli.demo()
    out = capsys.readouterr().out
    assert accuracy >= 0.95
    assert re.search(r"held-out accuracy: 0\.9[5-9]", out)
    assert re.search(r"time per step: \d+\.\d\d ms", out)
    assert re.search(r"kernels: \d+ compiled, \d+ loaded from the disk cache", out)
    assert "loss=" in out and "acc=" in out and "step/s" in out  # tqdm's bar and postfix


# ---- bench ----------------------------------------------------------------------------

def test_bench_prints_ratios_and_skips_missing_peers(monkeypatch, capsys):
    def broken(*args):
        raise RuntimeError("no backend here")

    numgrad_row, numpy_row = cli.PEERS[:2]
    monkeypatch.setattr(cli, "PEERS", [
        numgrad_row, numpy_row,
        ("Missing", "numgrad_no_such_module", broken, ""),
        ("Broken", "numpy", broken, ""),
    ])
    rows = cli.bench(quick=True, budget=0.01)
    out = capsys.readouterr().out
    by_name = {row[0]: row for row in rows}
    assert len(by_name["numgrad"]) == 4 and len(by_name["NumPy"]) == 4
    assert all(re.fullmatch(r"\S+ (ms|us|s) \(\S+x\)", cell) for cell in by_name["NumPy"][1:])
    assert by_name["Missing"][1].startswith("skipped: numgrad_no_such_module is not installed")
    assert by_name["Broken"][1] == "skipped: RuntimeError: no backend here"
    assert "chain + grad" in out and "MLP step" in out and "Hessian" in out
    assert re.search(r"^Missing +skipped: ", out, re.M)


def test_bench_names_every_peer(capsys):
    names = [name for name, *_ in cli.PEERS]
    assert names == ["numgrad", "NumPy", "PyTorch", "JAX"]
    for _name, module, *_ in cli.PEERS[2:]:
        assert module in ("torch", "jax")
