#!/usr/bin/env bash
# Check numgrad's CUDA target on a machine with an NVIDIA GPU, from the repo root:
# the device-parametrised tests on real hardware (not the simulator), then one
# summary table of timings (tools/gpu_table.py).
#
#   tools/gpu_check.sh                      # makes .venv, installs numgrad into it
#   VENV=/path/to/venv tools/gpu_check.sh   # uses that environment as it is
set -euo pipefail
cd "$(dirname "$0")/.."

# A virtual environment with numgrad, its test and bench extras and numba-cuda.
if [[ -z "${VENV:-}" ]]; then
    VENV=.venv  # git ignores it
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -e ".[test,bench,cuda]"
fi
PY="$VENV/bin/python"

# Real hardware only: the simulator would pass the tests without touching a GPU.
unset NUMBA_ENABLE_CUDASIM

if command -v nvidia-smi >/dev/null; then
    nvidia-smi -L || true  # informative only; the check below decides
fi

if ! "$PY" -c "import sys, numgrad as ng; sys.exit(not ng.cuda.is_available())"; then
    echo "gpu_check: numgrad sees no CUDA device (ng.cuda.is_available() is False);" \
         "check the driver (nvidia-smi) and that numba-cuda is installed in $VENV" >&2
    exit 1
fi

# The device-parametrised tests, on cuda.
NUMGRAD_TEST_DEVICE=cuda "$PY" -m pytest tests/system/test_op_matrix.py \
    tests/autograd/test_autograd.py tests/numpy/test_tensor.py tests/numpy/test_array_ops.py \
    tests/kernels/test_cuda.py -q -x

# The summary table.
"$PY" tools/gpu_table.py
