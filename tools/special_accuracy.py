"""The accuracy of numgrad's special functions against mpmath at 40 digits: the largest
relative error of digamma, polygamma (orders 1, 2, 4), erfinv and lgamma over points in
1e-6..1e6, 0.1..5 and digamma's root's neighbourhood (erfinv: [-1, 1] and up to 1 - 1e-15);
of i0, i1, i0e and i1e over +-(1e-6..713), 0..40 and the cut at 20; of gammainc and
gammaincc over a in 1e-3..1e3 and x in 1e-4..1e3 and around a, where it also prints the
largest error in ulps of ``1 + |x - a|`` (the problem's conditioning) and SciPy's.

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
B = np.concatenate([np.geomspace(1e-6, 713, 300), rng.uniform(0, 40, 300),
                    20 + np.linspace(-1e-3, 1e-3, 41)])
B = np.concatenate([B, -B[::7]])
AWAY_FROM_ROOTS = X[(np.abs(X - 1) > 0.01) & (np.abs(X - 2) > 0.01)]


GA = np.geomspace(1e-3, 1e3, 30)[:, None]
GX = np.concatenate([np.geomspace(1e-4, 1e3, 30)[None].repeat(30, 0),
                     GA * (1 + np.array([-0.9, -0.6, -0.3, -0.01, 0.0, 0.01, 0.3, 1.0, 3.0])),
                     GA + 1], 1)
GA = np.broadcast_to(GA, GX.shape)


def incomplete(name: str) -> str:
    import scipy.special

    lower = name == "gammainc"
    want = np.array([float(mpmath.gammainc(mpmath.mpf(a), *((0, mpmath.mpf(x)) if lower else
                                                           (mpmath.mpf(x), mpmath.inf)),
                                           regularized=True))
                     for a, x in zip(GA.ravel(), GX.ravel())]).reshape(GX.shape)
    out = []
    for got in (getattr(ng, name)(GA, GX).numpy(), getattr(scipy.special, name)(GA, GX)):
        error = np.where(want > 1e-300, np.abs(got - want) / np.maximum(want, 1e-300), 0)
        ulps = error / (1 + np.abs(GX - GA)) / np.finfo(float).eps
        out.append(f"{error.max():.2g} ({ulps.max():.0f} ulps)")
    return "  SciPy's: ".join(out)


def worst(got: ng.Tensor, exact, points: np.ndarray) -> float:
    want = np.array([float(exact(mpmath.mpf(v))) for v in points])
    return float(np.max(np.abs(got.numpy() - want) / np.abs(want)))


if __name__ == "__main__":
    print(f"digamma      {worst(ng.digamma(X), mpmath.digamma, X):.2g}")
    for n in (1, 2, 4):
        error = worst(ng.polygamma(n, X), lambda v, n=n: mpmath.polygamma(n, v), X)
        print(f"polygamma {n}  {error:.2g}")
    print(f"erfinv       {worst(ng.erfinv(U), mpmath.erfinv, U):.2g}")
    for name in ("i0", "i1", "i0e", "i1e"):
        order, scaled = int(name[1]), name.endswith("e")
        exact = (lambda v, n=order, e=scaled:  # noqa: E731
                 mpmath.besseli(n, v) * (mpmath.exp(-abs(v)) if e else 1))
        print(f"{name:12} {worst(getattr(ng, name)(B), exact, B):.2g}")
    for name in ("gammainc", "gammaincc"):
        print(f"{name:12} {incomplete(name)}")
    print(f"lgamma       {worst(ng.lgamma(AWAY_FROM_ROOTS), mpmath.loggamma, AWAY_FROM_ROOTS):.2g}")
