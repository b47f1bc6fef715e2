"""numgrad's asv benchmarks: numgrad against NumPy and hand-written Numba, in one run."""
