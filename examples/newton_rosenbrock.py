"""Newton's method on the extended Rosenbrock function, with the Hessian by double backward.

The gradient comes from ``ng.grad(f, x, create_graph=True)``, so it is itself a
function of ``x`` that numgrad can differentiate; a second ``ng.grad`` with the
identity matrix as a batch of seeds (``is_grads_batched=True``) gives every row of
the Hessian in one backward pass. Newton's step solves ``H d = -g``; a backtracking
line search keeps each step downhill, and a shift ``H + mu I`` handles the points
where ``H`` is not positive definite. Near the minimum at ``(1, ..., 1)`` the
gradient norm falls quadratically (the number of correct digits doubles per step).

    python examples/newton_rosenbrock.py            # n = 10
    python examples/newton_rosenbrock.py --n 4      # a quick run
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import numgrad as ng


def rosenbrock(x):
    """sum over i of 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2; minimum 0 at all ones."""
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


@ng.jit  # traced on the first call, replayed after: no Python runs per iteration
def derivatives(x):
    """f(x), its gradient and its Hessian, by two reverse passes."""
    x = x.detach().requires_grad_()
    f = rosenbrock(x)
    (g,) = ng.grad(f, x, create_graph=True)  # g has a grad_fn: differentiable again
    (h,) = ng.grad(g, x, grad_outputs=ng.eye(len(x)), is_grads_batched=True)
    return f, g, h


def value_gradient_hessian(x_np: np.ndarray):
    """f(x), its gradient and its Hessian at a NumPy point, as NumPy values."""
    f, g, h = derivatives(x_np)
    return f.item(), g.numpy(), h.numpy()


def analytic_hessian(x: np.ndarray) -> np.ndarray:
    """The Hessian written out by hand (tridiagonal), to check the double backward."""
    hess = np.diag(-400 * x[:-1], 1) + np.diag(-400 * x[:-1], -1)
    diagonal = np.zeros_like(x)
    diagonal[:-1] += 1200 * x[:-1] ** 2 - 400 * x[1:] + 2
    diagonal[1:] += 200
    return hess + np.diag(diagonal)


def newton(x0: np.ndarray, tol: float = 1e-10, max_iter: int = 100, verbose: bool = True):
    """Damped Newton iterations from `x0` until the gradient norm is below `tol`."""
    x = x0.copy()
    if verbose:
        print(f"{'iter':>4}  {'f(x)':>12}  {'|grad|':>10}  {'step':>6}")
    for k in range(max_iter):
        f, g, h = value_gradient_hessian(x)
        gnorm = float(np.linalg.norm(g))
        if gnorm < tol:
            if verbose:
                print(f"{k:4d}  {f:12.4e}  {gnorm:10.2e}  converged")
            return x, k
        # Shift the Hessian until it is positive definite (a Cholesky factor exists).
        mu = 0.0
        while True:
            try:
                lower = np.linalg.cholesky(h + mu * np.eye(len(x)))
                break
            except np.linalg.LinAlgError:
                mu = max(2 * mu, 1e-3 * np.abs(np.diag(h)).max())
        d = -np.linalg.solve(lower.T, np.linalg.solve(lower, g))
        # Backtracking (Armijo) line search: values only, no gradient needed.
        t = 1.0
        with ng.no_grad():
            while rosenbrock(ng.tensor(x + t * d)).item() > f + 1e-4 * t * (g @ d) and t > 1e-10:
                t /= 2
        x = x + t * d
        if verbose:
            print(f"{k:4d}  {f:12.4e}  {gnorm:10.2e}  {t:6.3f}" + (f"  (shift {mu:.1e})"
                                                                   if mu else ""))
    raise RuntimeError(f"Newton's method did not converge in {max_iter} iterations")


def main(argv=None) -> np.ndarray:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    quick = os.environ.get("NUMGRAD_EXAMPLES_QUICK") == "1"
    parser.add_argument("--n", type=int, default=4 if quick else 10, help="dimensions")
    args = parser.parse_args(argv)

    # -1.2 everywhere. (From (-1.2, 1, -1.2, 1, ...) and n >= 4 Newton's method can
    # end in the function's other, local minimum near (-1, 1, ..., 1).)
    x0 = np.full(args.n, -1.2)
    _, _, h = value_gradient_hessian(x0)
    print(f"Hessian by double backward vs written out: max difference "
          f"{np.abs(h - analytic_hessian(x0)).max():.1e}")
    x, iterations = newton(x0)
    print(f"minimum after {iterations} Newton steps: max |x - 1| = {np.abs(x - 1).max():.1e}")
    if not np.allclose(x, 1, atol=1e-8):
        raise SystemExit(f"expected the minimum at (1, ..., 1), got {x}")
    return x


if __name__ == "__main__":
    main()
