"""Check gradients against central finite differences, to first and second order."""

from __future__ import annotations

import numpy as np

from numgrad.autograd import grad
from numgrad.numpy.creation import tensor
from numgrad.tensor import Tensor


class GradcheckError(RuntimeError):
    """A computed gradient disagrees with finite differences."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _numerical_jacobians(fn, values: list[np.ndarray], wrt: list[int], eps: float):
    """d(flattened outputs)/d(flattened input i), by central differences in float64."""
    def evaluate(arrays):
        # Inputs require grad as in the real call: `fn` may differentiate inside.
        outs = _as_tuple(fn(*(tensor(a, requires_grad=i in wrt) for i, a in enumerate(arrays))))
        return [np.asarray(o.numpy(), dtype=np.float64).ravel() for o in outs]

    n_outputs = len(evaluate(values))
    jacobians = {}
    for i in wrt:
        columns = []
        for j in range(values[i].size):
            shifted = [v.copy() for v in values]
            shifted[i].flat[j] += eps
            plus = evaluate(shifted)
            shifted[i].flat[j] -= 2 * eps
            minus = evaluate(shifted)
            columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
        # jacobians[i][k]: (output k size, input i size)
        jacobians[i] = [np.stack([c[k] for c in columns], axis=1) if columns
                        else np.zeros((0, 0)) for k in range(n_outputs)]
    return jacobians


def gradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3) -> bool:
    """Compare ``ng.grad`` of `fn` at `inputs` with central finite differences.

    The inputs that require grad are checked, in float64. Returns True, or raises
    `GradcheckError` naming the worst mismatch.

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([0.5, 1.5], requires_grad=True)
    >>> ng.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    values = [np.asarray(t.numpy(), dtype=np.float64) for t in inputs]
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError("gradcheck: no input requires grad")
    numerical = _numerical_jacobians(fn, values, wrt, eps)
    leaves = [tensor(v, requires_grad=i in wrt) for i, v in enumerate(values)]
    outputs = _as_tuple(fn(*leaves))
    worst = (0.0, None)
    for k, out in enumerate(outputs):
        for row in range(out.size):
            if out.requires_grad:
                seed = np.zeros(out.size)
                seed[row] = 1.0
                grads = grad(out, [leaves[i] for i in wrt],
                             grad_outputs=tensor(seed.reshape(out.shape)).astype(out.dtype),
                             retain_graph=True, materialize_grads=True)
            else:
                grads = [leaves[i].zeros_like() for i in wrt]
            for i, g in zip(wrt, grads):
                analytic = np.asarray(g.numpy(), dtype=np.float64).ravel()
                expected = numerical[i][k][row]
                excess = np.abs(analytic - expected) - (atol + rtol * np.abs(expected))
                if excess.size and excess.max() > worst[0]:
                    j = int(excess.argmax())
                    worst = (excess.max(), (k, row, i, j, analytic[j], expected[j]))
    if worst[1] is not None:
        k, row, i, j, a, n = worst[1]
        raise GradcheckError(
            f"gradient mismatch: d output {k}[{row}] / d input {i}[{j}] is {a!r} by backward "
            f"but {n!r} by finite differences (atol={atol}, rtol={rtol})")
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3) -> bool:
    """`gradcheck` of the vector-Jacobian product of `fn`: checks second derivatives.

    `grad_outputs` defaults to fixed random vectors, one per output.
    """
    inputs = _as_tuple(inputs)
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [tensor(rng.standard_normal(o.shape)) for o in _as_tuple(fn(*inputs))]

    def vjp(*xs):
        outs = _as_tuple(fn(*xs))
        return grad(outs, [xs[i] for i in wrt],
                    grad_outputs=[v.astype(o.dtype) for v, o in zip(_as_tuple(grad_outputs),
                                                                    outs)],
                    create_graph=True, materialize_grads=True)

    return gradcheck(vjp, inputs, eps=eps, atol=atol, rtol=rtol)
