"""ng.nn.functional (SPEC §2): softmax, log_softmax, cross_entropy, mse_loss.

Values are compared with NumPy references written the stable way (subtract the
maximum), at rtol 1e-12 in float64 (atol 1e-15 for probabilities that are
sums of a few O(1) terms); gradients with ``ng.gradcheck`` (central differences,
its default atol 1e-5 / rtol 1e-3) and, for cross_entropy, with the analytic
``(softmax - onehot) / N`` at rtol 1e-12.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import numgrad as ng
from numgrad.nn import functional as F

RTOL = 1e-12
ATOL = 1e-15
rng = np.random.default_rng(3)
LOGITS = rng.standard_normal((4, 3))
LABELS = np.array([0, 2, 1, 2])
PROBS = rng.dirichlet(np.ones(3), size=4)


def np_log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---- softmax and log_softmax ----------------------------------------------------

@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_and_log_softmax_match_numpy(axis):
    x = ng.tensor(LOGITS)
    assert_allclose(F.softmax(x, axis).numpy(), np_softmax(LOGITS, axis), rtol=RTOL, atol=ATOL)
    assert_allclose(F.log_softmax(x, axis).numpy(), np_log_softmax(LOGITS, axis), rtol=RTOL,
                    atol=ATOL)


def test_softmax_is_stable_for_large_inputs():
    big = np.array([[1000.0, 1000.0, 999.0], [-1000.0, 0.0, 1000.0]])
    s = F.softmax(ng.tensor(big)).numpy()
    assert np.isfinite(s).all()
    assert_allclose(s, np_softmax(big), rtol=RTOL, atol=ATOL)
    ls = F.log_softmax(ng.tensor(big)).numpy()
    assert_allclose(ls, np_log_softmax(big), rtol=RTOL, atol=ATOL)
    assert ls[1].tolist() == [-2000.0, -1000.0, 0.0]  # exact: no overflow, no underflow


def test_softmax_keeps_float32():
    x = ng.tensor(LOGITS.astype(np.float32))
    out = F.softmax(x)
    assert out.dtype == np.float32
    assert_allclose(out.numpy(), np_softmax(LOGITS), rtol=1e-6)  # float32 rounding


def test_softmax_gradients_pass_gradcheck():
    w = ng.tensor(rng.standard_normal((4, 3)))
    x = ng.tensor(LOGITS, requires_grad=True)
    assert ng.gradcheck(lambda t: (F.softmax(t) * w).sum(), (x,))
    assert ng.gradcheck(lambda t: (F.log_softmax(t, axis=0) * w).sum(), (x,))


def test_softmax_second_derivatives_pass_gradgradcheck():
    x = ng.tensor(LOGITS, requires_grad=True)
    w = ng.tensor(rng.standard_normal((4, 3)))
    assert ng.gradgradcheck(lambda t: (F.log_softmax(t) * w).sum(), (x,))


# ---- cross_entropy --------------------------------------------------------------

def np_cross_entropy(logits, labels):
    return -np_log_softmax(logits)[np.arange(len(labels)), labels]


@pytest.mark.parametrize("reduction, reduce", [
    ("mean", np.mean), ("sum", np.sum), ("none", lambda a: a)])
def test_cross_entropy_with_class_indices_matches_numpy(reduction, reduce):
    loss = F.cross_entropy(ng.tensor(LOGITS), ng.tensor(LABELS), reduction=reduction)
    assert_allclose(loss.numpy(), reduce(np_cross_entropy(LOGITS, LABELS)), rtol=RTOL)


@pytest.mark.parametrize("reduction, reduce", [("mean", np.mean), ("none", lambda a: a)])
def test_cross_entropy_with_probabilities_matches_numpy(reduction, reduce):
    loss = F.cross_entropy(ng.tensor(LOGITS), ng.tensor(PROBS), reduction=reduction)
    expected = reduce(-(PROBS * np_log_softmax(LOGITS)).sum(axis=1))
    assert_allclose(loss.numpy(), expected, rtol=RTOL)


def test_cross_entropy_of_one_hot_probabilities_equals_class_indices():
    one_hot = np.eye(3)[LABELS]
    a = F.cross_entropy(ng.tensor(LOGITS), ng.tensor(one_hot)).item()
    b = F.cross_entropy(ng.tensor(LOGITS), ng.tensor(LABELS)).item()
    assert_allclose(a, b, rtol=RTOL)


def test_cross_entropy_gradient_is_softmax_minus_one_hot():
    x = ng.tensor(LOGITS, requires_grad=True)
    F.cross_entropy(x, ng.tensor(LABELS.astype(np.int32))).backward()
    expected = (np_softmax(LOGITS) - np.eye(3)[LABELS]) / len(LABELS)
    assert_allclose(x.grad.numpy(), expected, rtol=RTOL, atol=ATOL)


def test_cross_entropy_gradients_pass_gradcheck():
    x = ng.tensor(LOGITS, requires_grad=True)
    p = ng.tensor(PROBS, requires_grad=True)
    assert ng.gradcheck(lambda t: F.cross_entropy(t, ng.tensor(LABELS), reduction="sum"), (x,))
    assert ng.gradcheck(lambda t, q: F.cross_entropy(t, q), (x, p))


def test_cross_entropy_is_stable_and_supports_extra_dims():
    big = np.array([[1000.0, -1000.0], [0.0, 2000.0]])
    loss = F.cross_entropy(ng.tensor(big), ng.tensor([0, 0]), reduction="none")
    assert loss.numpy().tolist() == [0.0, 2000.0]
    logits = rng.standard_normal((2, 3, 5))  # (N, C, d): classes on axis 1
    labels = rng.integers(0, 3, (2, 5))
    loss = F.cross_entropy(ng.tensor(logits), ng.tensor(labels), reduction="none")
    expected = -np.take_along_axis(np_log_softmax(logits, axis=1), labels[:, None], 1)[:, 0]
    assert_allclose(loss.numpy(), expected, rtol=RTOL)


def test_cross_entropy_checks_its_arguments():
    x = ng.tensor(LOGITS)
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, ng.tensor(LABELS), reduction="avg")
    with pytest.raises(ValueError, match=r"shape \(4,\), got \(3,\)"):
        F.cross_entropy(x, ng.tensor(LABELS[:3]))
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        F.cross_entropy(x, ng.tensor([0, 1, 3, 0]))
    with pytest.raises(ValueError, match=r"\(4, 3\), got \(4, 2\)"):
        F.cross_entropy(x, ng.tensor(PROBS[:, :2]))
    with pytest.raises(TypeError, match="bool"):
        F.cross_entropy(x, ng.tensor(LABELS > 0))
    with pytest.raises(TypeError, match="target must be a Tensor"):
        F.cross_entropy(x, LABELS)


@pytest.mark.parametrize("kept_from, passes", [(1, 1), (len(LABELS) + 1, 3)])
def test_one_large_tensor_of_labels_is_checked_once_and_bad_labels_at_every_call(
        monkeypatch, kept_from, passes):
    # A loop over one large batch of labels reads their range once (a tensor's labels
    # index by one key array while the tensor lives, and it never changes); a small one
    # (under `_KEPT_FROM` labels) is read at every call, which costs less than keeping
    # its result. Labels out of range raise at every call, negative ones included.
    reads = []

    class Counting(dict):
        def get(self, *args):
            reads.append(args[0])
            return super().get(*args)

    monkeypatch.setattr(F, "_UNSIGNED", Counting(F._UNSIGNED))
    monkeypatch.setattr(F, "_KEPT_FROM", kept_from)
    x, labels = ng.tensor(LOGITS), ng.tensor(LABELS)
    for _ in range(3):
        assert_allclose(F.cross_entropy(x, labels).item(),
                        np.mean(np_cross_entropy(LOGITS, LABELS)), rtol=RTOL)
    assert len(reads) == passes
    for bad in ([0, 1, 3, 0], [0, -1, 2, 0]):
        labels = ng.tensor(bad)
        for _ in range(2):
            with pytest.raises(ValueError, match=r"\[0, 3\)"):
                F.cross_entropy(x, labels)


# ---- mse_loss -------------------------------------------------------------------

@pytest.mark.parametrize("reduction, reduce", [
    ("mean", np.mean), ("sum", np.sum), ("none", lambda a: a)])
def test_mse_loss_matches_numpy(reduction, reduce):
    target = rng.standard_normal((4, 3))
    loss = F.mse_loss(ng.tensor(LOGITS), ng.tensor(target), reduction=reduction)
    assert_allclose(loss.numpy(), reduce((LOGITS - target) ** 2), rtol=RTOL)


def test_mse_loss_gradients_pass_gradcheck_for_both_arguments():
    a = ng.tensor(LOGITS, requires_grad=True)
    b = ng.tensor(PROBS, requires_grad=True)
    assert ng.gradcheck(lambda s, t: F.mse_loss(s, t), (a, b))


def test_mse_loss_checks_its_arguments():
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(3,\)"):
        F.mse_loss(ng.tensor(LOGITS), ng.tensor(LOGITS[0]))
    with pytest.raises(ValueError, match="'mean', 'sum' or 'none'"):
        F.mse_loss(ng.tensor(LOGITS), ng.tensor(LOGITS), reduction=None)
