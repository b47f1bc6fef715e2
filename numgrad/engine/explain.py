"""`explain`: the kernels realizing a tensor would run, and their source, without running."""

from __future__ import annotations

from numgrad.engine.launch import region_view
from numgrad.engine.realize import LOCK
from numgrad.engine.schedule import schedule
from numgrad.engine.steps import Launch
from numgrad.kernels.layout import arrange, contiguous_strides


def explain(*tensors) -> str:
    """Describe the schedule that would realize `tensors`: one entry per kernel, with
    the target that runs it and, for generated kernels, their source.

    Nothing runs and nothing is allocated: inputs not computed yet are taken as
    contiguous.

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([1.0, 2.0])
    >>> print(ng.explain((x * 2).exp().sum()).splitlines()[0])
    kernel 0 on cpu: sum of 2 fused operations -> () float64
    """
    with LOCK:  # another thread realizing part of the graph changes its sources
        pending = [t._buf for t in tensors if not t._buf.is_realized]
        if not pending:
            return "nothing to run: every value is already computed"
        plan, slots = schedule(pending)
    parts = []
    for n, step in enumerate(plan.steps):
        if not isinstance(step, Launch):
            out = plan.slots[step.output]
            parts.append(f"kernel {n} on {out.device.backend.key}: {step.op} -> {out.shape} "
                         f"{out.dtype}\n")
            continue
        outputs = [plan.slots[s] for s in step.outputs]
        backend = outputs[0].device.backend
        strides = []
        for i, read in enumerate(step.inputs):
            buf, region = slots[read.slot], step.region(i)
            strides.append(
                backend.strides(region_view(backend, buf.realized, read, region))
                if buf.is_realized else contiguous_strides(region, buf.dtype.itemsize))
        program, shape, _ = arrange(step.program, step.loop, step.reduced,
                                    [o.dtype.itemsize for o in outputs], strides)
        ops = sum(1 for ins in program.code + program.epilogue
                  if ins[0] not in ("in", "arg", "acc"))
        what = f"{program.reduce} of {ops} fused operations" if program.reduce \
            else f"{ops} fused operations"
        source = backend.render(program, backend.variant(program, shape))
        parts.append(f"kernel {n} on {backend.key}: {what} -> {outputs[0].shape} "
                     f"{outputs[0].dtype}\n{source}")
    return "\n".join(parts)
