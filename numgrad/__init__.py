"""numgrad: NumPy-style autograd whose kernels are fused and compiled with Numba.

Examples
--------
>>> import numgrad as ng
>>> x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> y = (x.exp() * x).sum()
>>> y.backward()
>>> x.grad.shape
(3,)
"""

from numpy import e, euler_gamma, inf, nan, newaxis, pi  # NumPy's constants, as ng.pi

from numgrad import (
    autograd,
    cuda,
    device,
    engine,
    functional,
    methods,
    nn,
    optim,
    scipy,
    transforms,
    viz,
)
from numgrad.autograd import (
    Function,
    FunctionCtx,
    backward,
    enable_grad,
    grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from numgrad.capture import jit
from numgrad.device import Device, default_device, get_default_device, set_default_device
from numgrad.dtypes import (
    bool_,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from numgrad.engine.explain import explain
from numgrad.gradcheck import GradcheckError, gradcheck, gradgradcheck
from numgrad.interop import from_dlpack
from numgrad.linalg.products import *  # noqa: F403 - dot, einsum, matmul, tensordot, ...
from numgrad.numpy.assembly import *  # noqa: F403 - hstack, pad, tile, meshgrid, ...
from numgrad.numpy.creation import (
    arange,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    geomspace,
    identity,
    linspace,
    logspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from numgrad.numpy.dispatch import GradientDroppedWarning
from numgrad.numpy.elementwise import *  # noqa: F403 - ng.exp, ng.add, ng.where, ng.clip, ...
from numgrad.numpy.indexing import *  # noqa: F403 - take, compress, choose, put
from numgrad.numpy.joining import concatenate, split, stack
from numgrad.numpy.ordering import *  # noqa: F403 - cumsum, diff, sort, argsort, ...
from numgrad.numpy.reductions import *  # noqa: F403 - sum, mean, var, argmax, nansum, ...
from numgrad.numpy.sampled import *  # noqa: F403 - gradient, trapezoid, convolve
from numgrad.numpy.searching import *  # noqa: F403 - nonzero, unique, searchsorted, interp, ...
from numgrad.numpy.shaping import *  # noqa: F403 - reshape, transpose, flip, roll, tril, ...
from numgrad.numpy.standard import *  # noqa: F403 - the Array API's names: acos, concat, finfo, ...
from numgrad.numpy.statistics import *  # noqa: F403 - average, median, quantile, cov, ...
from numgrad.tensor import Tensor, realize
from numgrad.transforms import elementwise_grad, hessian, jacobian, value_and_grad

methods.bind()
bool = bool_  # noqa: A001 - NumPy and PyTorch users write ng.bool
__version__ = "0.1.0"

