"""What recording one operation builds: its lazy value (a `LazyBuffer`) and, when it
needs one, its history node, and nothing more. Nothing here computes a value except
where a test reads one (float64, exact: reshapes and sums of three numbers)."""

import numpy as np

import numgrad as ng
from numgrad import primitives


def test_an_elementwise_op_records_one_node_whose_history_shares_its_sources():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = ng.tensor([3.0, 4.0])
    z = x * y
    assert z._buf.op.name == "multiply"
    assert z._buf.srcs == (x._buf, y._buf)
    assert z._buf.depth == 1  # its sources are computed
    bufs, out = z._node.saved, z._node.out
    assert bufs is z._buf.srcs and out is z._buf
    assert z._node.next == (x._node, None)


def test_operands_of_other_dtypes_are_cast_and_scalars_become_constants():
    i = ng.tensor([1, 2])
    z = i * 0.5
    cast, const = z._buf.srcs
    assert (cast.op.name, cast.dtype, cast.srcs) == ("cast", np.float64, (i._buf,))
    assert (const.op.name, const.arg, const.shape) == ("const", 0.5, (2,))
    assert z._node is None and z._buf.depth == 2


def test_a_reshape_without_history_to_its_own_shape_is_a_new_tensor_of_that_value():
    x = ng.tensor(np.arange(6.0).reshape(2, 3))
    y = x.reshape(2, 3)
    assert y is not x and y._buf is x._buf
    y += 1  # an in-place change of one is not a change of the other
    assert x.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert y.numpy().tolist() == [[1, 2, 3], [4, 5, 6]]


def test_a_reshape_without_history_of_a_pending_reshape_reshapes_its_source():
    x = ng.tensor(np.arange(6.0))
    y = x.reshape(2, 3).reshape(3, 2)
    assert y._buf.op.name == "reshape" and y._buf.srcs == (x._buf,)
    assert x.reshape(2, 3).reshape(6)._buf is x._buf


def test_reshapes_with_history_are_recorded_each():
    x = ng.tensor(np.arange(6.0), requires_grad=True)
    y = x.reshape(2, 3)
    z = y.reshape(2, 3)
    assert z._buf.srcs == (y._buf,) and z.grad_fn.name == "ReshapeBackward"
    assert z.grad_fn.next == (y.grad_fn,)
    z.sum().backward()
    assert x.grad.numpy().tolist() == [1.0] * 6


def test_a_bias_gradient_is_one_sum(monkeypatch):
    """The gradient of a broadcast (3,) bias: its one expand's VJP sums the rows, to
    (3,) (the one reshape is the seed's, for the sum's VJP)."""
    x = ng.tensor(np.ones((4, 3)))
    b = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x + b).sum()
    recorded = []
    apply = primitives._apply

    def spy(name, *args, **kwargs):
        recorded.append(name)
        return apply(name, *args, **kwargs)

    monkeypatch.setattr(primitives, "_apply", spy)
    (g,) = ng.grad(y, b)
    assert recorded == ["reshape", "expand", "sum"]
    assert g._buf.op.name == "sum"
    assert g.numpy().tolist() == [4.0, 4.0, 4.0]
