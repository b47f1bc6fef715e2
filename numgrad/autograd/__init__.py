"""Autograd: grad mode, the autograd graph, the backward pass and custom Functions."""

from __future__ import annotations

import numgrad
from numgrad import engine
from numgrad.autograd import collector
from numgrad.autograd.backward import run_backward
from numgrad.autograd.function import Function, FunctionCtx
from numgrad.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from numgrad.plan import recorder, step_plans

__all__ = ["Function", "FunctionCtx", "backward", "enable_grad", "grad", "is_grad_enabled",
           "no_grad", "set_grad_enabled"]


@collector.paused()
def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs=None) -> None:
    """Add the gradients of `tensors` into the ``.grad`` of the leaves they depend on.

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        Outputs to differentiate.
    grad_tensors : Tensor or sequence, optional
        Gradient of each output, of its exact shape; may be omitted only for
        one-element outputs (a seed of ones).
    retain_graph : bool, optional
        Keep the saved values so the graph can be walked again; defaults to
        `create_graph`.
    create_graph : bool
        Record the backward pass, so gradients can be differentiated again.
    inputs : Tensor or sequence, optional
        Accumulate only into these tensors (a non-leaf here gets ``.grad`` too).

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad.tolist()
    [2.0, 4.0]
    """
    plain = grad_tensors is None and inputs is None and not retain_graph and not create_graph
    segment = step_plans.take(tensors, plain)
    if segment is not None and step_plans.replay(segment) is not None:
        return  # (the step recorded as before: its plan ran, `numgrad.plan.step_plans`)
    touched, structural = [], []
    _watch(segment)
    try:
        run_backward(tensors, grad_tensors, inputs, accumulate=True,
                     retain_graph=retain_graph, create_graph=create_graph, touched=touched,
                     structural=structural)
        _computed([t._grad._buf for t in touched if t._grad is not None], tensors, segment)
    finally:
        _unwatch()
    step_plans.remember(segment, [(t, t._grad) for t in touched], structural)


@collector.paused()
def grad(outputs, inputs=None, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool = False,
         materialize_grads: bool = False, is_grads_batched: bool = False, *,
         argnum=0):
    """Return the gradients of `outputs` with respect to `inputs`; no ``.grad`` changes.

    With a function as `outputs` (HIPS autograd's and JAX's form), return the function
    computing the gradient of its scalar result with respect to its argument `argnum`
    (an int or a tuple; ``ng.grad(f, 1)`` gives it by position too): see
    `numgrad.transforms.gradient_function`.

    An input the outputs do not depend on is an error unless `allow_unused`
    (None in its place) or `materialize_grads` (zeros in its place). With
    `is_grads_batched`, each of `grad_outputs` has a leading batch dimension and
    the gradients do too: every row is backpropagated in the same pass (this is how
    `ng.functional.jacobian(..., vectorize=True)` works).

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor(3.0, requires_grad=True)
    >>> (g,) = ng.grad(x * x, x)
    >>> g.item(), x.grad is None
    (6.0, True)
    """
    if callable(outputs) and not hasattr(outputs, "_buf"):
        return numgrad.transforms.gradient_function(
            outputs, argnum if inputs is None else inputs)
    if inputs is None:
        raise TypeError("grad() needs the inputs to differentiate with respect to: "
                        "ng.grad(outputs, inputs), or ng.grad(f) for a function f")
    # (`allow_unused` and `materialize_grads` keep a step plan: one is kept only where
    # every input's gradient is the plan's, so its replays never leave one out)
    plain = grad_outputs is None and not (retain_graph or create_graph or is_grads_batched)
    segment = step_plans.take(outputs, plain, inputs)
    grads = step_plans.replay(segment) if segment is not None else None
    if grads is not None:
        return tuple(grads)  # (the step recorded as before: its plan ran)
    structural: list = []
    _watch(segment)
    try:
        grads = run_backward(outputs, grad_outputs, inputs, accumulate=False,
                             retain_graph=retain_graph, create_graph=create_graph,
                             allow_unused=allow_unused, materialize_grads=materialize_grads,
                             is_grads_batched=is_grads_batched, structural=structural)
        _computed([g._buf for g in grads if g is not None], outputs, segment)
    finally:
        _unwatch()
    if segment is not None:
        step_plans.remember(segment, list(zip(segment.targets, grads)), structural)
    return grads


def _computed(grads: list, outputs, segment: step_plans.Segment | None) -> None:
    """Realize a pass's gradients `grads` (buffers) with its `outputs` and what they
    view, the values its caller reads (often the same pass over the data). The step
    plan of `segment` stores those and the tensors changed in place alone: the tape's
    other values it computes are its own, as an ``ng.jit`` plan's are, so that its
    replay makes no views of them and hands out no arrays (where one of them is read
    after a replay, the plan stores them all from then on: `numgrad.plan.step_plans`)."""
    outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    read = list(dict.fromkeys(b for t in outputs for b in (t._buf, _viewed(t._buf))))
    engine.realize(*grads, *read)
    if segment is not None:
        segment.stored = {*read, *(t._buf for t in segment.rebound)}


def _viewed(buf):
    """The buffer that `buf` views (through reshapes, expands and permutes), or `buf`."""
    while buf.op.name in ("reshape", "expand", "permute") and buf.srcs:
        buf = buf.srcs[0]
    return buf


def _watch(segment: step_plans.Segment | None) -> None:
    """Before a backward pass: the tape records none of its buffers, and notes the
    constants it folds and the realizations it runs if `segment` may keep its plan
    (`step_plans.remember`)."""
    thread = recorder.current()
    thread.on, thread.in_pass, thread.read = False, True, False
    if segment is not None:
        thread.folds, thread.ran = segment.folds, segment.ran
    thread.listen()


def _unwatch() -> None:
    """After a backward pass: a new tape."""
    thread = recorder.current()
    thread.folds = thread.ran = None
    thread.in_pass = False
    thread.clear()
