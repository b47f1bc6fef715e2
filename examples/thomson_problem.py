"""The Thomson problem: N equal charges on a sphere, at minimum Coulomb energy.

J. J. Thomson asked (1904) where N electrons confined to a sphere come to rest.
The energy ``E = sum over pairs of 1 / |p_i - p_j|`` has many local minima as N
grows; the best known minima are tabulated. This example minimises it by
gradient descent with numgrad's autograd and Adam, for several random starts at
once: the starts are a batch axis, ``(starts, N, 3)``, and the batch's total energy
is differentiated once per step (the systems are independent, so each gets its
own gradient). Points stay on the sphere because the energy is evaluated at
``x / |x|``. The lowest energy found is compared with the published value.

    python examples/thomson_problem.py               # N = 6, 12, 20
    python examples/thomson_problem.py --n 12 32     # pick the charges
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import numgrad as ng

#: Best known energies (Wales and Ulker, 2006; Wikipedia's "Thomson problem" table).
KNOWN = {2: 0.500000000, 3: 1.732050808, 4: 3.674234614, 5: 6.474691495,
         6: 9.985281374, 7: 14.452977414, 8: 19.675287861, 9: 25.759986531,
         10: 32.716949460, 11: 40.596450510, 12: 49.165253058, 13: 58.853230612,
         14: 69.306363297, 15: 80.670244114, 16: 92.911655302, 17: 106.050404829,
         18: 120.084467447, 19: 135.089467557, 20: 150.881568334, 24: 223.347074052,
         32: 412.261274651}


def energies(x):
    """Coulomb energy of each system in a batch of positions `x`, shape (starts, n, 3)."""
    p = x / (x * x).sum(axis=-1, keepdims=True).sqrt()  # onto the unit sphere
    diff = p[:, :, None, :] - p[:, None, :, :]
    n = x.shape[1]
    # The identity keeps each point's distance to itself away from zero (sqrt'(0) is
    # infinite); its n terms 1/1 are taken off again. The sum counts each pair twice.
    dist = ((diff * diff).sum(axis=-1) + ng.eye(n)).sqrt()
    return ((1 / dist).sum(axis=(1, 2)) - n) / 2


def minimise(n: int, starts: int, steps: int, lr: float = 0.1,
             seed: int = 0) -> tuple[float, np.ndarray]:
    """The lowest energy over `starts` random starts, and every start's final energy."""
    rng = np.random.default_rng(seed)
    x = ng.tensor(rng.normal(size=(starts, n, 3)), requires_grad=True)
    optimizer = ng.optim.Adam([x], lr=lr)
    for step in range(steps):
        # Cosine decay of the step size: large steps explore, small ones converge.
        optimizer.lr = lr * 0.5 * (1 + np.cos(np.pi * step / steps)) + 1e-5
        optimizer.zero_grad()
        energies(x).sum().backward()
        optimizer.step()
    with ng.no_grad():
        final = energies(x).numpy()
    return float(final.min()), final


def main(argv=None) -> dict[int, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    quick = os.environ.get("NUMGRAD_EXAMPLES_QUICK") == "1"
    parser.add_argument("--n", type=int, nargs="+", default=[5, 6] if quick else [6, 12, 20])
    parser.add_argument("--starts", type=int, default=4 if quick else 8)
    parser.add_argument("--steps", type=int, default=300 if quick else 2000)
    args = parser.parse_args(argv)

    print(f"{'N':>3}  {'best energy':>14}  {'known':>14}  {'difference':>10}  "
          f"{'starts at best':>14}  {'time':>6}")
    found = {}
    for n in args.n:
        start = time.perf_counter()
        best, final = minimise(n, args.starts, args.steps)
        known = KNOWN.get(n)
        at_best = int((final < best + 1e-6).sum())
        difference = f"{best - known:10.1e}" if known else f"{'':>10}"
        print(f"{n:3d}  {best:14.9f}  {known if known else float('nan'):14.9f}  {difference}  "
              f"{at_best:>7d} of {args.starts:<4d}  {time.perf_counter() - start:5.1f}s")
        found[n] = best
        if known is not None and abs(best - known) > 1e-6 * known:
            raise SystemExit(f"N={n}: the lowest energy found, {best:.9f}, is not the known "
                             f"minimum {known:.9f}; try more --starts or --steps")
    return found


if __name__ == "__main__":
    main()
