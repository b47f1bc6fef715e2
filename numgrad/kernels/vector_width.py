"""512-bit vectors in the CPU kernels, where the CPU has them (AVX-512).

LLVM tunes code for Intel's AVX-512 cores to prefer 256-bit vectors (four float64
lanes, not eight), for fear that 512-bit work slows the clock. numgrad's kernels are
long vectorized loops of `numgrad.kernels.vecmath` code, and measured faster with
512-bit vectors (docs/design.md, "Vector math"). So the functions that Numba lowers
while numgrad compiles a kernel (inside `wide`, in that thread) carry LLVM's
``"prefer-vector-width"="512"`` attribute; other Numba code in the process compiles
as before. Numba has no hook for function attributes: its JIT code library's
``add_ir_module`` is wrapped to add it.

``NUMGRAD_VECTOR_BITS=256`` keeps LLVM's choice; any value but 512 and 256 is a
`ValueError` when the CPU target is first used (tiered: the launch after its
background thread met it).
"""

from __future__ import annotations

import os
import threading

import llvmlite.binding as llvm
from numba.core import codegen

_ASKED = os.environ.get("NUMGRAD_VECTOR_BITS", "512")
if _ASKED not in ("512", "256"):
    raise ValueError(f"NUMGRAD_VECTOR_BITS={_ASKED!r}; expected '512' (the default: used "
                     f"where the CPU has AVX-512) or '256' (LLVM's own choice)")
#: The vector width numgrad's CPU kernels prefer, in bits: 512 on a CPU with
#: AVX-512 (unless ``NUMGRAD_VECTOR_BITS=256``), else LLVM's own choice (256 or less).
BITS = 512 if _ASKED == "512" and llvm.get_host_cpu_features().get("avx512f", False) \
    else 256
ATTRIBUTE = '"prefer-vector-width"="512"'

_compiling = threading.local()


class _Wide:
    """Context manager: what Numba lowers in this thread meanwhile prefers `BITS`."""

    def __enter__(self) -> None:
        _compiling.depth = getattr(_compiling, "depth", 0) + 1

    def __exit__(self, *exc) -> None:
        _compiling.depth -= 1


wide = _Wide()


def _add_ir_module(self, ir_module, _add=codegen.JITCodeLibrary.add_ir_module):
    if getattr(_compiling, "depth", 0):
        for fn in ir_module.functions:
            if not fn.is_declaration:  # (llvmlite knows no key="value" attributes)
                set.add(fn.attributes, ATTRIBUTE)
    return _add(self, ir_module)


if BITS == 512:
    codegen.JITCodeLibrary.add_ir_module = _add_ir_module
