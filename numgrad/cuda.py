"""``ng.cuda``: whether the CUDA target can run here."""

from numgrad.device import cuda_is_available as is_available

__all__ = ["is_available"]
