"""Stateless neural-network functions: softmax, log_softmax, cross_entropy, mse_loss.

Each is a composite of Tensor operations, so it fuses with the code around it and
is differentiated (to any order) by the primitives' rules. Softmax and its
logarithm subtract the maximum first (log-sum-exp), so large inputs cannot
overflow.
"""

from __future__ import annotations

import weakref

import numpy as np

from numgrad.numpy.elementwise import where
from numgrad.plan import tracing
from numgrad.primitives import index_grid, key_array
from numgrad.tensor import Tensor

__all__ = ["cross_entropy", "log_softmax", "mse_loss", "softmax"]

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _check_tensor(value, name: str) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a Tensor, not {type(value).__name__}")


def _shifted(x: Tensor, axis: int) -> Tensor:
    # Softmax does not change when a constant is subtracted along `axis`, so the
    # maximum is subtracted without history: the gradient stays exact. An infinite or
    # NaN maximum shifts by 0 (as in logsumexp), so infinities give what NumPy gives for
    # exp(x) / sum(exp(x)): softmax([inf, 1]) is [nan, 0], not [nan, nan].
    shift = x.max(axis, keepdims=True).detach()
    return x - shift.where((shift - shift) == 0, 0)


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``exp(x) / sum(exp(x))`` along `axis`, computed without overflow.

    Examples
    --------
    >>> import numgrad as ng
    >>> ng.nn.functional.softmax(ng.tensor([1000.0, 1000.0])).tolist()
    [0.5, 0.5]
    """
    e = _shifted(x, axis).exp()
    return e / e.sum(axis, keepdims=True)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``log(softmax(x))`` along `axis`, as ``x - max - log(sum(exp(x - max)))``.

    Examples
    --------
    >>> import numgrad as ng
    >>> ng.nn.functional.log_softmax(ng.tensor([0.0, 1000.0])).tolist()
    [-1000.0, 0.0]
    """
    shifted = _shifted(x, axis)
    return shifted - shifted.exp().sum(axis, keepdims=True).log()


def cross_entropy(logits: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Cross-entropy between ``softmax(logits)`` and `target`, as PyTorch's.

    Parameters
    ----------
    logits : Tensor
        Unnormalised scores, ``(N, C)`` (or ``(C,)``, or ``(N, C, d1, ...)``): the
        classes are on axis 1 (axis 0 for one dimension).
    target : Tensor
        Integer class indices in ``[0, C)`` with the shape of `logits` less the class
        axis, or floating class probabilities with the shape of `logits`.
    reduction : {'mean', 'sum', 'none'}
        Mean or sum over the samples, or the loss of each sample.

    Examples
    --------
    >>> import numgrad as ng
    >>> logits = ng.tensor([[0.0, 0.0], [0.0, 0.0]])
    >>> round(ng.nn.functional.cross_entropy(logits, ng.tensor([0, 1])).item(), 6)
    0.693147
    """
    _check_reduction(reduction)
    _check_tensor(logits, "logits")
    _check_tensor(target, "target")
    if logits.ndim == 0:
        raise ValueError("cross_entropy needs logits with a class axis, got shape ()")
    axis = 1 if logits.ndim > 1 else 0
    if target.dtype.kind in "iu":
        n_classes = logits.shape[axis]
        expected = logits.shape[:axis] + logits.shape[axis + 1:]
        if target.shape != expected:
            raise ValueError(
                f"class-index targets for logits of shape {logits.shape} must have shape "
                f"{expected}, got {target.shape}")
        loss = logits.logsumexp(axis) - _pick(logits, target, axis, n_classes, expected)
    elif target.dtype.kind == "f":
        if target.shape != logits.shape:
            raise ValueError(
                f"probability targets must have the shape of the logits, {logits.shape}, "
                f"got {target.shape}")
        loss = -(target * log_softmax(logits, axis)).sum(axis)
    else:
        raise TypeError(
            f"target must hold integer class indices or floating probabilities, not "
            f"{target.dtype}")
    return _reduce(loss, reduction)


def _pick(logits: Tensor, target: Tensor, axis: int, n_classes: int, expected) -> Tensor:
    """``logits[target]`` along `axis`, the targets checked to lie in ``[0, n_classes)``."""
    if tracing.current() is not None:
        # ng.jit's trace reads no value: compare the targets with every class index
        # (a reduction of its own, replayed with new targets).
        shape = [1] * logits.ndim
        shape[axis] = n_classes
        classes = Tensor(np.arange(n_classes).reshape(shape), device=logits.device)
        hit = target.reshape(expected[:axis] + (1,) + expected[axis:]) == classes
        return where(hit, logits, 0).sum(axis)
    labels = key_array(target)  # (the gather keeps it: no copy of its own)
    if _largest(target, labels) >= n_classes:
        raise ValueError(
            f"class-index targets must lie in [0, {n_classes}), got values from "
            f"{labels.min()} to {labels.max()}")
    # A gather that kernels do in place: forward and backward are a few kernels.
    grid = index_grid(expected)  # (the same arrays at every step: only labels change)
    return logits[(*grid[:axis], labels, *grid[axis:]) if grid else (labels,)]


def _largest(target: Tensor, labels: np.ndarray) -> int:
    """The largest of `labels` (`target`'s value) read unsigned, so that a negative label
    is larger than any class index: one pass, and for a large batch none again while
    `target`'s value lives (a loop over one batch of labels; a tensor's value never
    changes). A small batch is read again: that costs less than keeping its result."""
    if not labels.size:
        return -1
    large = labels.size >= _KEPT_FROM
    largest = _LARGEST.get(target._buf) if large else None
    if largest is None:
        unsigned = labels.view(_UNSIGNED.get(labels.dtype, labels.dtype))
        largest = unsigned.item(unsigned.argmax())  # (a quarter of max()'s cost)
        if large:
            _LARGEST[target._buf] = largest
    return largest


#: per tensor value of `_KEPT_FROM` labels or more checked, while it lives: its
#: largest, read unsigned
_LARGEST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_KEPT_FROM = 4096
_UNSIGNED = {np.dtype(f"i{n}"): np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Squared error ``(input - target) ** 2``, averaged, summed or per element.

    Unlike PyTorch (which broadcasts with a warning), shapes must match exactly.

    Examples
    --------
    >>> import numgrad as ng
    >>> ng.nn.functional.mse_loss(ng.tensor([1.0, 3.0]), ng.tensor([0.0, 0.0])).item()
    5.0
    """
    _check_reduction(reduction)
    _check_tensor(input, "input")
    _check_tensor(target, "target")
    if input.shape != target.shape:
        raise ValueError(
            f"mse_loss: input has shape {input.shape} but target has shape "
            f"{target.shape}; they must match")
    diff = input - target
    return _reduce(diff * diff, reduction)
