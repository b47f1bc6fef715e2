"""``python -m numgrad info | demo | bench | cache info | cache clear``.

- ``info``: versions, the targets numgrad can run on (and whether CUDA would be
  Numba's simulator), and the kernel cache.
- ``demo``: train a small MLP on scikit-learn's digits, with a progress bar, then
  report held-out accuracy, time per step and the compile bill (``numgrad.demo``).
- ``bench``: numgrad next to NumPy (and PyTorch and JAX, when installed) on an
  elementwise chain, an MLP training step and a Hessian, as ratios; the harness is
  ``asv_benchmarks/benchmarks/compare.py``, so this needs a source checkout.
- ``cache info`` / ``cache clear``: the on-disk kernel cache.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import platform
import sys
from pathlib import Path

import numpy as np

import numgrad as ng
from numgrad.demo import demo
from numgrad.kernels import cache

#: The asv suite of a source checkout; ``bench`` runs its ``benchmarks/compare.py``.
ASV_BENCHMARKS = Path(__file__).resolve().parent.parent / "asv_benchmarks"

# ---- info ---------------------------------------------------------------------------


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _numba_cuda() -> tuple[str | None, str]:
    """Numba's CUDA target: (where it comes from, or None when it cannot be imported, why)."""
    version = _version("numba-cuda")
    try:
        importlib.import_module("numba.cuda")
    except Exception as error:  # an ImportError, or a broken CUDA install
        return None, f"numba.cuda cannot be imported ({type(error).__name__}: {error})"
    if version:
        return f"numba-cuda {version}", ""
    return "Numba's built-in numba.cuda, deprecated in favour of numba-cuda", ""


def cuda_status() -> list[str]:
    """Lines on the 'cuda' device: whether numgrad can use it, and what Numba offers.

    ``NUMBA_ENABLE_CUDASIM=1`` makes Numba's CUDA target a simulator that runs on the
    CPU; this says so rather than claim a GPU.
    """
    simulator = os.environ.get("NUMBA_ENABLE_CUDASIM", "") == "1"
    source, why = _numba_cuda()
    if source is None:
        numba_line = f"numba cuda: not available: {why}; pip install -e '.[cuda]'"
    elif simulator:
        numba_line = (f"numba cuda: the CUDA simulator (NUMBA_ENABLE_CUDASIM=1, {source}): "
                      f"kernels run on the CPU, for testing; this is not a GPU")
    else:
        import numba.cuda

        try:
            gpus = [gpu.name.decode() if isinstance(gpu.name, bytes) else str(gpu.name)
                    for gpu in numba.cuda.gpus] if numba.cuda.is_available() else []
        except Exception:  # a driver that answers is_available() but not the list
            gpus = []
        numba_line = f"numba cuda: GPU {', '.join(gpus)} ({source})" if gpus else \
            f"numba cuda: no CUDA GPU found ({source}); NUMBA_ENABLE_CUDASIM=1 selects " \
            f"the simulator"
    if ng.device.cuda_is_available():
        what = "the CUDA simulator, not a GPU" if simulator else "a GPU"
        cuda_line = f"cuda: available ({what})"
    else:
        cuda_line = "cuda: not available (see the numba cuda line)"
    return [cuda_line, numba_line]


def _cache_line() -> str:
    entry = cache.info()
    return (f"kernel cache: {entry['path']} ({entry['kernels']} kernels, "
            f"{entry['bytes'] / 1e6:.1f} MB)")


def info() -> None:
    """Print versions, the targets available and the kernel cache."""
    import numba

    numba_cuda = _version("numba-cuda") or "not installed"
    print(f"numgrad {ng.__version__}  numpy {np.__version__}  numba {numba.__version__}  "
          f"numba-cuda {numba_cuda}  python {platform.python_version()}")
    print(f"targets: cpu ({numba.config.NUMBA_NUM_THREADS} threads)")
    for line in cuda_status():
        print(line)
    print(_cache_line())


# ---- cache --------------------------------------------------------------------------


def cache_command(action: str) -> None:
    """``cache info`` prints the cache folder and its size; ``cache clear`` empties it."""
    if action == "info":
        entry = cache.info()
        print(f"folder:  {entry['path']}")
        print(f"kernels: {entry['kernels']}")
        print(f"size:    {entry['bytes'] / 1e6:.1f} MB")
        print("set NUMGRAD_CACHE_DIR to use another folder")
    else:
        entry = cache.info()
        cache.clear()
        print(f"removed {entry['kernels']} kernels ({entry['bytes'] / 1e6:.1f} MB) from "
              f"{entry['path']}")


# ---- bench ----------------------------------------------------------------------------

def bench_module():
    """The benchmark harness, ``benchmarks.compare`` from the checkout's asv_benchmarks/.

    It is not part of the package: an installed wheel has no asv_benchmarks/ beside it,
    and then this exits with a message saying so.
    """
    package = ASV_BENCHMARKS / "benchmarks"
    if not (package / "compare.py").is_file():
        raise SystemExit(
            f"python -m numgrad bench needs a source checkout of numgrad: it runs "
            f"asv_benchmarks/benchmarks/compare.py, which is not in the installed package "
            f"(looked in {package}); clone the repository and pip install -e . from it")
    if str(ASV_BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(ASV_BENCHMARKS))
    return importlib.import_module("benchmarks.compare")


def bench(quick: bool = False, budget: float | None = None) -> list[list[str]]:
    """Print numgrad's times next to its peers' (see ``bench_module``); returns the rows."""
    return bench_module().bench(quick, budget)


# ---- command line -------------------------------------------------------------------


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m numgrad",
        description="numgrad's command line: versions and targets, the demo, the "
                    "benchmarks beside NumPy, and the kernel cache.",
        epilog="Each command's options: python -m numgrad COMMAND --help")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="versions, targets and the kernel cache")

    run = commands.add_parser(
        "demo", help="train an MLP on scikit-learn's digits",
        description="Train a small MLP on scikit-learn's handwritten digits, with a "
                    "progress bar, then report the held-out accuracy, the time per step "
                    "and how many kernels were compiled or loaded from the disk cache.")
    run.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                     help="where to train (default: %(default)s)")
    run.add_argument("--epochs", type=int, default=12,
                     help="passes over the training images (default: %(default)s)")
    run.add_argument("--batch-size", type=int, default=64,
                     help="images per step (default: %(default)s)")
    run.add_argument("--hidden", type=int, default=128,
                     help="units of the hidden layer (default: %(default)s)")
    run.add_argument("--lr", type=float, default=3e-3,
                     help="Adam's learning rate (default: %(default)s)")
    run.add_argument("--seed", type=int, default=0,
                     help="seed of the held-out split, the weights and the batch order "
                          "(default: %(default)s)")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    timing = commands.add_parser(
        "bench", help="numgrad vs NumPy (and PyTorch, JAX when installed), as ratios")
    timing.add_argument("--quick", action="store_true",
                        help="tiny sizes and short timings: a smoke test, not a measurement")

    kernels = commands.add_parser("cache", help="the on-disk kernel cache")
    kernels.add_argument("action", choices=["info", "clear"])

    args = parser.parse_args(argv)
    if args.command == "info":
        info()
    elif args.command == "demo":
        demo(args.device, args.epochs, args.batch_size, args.hidden, args.lr, args.seed,
             progress=not args.no_progress)
    elif args.command == "bench":
        bench(args.quick)
    else:
        cache_command(args.action)


if __name__ == "__main__":
    main()
