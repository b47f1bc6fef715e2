"""``python -m numgrad.kernels.cuda LOG``: compile every kernel logged in LOG to PTX."""

import sys

from numgrad.kernels.cuda.ptx import compile_ptx

print(f"compiled {compile_ptx(sys.argv[1])} kernels to PTX for cc 9.0")
