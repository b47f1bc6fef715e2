"""Tensors over other libraries' memory: `from_dlpack` (SPEC §8)."""

from __future__ import annotations

import numpy as np

from numgrad import dtypes
from numgrad.device import as_device, is_cuda_array
from numgrad.lazy import LazyBuffer
from numgrad.tensor import Tensor

#: DLPack's device types that numgrad has a device for
_DEVICES = {1: "cpu", 2: "cuda"}


def from_dlpack(obj, /, *, device=None, copy: bool | None = None) -> Tensor:
    """A tensor over the memory of `obj`, without a copy: anything with ``__dlpack__``
    (NumPy, PyTorch, JAX, CuPy), and on CUDA also ``__cuda_array_interface__`` (Numba's
    device arrays).

    The standard's keywords: ``copy=True`` copies the memory (on its device), `device`
    names the tensor's device, a copy there when it is another than `obj`'s (with
    ``copy=False``, a ValueError: that would need a copy).

    numgrad never writes into it. The memory stays shared: if the other side changes
    it, the tensor's value changes too (and so does every pending result computed from
    it), so hand over memory nobody will write, or copy it with ``ng.tensor(obj)``.

    Examples
    --------
    >>> import numpy as np, numgrad as ng
    >>> a = np.arange(3.0)
    >>> t = ng.from_dlpack(a)
    >>> (t * 2).tolist(), np.shares_memory(np.from_dlpack(t), a)
    ([0.0, 2.0, 4.0], True)
    """
    if is_cuda_array(obj):
        kind = 2
    elif hasattr(obj, "__dlpack__"):
        kind = obj.__dlpack_device__()[0]
    else:
        raise TypeError(f"from_dlpack needs an object with __dlpack__ or "
                        f"__cuda_array_interface__, got {type(obj).__name__}")
    if kind not in _DEVICES:
        raise BufferError(f"from_dlpack: DLPack device type {kind} has no numgrad device; "
                          f"expected 1 (CPU) or 2 (CUDA)")
    source = as_device(_DEVICES[kind])
    target = source if device is None else as_device(device)
    if target != source and copy is False:
        raise ValueError(f"from_dlpack: copy=False, but memory on '{source}' reaches "
                         f"'{target}' only by a copy")
    copy = bool(copy) and target == source  # (another device: .to() below copies)
    if kind == 1:
        array = np.from_dlpack(obj)
        array = source.backend.from_numpy(array) if copy else array
    else:
        array = source.backend.clone(obj) if copy else source.backend.adopt(obj)
    dtype = np.dtype(array.dtype)
    if dtype not in dtypes.NAMES:
        raise TypeError(f"from_dlpack: numgrad has no dtype {dtype}; expected one of "
                        f"{', '.join(str(d) for d in dtypes.NAMES)}")
    out = Tensor._wrap(LazyBuffer.load(array, source))
    return out if target == source else out.to(target)
