"""numgrad's asv benchmarks: numgrad against NumPy and hand-written Numba, in one run.

They time compiled kernels. numgrad's default CPU mode (``tiered``) interprets a kernel
until its worker process has compiled it, so a benchmark's warm-up could end with its
kernels still interpreted; importing this package (asv does, and so do ``tools/``)
therefore pins ``NUMGRAD_CPU_KERNELS=numba`` where the environment names no mode.
`ENVIRONMENT_MODE` keeps what it named: the first-use benchmarks measure that mode,
numgrad's default where it is None.
"""

import os

#: ``NUMGRAD_CPU_KERNELS`` as the environment gave it (None: numgrad's default)
ENVIRONMENT_MODE = os.environ.get("NUMGRAD_CPU_KERNELS")
os.environ.setdefault("NUMGRAD_CPU_KERNELS", "numba")
