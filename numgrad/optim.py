"""Optimizers: SGD, Adam and AdamW, with PyTorch's update formulas.

`Optimizer.step` updates every parameter that has a gradient, in place and under
``no_grad`` (the parameter object stays the same; SPEC §1), then realizes the new
parameters and the optimizer's state in one schedule. So a training loop's lazy
graph never grows, and each parameter's update (state and value) is fused.
Hyperparameters are Python floats, which compiled kernels take as runtime
arguments: a changing step size never recompiles.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

from numgrad.autograd import no_grad
from numgrad.tensor import Tensor, realize

__all__ = ["SGD", "Adam", "AdamW", "Optimizer"]


def _check_number(name: str, value, low: float = 0.0, high: float | None = None) -> float:
    """`value` as a float in ``[low, high)``, or a ValueError naming `name`."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    if not (value >= low and (high is None or value < high)):
        bounds = f"in [{low}, {high})" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {bounds}, got {value}")
    return float(value)


class Optimizer:
    """Base class: holds the parameters and their state; subclasses define `_update`.

    Parameters
    ----------
    params : iterable of Tensor
        Leaf tensors that require grad, each listed once.
    """

    def __init__(self, params: Iterable[Tensor]):
        if isinstance(params, Tensor):
            raise TypeError(
                "params must be an iterable of Tensors, not a Tensor; pass [tensor]")
        params = list(params)
        if not params:
            raise ValueError("params is empty: the optimizer needs at least one parameter")
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"parameter {i} must be a Tensor, not {type(p).__name__}")
            if not p.requires_grad:
                raise ValueError(
                    f"parameter {i} (shape {p.shape}) does not require grad; call "
                    f"requires_grad_() on it or leave it out")
            if not p.is_leaf:
                raise ValueError(
                    f"parameter {i} (shape {p.shape}) is not a leaf tensor; optimize the "
                    f"leaves it was computed from")
        if len({id(p) for p in params}) != len(params):
            raise ValueError("params lists a parameter more than once")
        self.params: list[Tensor] = params
        #: One dict per parameter (momentum buffers, moments, step counts).
        self.state: list[dict] = [{} for _ in params]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: set ``.grad`` to None (or to zeros)."""
        for p in self.params:
            if p.grad is not None:
                p.grad = None if set_to_none else p.grad.zeros_like()

    def step(self) -> None:
        """Update every parameter that has a gradient, then realize all new values."""
        changed: list[Tensor] = []
        with no_grad():
            for p, state in zip(self.params, self.state):
                if p.grad is not None:
                    self._update(p, p.grad, state)
                    changed.append(p)
                    changed.extend(v for v in state.values() if isinstance(v, Tensor))
        realize(*changed)

    def _update(self, p: Tensor, grad: Tensor, state: dict) -> None:
        """Give `p` its new value in place and update its `state` (lazily)."""
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, as ``torch.optim.SGD``.

    With ``d = grad + weight_decay * p`` and a buffer ``b`` (``b = d`` on the first
    step, then ``b = momentum * b + (1 - dampening) * d``), the update is
    ``p -= lr * (d + momentum * b)`` with `nesterov`, ``p -= lr * b`` without, and
    ``p -= lr * d`` when ``momentum == 0``.

    Examples
    --------
    >>> import numgrad as ng
    >>> w = ng.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = ng.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w.tolist()
    [0.8, 1.6]
    """

    def __init__(self, params: Iterable[Tensor], lr: float, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False):
        self.lr = _check_number("lr", lr)
        self.momentum = _check_number("momentum", momentum)
        self.dampening = _check_number("dampening", dampening, low=-math.inf)
        self.weight_decay = _check_number("weight_decay", weight_decay)
        if nesterov and (self.momentum == 0 or self.dampening != 0):
            raise ValueError("nesterov=True needs momentum > 0 and dampening = 0")
        self.nesterov = bool(nesterov)
        super().__init__(params)

    def _update(self, p: Tensor, grad: Tensor, state: dict) -> None:
        d = grad if self.weight_decay == 0 else grad + self.weight_decay * p
        if self.momentum != 0:
            # State changes in place (its own tensor), so ng.jit replays it.
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = d.detach()
            else:
                buf._rebind(buf * self.momentum + (1 - self.dampening) * d)
            d = d + self.momentum * buf if self.nesterov else buf
        p -= self.lr * d


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam`` (``weight_decay`` adds an L2 term to the gradient).

    At step t, with ``g = grad + weight_decay * p``::

        m = m + (1 - beta1) * (g - m)          # torch's lerp; = beta1 m + (1 - beta1) g
        v = beta2 * v + (1 - beta2) * g * g
        p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Examples
    --------
    >>> import numgrad as ng
    >>> w = ng.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ng.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> [round(x, 6) for x in w.tolist()]
    [0.9, -1.9]
    """

    _decoupled = False

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        self.lr = _check_number("lr", lr)
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        self.betas = (_check_number("betas[0]", betas[0], high=1.0),
                      _check_number("betas[1]", betas[1], high=1.0))
        self.eps = _check_number("eps", eps)
        self.weight_decay = _check_number("weight_decay", weight_decay)
        super().__init__(params)
        # State is tensors changed in place (the step count too, in float64), so
        # ng.jit replays it; made here, in memory, so that the first step reads what
        # every later one reads, and launches the same kernels.
        for p, state in zip(self.params, self.state):
            zeros = np.zeros(p.shape, p.dtype)
            state.update(step=p.new_tensor(0.0), exp_avg=p.new_tensor(zeros),
                         exp_avg_sq=p.new_tensor(zeros))

    def _update(self, p: Tensor, grad: Tensor, state: dict) -> None:
        beta1, beta2 = self.betas
        step = state["step"]
        step += 1
        if self.weight_decay != 0:
            if self._decoupled:
                p *= 1 - self.lr * self.weight_decay
            else:
                grad = grad + self.weight_decay * p
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m._rebind(m + (1 - beta1) * (grad - m))
        v._rebind(v * beta2 + (1 - beta2) * (grad * grad))
        step_size = (self.lr / (1 - beta1 ** step)).astype(p.dtype)
        correction = (1 - beta2 ** step).sqrt().astype(p.dtype)
        p -= step_size * (m / (v.sqrt() / correction + self.eps))


class AdamW(Adam):
    """Adam with decoupled weight decay, as ``torch.optim.AdamW``.

    Each step first shrinks the parameter, ``p *= 1 - lr * weight_decay``, then
    applies Adam's update with the plain gradient.

    Examples
    --------
    >>> import numgrad as ng
    >>> w = ng.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ng.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> [round(x, 6) for x in w.tolist()]
    [0.85, -1.8]
    """

    _decoupled = True

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
