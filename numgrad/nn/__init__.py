"""Neural-network building blocks; `numgrad.nn.functional` holds the stateless functions."""

from numgrad.nn import functional

__all__ = ["functional"]
