"""The engine: schedule lazy graphs into fused kernels, run them, and count the work."""

from numgrad.engine.counters import Record, record
from numgrad.engine.realize import realize, rebound

__all__ = ["Record", "realize", "rebound", "record"]
