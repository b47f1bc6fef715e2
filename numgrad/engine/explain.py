"""`explain`: the kernels realizing a tensor would run, and their source, without running."""

from __future__ import annotations

from numgrad.engine.realize import _region_view, plan
from numgrad.engine.schedule import Kernel, schedule


def explain(*tensors) -> str:
    """Describe the schedule that would realize `tensors`: one entry per kernel.

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([1.0, 2.0])
    >>> print(ng.explain((x * 2).exp().sum()).splitlines()[0])
    kernel 0: sum of 2 fused operations -> () float64
    """
    items = schedule([t._buf for t in tensors])
    if not items:
        return "nothing to run: every value is already computed"
    parts = []
    for n, item in enumerate(items):
        out = item.out
        if isinstance(item, Kernel):
            backend = out.device.backend
            strides = [backend.strides(_region_view(item, i, backend)) if b.is_realized
                       else None for i, b in enumerate(item.inputs)]
            program, shape, _ = plan(item, strides)
            ops = sum(1 for ins in item.code + item.epilogue if ins[0] not in ("in", "arg", "acc"))
            what = f"{item.reduce.op.name} of {ops} fused operations" if item.reduce \
                else f"{ops} fused operations"
            source = backend.render(program, backend.variant(program, shape))
            parts.append(f"kernel {n}: {what} -> {out.shape} {out.dtype}\n{source}")
        else:
            parts.append(f"kernel {n}: {out.op.name} on the {out.device} backend -> "
                         f"{out.shape} {out.dtype}\n")
    return "\n".join(parts)
