"""Function transforms: jacobian, hessian, vjp, jvp and hvp.

Signatures and return structure follow ``torch.autograd.functional``: a single
Tensor input gives a single result and a tuple gives a tuple; the Jacobian of a
tuple of outputs with respect to a tuple of inputs is a tuple (one per output) of
tuples (one per input), and each block has shape ``out.shape + in.shape``.
Everything is computed with numgrad operations and ``ng.grad``, so results stay on
the inputs' device, fuse like any other code and, with ``create_graph=True``, can
be differentiated again.

`jvp` and `hvp` use the double-backward trick: the vector-Jacobian product is
linear in its seed, so differentiating it with respect to a dummy seed gives the
Jacobian-vector product with reverse mode only.
"""

from __future__ import annotations

from collections.abc import Callable

from numgrad.autograd import enable_grad, grad
from numgrad.numpy.creation import arange, zeros, zeros_like
from numgrad.numpy.joining import stack
from numgrad.tensor import Tensor

Tensors = Tensor | tuple[Tensor, ...]
#: A Jacobian: one block, a tuple of blocks, or a tuple (per output) of tuples (per input).
Jacobian = Tensor | tuple[Tensor, ...] | tuple[tuple[Tensor, ...], ...]

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vjp"]


# ---- helpers shared by the transforms ---------------------------------------------

def _as_tuple(value, what: str, fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    """`value` as a tuple of Tensors, and whether it was a tuple (torch's rule)."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"the {what} given to {fn} must be a Tensor or a tuple of Tensors, but "
                f"entry {i} has type {type(t).__name__}")
    return is_tuple, items


def _prepare(tensors: tuple[Tensor, ...], create_graph: bool,
             need_graph: bool) -> tuple[Tensor, ...]:
    """Fresh tensors to differentiate with respect to.

    With `create_graph`, a tensor that requires grad is passed through an identity
    operation, so results keep their history back to it; otherwise it is detached.
    """
    return tuple(t.reshape(t.shape) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in tensors)


def _grad(outputs, inputs, grad_outputs=None, create_graph: bool = False,
          retain_graph: bool | None = None, batched: bool = False) -> tuple:
    """``ng.grad`` of the outputs that require grad; None for every input not reached."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
             if o is not None and o.requires_grad]
    wanted = [i for i, t in enumerate(inputs) if t.requires_grad]
    result: list[Tensor | None] = [None] * len(inputs)
    if pairs and wanted:
        outs, seeds = zip(*pairs)
        grads = grad(outs, [inputs[i] for i in wanted], seeds, retain_graph=retain_graph,
                     create_graph=create_graph, allow_unused=True,
                     is_grads_batched=batched)
        for i, g in zip(wanted, grads):
            result[i] = g
    return tuple(result)


_INDEPENDENT = {
    "outputs": "output {i} of the function does not require grad: the outputs must be "
               "computed from the inputs with differentiable operations",
    "grad_inputs": "the gradient with respect to input {i} does not depend on the "
                   "function's inputs",
    "jacobian": "the gradient with respect to input {i} does not depend on the inputs "
                "(the function is at most linear in it)",
    "hessian": "the Hessian with respect to input {i} does not depend on the inputs",
}


def _check_requires_grad(tensors, kind: str, strict: bool) -> None:
    """In strict mode, refuse results that are missing or carry no history."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"the output of the function is independent of input {i}; this is not "
                f"allowed with strict=True")
        if not t.requires_grad:
            raise RuntimeError(
                _INDEPENDENT[kind].format(i=i) + "; this is not allowed with strict=True")


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, independent: str) -> tuple:
    """Zeros (of each reference's shape) in place of None, unless `strict` forbids it.

    `independent` says, for entry ``{i}``, what a None means.
    """
    result = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(
                    independent.format(i=i) + "; this is not allowed with strict=True")
            g = ref.zeros_like()
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(
                f"result {i} does not depend on the inputs; this is not allowed with "
                f"strict=True and create_graph=True")
        result.append(g)
    return tuple(result)


def _vector(v, refs: tuple[Tensor, ...], refs_are_tuple: bool, create_graph: bool,
            fn: str, what: str) -> tuple[Tensor, ...] | None:
    """Validate `v` against `refs` (one tensor of the same shape each)."""
    if v is None:
        if len(refs) != 1 or refs[0].size != 1:
            raise ValueError(
                f"{fn}: v can be omitted only when the function's {what} is a single "
                f"Tensor with one element")
        return None
    _, v = _as_tuple(v, "v", fn)
    if len(v) != len(refs):
        raise ValueError(
            f"{fn}: v has {len(v)} tensors, but the function's {what} has {len(refs)}"
            if refs_are_tuple else f"{fn}: v must be a single Tensor")
    for i, (t, ref) in enumerate(zip(v, refs)):
        if t.shape != ref.shape:
            where = f"entry {i} of v" if refs_are_tuple else "v"
            raise ValueError(
                f"{fn}: {where} has shape {t.shape}, but the function's {what} has "
                f"shape {ref.shape}")
    return _prepare(v, create_graph, need_graph=False)


def _detach(results, create_graph: bool):
    """Drop the history of (nested tuples of) results, unless it was asked for."""
    if create_graph:
        return results
    if isinstance(results, tuple):
        return tuple(_detach(r, create_graph) for r in results)
    return results.detach()


def _unpack(results: tuple, outer_is_tuple: bool, inner_is_tuple: bool | None = None):
    """Undo the tuple wrapping of single tensors (the inner level only for jacobians)."""
    if inner_is_tuple is False:
        results = tuple(r[0] for r in results)
    return results if outer_is_tuple else results[0]


def _one_hots(total: int, start: int, out: Tensor) -> Tensor:
    """Rows of the identity of size `total`, columns ``start:start + out.size``.

    Shaped ``(total,) + out.shape``: row k seeds output element ``k - start``.
    """
    rows = arange(total, device=out.device).reshape(total, 1)
    columns = arange(start, start + out.size, device=out.device).reshape(1, out.size)
    return (rows == columns).astype(out.dtype).reshape((total,) + out.shape)


def _scalar_output(out, fn: str, strict: bool) -> Tensor:
    """Check that the function given to `fn` returned one Tensor with one element."""
    if not isinstance(out, Tensor):
        raise TypeError(
            f"the function given to {fn} must return a single Tensor, not "
            f"{type(out).__name__}")
    _check_requires_grad((out,), "outputs", strict)
    if out.size != 1:
        raise ValueError(
            f"the function given to {fn} must return one element; it returned shape "
            f"{out.shape}")
    return out


def _evaluate(fn: str, func, inputs, create_graph: bool, strict: bool, v=None,
              v_like: str | None = None, scalar: bool = False) -> tuple:
    """Check the inputs, make fresh ones (`_prepare`), call `func`, check its outputs.

    The start every transform shares; run it under ``enable_grad``. With `scalar` the
    output must be one Tensor with one element. `v` is checked against the inputs
    (before the call) or the outputs, as `v_like` says. Returns ``(inputs_are_tuple,
    inputs, outputs_are_tuple, outputs, v)``.
    """
    inputs_are_tuple, inputs = _as_tuple(inputs, "inputs", fn)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    if v_like == "input":
        v = _vector(v, inputs, inputs_are_tuple, create_graph, fn, "input")
    if scalar:
        outputs_are_tuple, outputs = False, (_scalar_output(func(*inputs), fn, strict),)
    else:
        outputs_are_tuple, outputs = _as_tuple(func(*inputs), "outputs of the function", fn)
        _check_requires_grad(outputs, "outputs", strict)
    if v_like == "output":
        v = _vector(v, outputs, outputs_are_tuple, create_graph, fn, "output")
    return inputs_are_tuple, inputs, outputs_are_tuple, outputs, v


# ---- jacobian and hessian ---------------------------------------------------------

def _jacobian_rows(outputs, inputs, create_graph: bool, strict: bool) -> tuple:
    """One backward pass per output element."""
    blocks = []
    for i, out in enumerate(outputs):
        seeds = _one_hots(out.size, 0, out) if out.requires_grad else None
        rows: list[list[Tensor]] = [[] for _ in inputs]
        for j in range(out.size):
            grads = _grad((out,), inputs, (seeds[j] if seeds is not None else None,),
                          create_graph=create_graph, retain_graph=True)
            for k, (g, inp) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(
                            f"output {i} of the function is independent of input {k}; "
                            f"this is not allowed with strict=True")
                    g = inp.zeros_like()
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(
                        f"the Jacobian of output {i} does not depend on input {k}; this is "
                        f"not allowed with strict=True and create_graph=True")
                rows[k].append(g)
        blocks.append(tuple(
            stack(r).reshape(out.shape + inp.shape) if r
            else zeros(out.shape + inp.shape, dtype=inp.dtype, device=inp.device)
            for r, inp in zip(rows, inputs)))
    return tuple(blocks)


def _jacobian_batched(outputs, inputs, create_graph: bool) -> tuple:
    """All rows in one backward pass: the seeds are the rows of an identity matrix."""
    sizes = [out.size for out in outputs]
    total = sum(sizes)
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    seeds = tuple(_one_hots(total, start, out) if out.requires_grad else None
                  for start, out in zip(starts, outputs))
    grads = _grad(outputs, inputs, seeds, create_graph=create_graph, batched=True)
    blocks = []
    for out, start, size in zip(outputs, starts, sizes):
        row = []
        for g, inp in zip(grads, inputs):
            shape = out.shape + inp.shape
            row.append(zeros(shape, dtype=inp.dtype, device=inp.device) if g is None
                       else g[start:start + size].reshape(shape))
        blocks.append(tuple(row))
    return tuple(blocks)


def jacobian(func: Callable[..., Tensors], inputs: Tensors, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False) -> Jacobian:
    """The Jacobian of `func` at `inputs`.

    Parameters
    ----------
    func : callable
        Takes one Tensor per input, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        Where to evaluate the Jacobian.
    create_graph : bool
        Record the computation, so the Jacobian can be differentiated again (it
        then keeps its history back to inputs that require grad).
    strict : bool
        Raise instead of returning zeros when an output is independent of an input.
    vectorize : bool
        Compute all rows in one backward pass with batched seeds
        (``ng.grad(..., is_grads_batched=True)``) instead of one pass per row.

    Returns
    -------
    Tensor, tuple of Tensor, or tuple of tuples of Tensor
        Block ``[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``; a level is
        unwrapped where the outputs (outer) or the inputs (inner) are a single Tensor.

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([1.0, 2.0])
    >>> ng.functional.jacobian(lambda t: t ** 2, x).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    >>> ng.functional.jacobian(lambda t: t ** 2, x, vectorize=True).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if strict and vectorize:
        raise ValueError(
            "jacobian: strict=True and vectorize=True are not supported together; set "
            "one of them to False")
    with enable_grad():
        inputs_are_tuple, inputs, outputs_are_tuple, outputs, _ = _evaluate(
            "jacobian", func, inputs, create_graph, strict)
        if vectorize:
            blocks = _jacobian_batched(outputs, inputs, create_graph)
        else:
            blocks = _jacobian_rows(outputs, inputs, create_graph, strict)
    return _unpack(_detach(blocks, create_graph), outputs_are_tuple, inputs_are_tuple)


def hessian(func: Callable[..., Tensor], inputs: Tensors, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False) -> Jacobian:
    """The Hessian of the scalar function `func` at `inputs`.

    It is the `jacobian` of the gradient, so `vectorize` computes all its rows in
    one backward pass through the gradient's graph.

    Parameters
    ----------
    func : callable
        Takes one Tensor per input, returns a Tensor with one element.
    inputs : Tensor or tuple of Tensor
        Where to evaluate the Hessian.
    create_graph, strict, vectorize : bool
        As for `jacobian`.

    Returns
    -------
    Tensor or tuple of tuples of Tensor
        Block ``[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``; a single
        Tensor input gives a single Tensor.

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([1.0, 2.0])
    >>> ng.functional.hessian(lambda t: (t ** 3).sum(), x).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    inputs_are_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def scalar(*xs: Tensor) -> Tensor:
        return _scalar_output(func(*xs), "hessian", strict).reshape(())

    def gradient(*xs: Tensor) -> tuple[Tensor, ...]:
        jac = jacobian(scalar, xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    blocks = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize)
    return _unpack(blocks, inputs_are_tuple, inputs_are_tuple)


# ---- products with a vector -------------------------------------------------------

def vjp(func: Callable[..., Tensors], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Tensors, Tensors]:
    """The vector-Jacobian product ``v^T J`` of `func` at `inputs`.

    Parameters
    ----------
    func : callable
        Takes one Tensor per input, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        Where to evaluate it.
    v : Tensor or tuple of Tensor, optional
        One tensor per output, of its shape; may be omitted only for a single
        one-element output.
    create_graph, strict : bool
        As for `jacobian`.

    Returns
    -------
    (outputs, vjp)
        The function's outputs, and one product per input (shaped like it).

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([1.0, 2.0])
    >>> out, vj = ng.functional.vjp(lambda t: t ** 2, x, ng.tensor([1.0, 10.0]))
    >>> vj.tolist()
    [2.0, 40.0]
    """
    with enable_grad():
        inputs_are_tuple, inputs, outputs_are_tuple, outputs, v = _evaluate(
            "vjp", func, inputs, create_graph, strict, v, v_like="output")
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph,
                                "the outputs of the function are independent of input {i}")
    return (_unpack(_detach(outputs, create_graph), outputs_are_tuple),
            _unpack(_detach(result, create_graph), inputs_are_tuple))


def jvp(func: Callable[..., Tensors], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Tensors, Tensors]:
    """The Jacobian-vector product ``J v`` of `func` at `inputs` (double-backward trick).

    Parameters
    ----------
    func : callable
        Takes one Tensor per input, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        Where to evaluate it.
    v : Tensor or tuple of Tensor, optional
        One tensor per input, of its shape; may be omitted only for a single
        one-element input.
    create_graph, strict : bool
        As for `jacobian`.

    Returns
    -------
    (outputs, jvp)
        The function's outputs, and one product per output (shaped like it).

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([1.0, 2.0])
    >>> out, jv = ng.functional.jvp(lambda t: t ** 2, x, ng.tensor([1.0, 10.0]))
    >>> jv.tolist()
    [2.0, 40.0]
    """
    with enable_grad():
        inputs_are_tuple, inputs, outputs_are_tuple, outputs, v = _evaluate(
            "jvp", func, inputs, create_graph, strict, v, v_like="input")
        # The VJP is linear in its seed, so any finite seed works: zeros.
        seeds = tuple(zeros_like(out, requires_grad=out.requires_grad) for out in outputs)
        grad_inputs = _grad(outputs, inputs, seeds, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        grads = _grad(grad_inputs, seeds, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, outputs, strict, create_graph,
                                "output {i} of the function is independent of the inputs")
    return (_unpack(_detach(outputs, create_graph), outputs_are_tuple),
            _unpack(_detach(result, create_graph), outputs_are_tuple))


def hvp(func: Callable[..., Tensor], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Tensor, Tensors]:
    """The Hessian-vector product ``H v`` of the scalar function `func` at `inputs`.

    Computed as ``torch.autograd.functional.hvp`` does, with the double-backward
    trick, so it is ``H v`` even where the Hessian is not symmetric.

    Parameters
    ----------
    func : callable
        Takes one Tensor per input, returns a Tensor with one element.
    inputs : Tensor or tuple of Tensor
        Where to evaluate it.
    v : Tensor or tuple of Tensor, optional
        One tensor per input, of its shape; may be omitted only for a single
        one-element input.
    create_graph, strict : bool
        As for `jacobian`.

    Returns
    -------
    (output, hvp)
        The function's output, and one product per input (shaped like it).

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([1.0, 2.0])
    >>> out, hv = ng.functional.hvp(lambda t: (t ** 3).sum(), x, ng.tensor([1.0, 1.0]))
    >>> out.item(), hv.tolist()
    (9.0, [6.0, 12.0])
    """
    with enable_grad():
        inputs_are_tuple, inputs, _, (out,), v = _evaluate(
            "hvp", func, inputs, create_graph, strict, v, v_like="input", scalar=True)
        jac = _grad((out,), inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        seeds = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, seeds, create_graph=True)
        _check_requires_grad(double_back, "hessian", strict)
        grads = _grad(double_back, seeds, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph,
                                "the Hessian is zero along input {i}")
    return _detach(out, create_graph), _unpack(_detach(result, create_graph), inputs_are_tuple)
