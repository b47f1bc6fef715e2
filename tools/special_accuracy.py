"""The accuracy of numgrad's special functions against mpmath at 40 digits: the largest
relative error of digamma, polygamma (orders 1, 2, 4), erfinv and lgamma over points in
1e-6..1e6, 0.1..5 and digamma's root's neighbourhood (erfinv: [-1, 1] and up to 1 - 1e-15).

Run it where mpmath is installed (``pip install mpmath``; numgrad does not depend on it):
``NUMGRAD_CPU_KERNELS=numba python tools/special_accuracy.py`` for the compiled kernels,
``=numpy`` for the interpreter's. docs/decisions.md quotes what it printed.
"""

import mpmath
import numpy as np

import numgrad as ng

mpmath.mp.dps = 40
rng = np.random.default_rng(0)
X = np.concatenate([np.geomspace(1e-6, 1e6, 300), rng.uniform(0.1, 5, 300),
                    1.4616321449683622 + np.linspace(-0.3, 0.3, 101)])
U = np.concatenate([rng.uniform(-1, 1, 300), 1 - np.geomspace(1e-15, 1e-2, 50)])
AWAY_FROM_ROOTS = X[(np.abs(X - 1) > 0.01) & (np.abs(X - 2) > 0.01)]


def worst(got: ng.Tensor, exact, points: np.ndarray) -> float:
    want = np.array([float(exact(mpmath.mpf(v))) for v in points])
    return float(np.max(np.abs(got.numpy() - want) / np.abs(want)))


if __name__ == "__main__":
    print(f"digamma      {worst(ng.digamma(X), mpmath.digamma, X):.2g}")
    for n in (1, 2, 4):
        error = worst(ng.polygamma(n, X), lambda v, n=n: mpmath.polygamma(n, v), X)
        print(f"polygamma {n}  {error:.2g}")
    print(f"erfinv       {worst(ng.erfinv(U), mpmath.erfinv, U):.2g}")
    print(f"lgamma       {worst(ng.lgamma(AWAY_FROM_ROOTS), mpmath.loggamma, AWAY_FROM_ROOTS):.2g}")
