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
from numgrad.assembly import *  # noqa: F403
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
from numgrad.creation import (
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
from numgrad.functions import *  # noqa: F403 - ng.exp, ng.add, ng.sum, ...
from numgrad.gradcheck import GradcheckError, gradcheck, gradgradcheck
from numgrad.interop import from_dlpack
from numgrad.joining import concatenate, split, stack
from numgrad.linalg.products import *  # noqa: F403 - dot, einsum, matmul, tensordot, ...
from numgrad.numpy_api import GradientDroppedWarning
from numgrad.sampled import *  # noqa: F403 - gradient, trapezoid, convolve
from numgrad.searching import *  # noqa: F403 - nonzero, unique, searchsorted, interp, ...
from numgrad.standard import *  # noqa: F403 - the Array API's names: acos, concat, finfo, ...
from numgrad.statistics import *  # noqa: F403 - average, median, quantile, cov, ...
from numgrad.tensor import Tensor, realize
from numgrad.tensor_math import power, where
from numgrad.transforms import elementwise_grad, hessian, jacobian, value_and_grad

methods.bind()
bool = bool_  # noqa: A001 - NumPy and PyTorch users write ng.bool
__version__ = "0.1.0"

