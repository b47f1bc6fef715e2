"""Per-operation Python overhead: a 200-step Horner polynomial on scalar tensors."""

import numpy as np

import numgrad as ng

COEFFS = list(np.random.default_rng(0).uniform(-1, 1, 200))


def horner(x):
    p = ng.tensor(COEFFS[0])
    for c in COEFFS[1:]:
        p = p * x + c
    return p


class Horner:
    """Recording, and value + gradient, of 398 scalar operations (199 mul + 199 add)."""

    def setup(self):
        self.x = ng.tensor(0.7, requires_grad=True)
        self.time_forward_backward()  # compile (or load) the kernels first

    def time_record(self):
        with ng.no_grad():
            horner(self.x)

    def time_forward_backward(self):
        self.x.grad = None
        horner(self.x).backward()
        self.x.grad.item()

    def track_kernels_forward_backward(self):
        with ng.engine.record() as rec:
            self.time_forward_backward()
        return rec.kernels_launched

    track_kernels_forward_backward.unit = "kernels"
