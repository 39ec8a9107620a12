"""tilepipe's GEMMs as PyTorch operators (python/README.md).

    import tilepipe
    d = tilepipe.gemm(a, b, bias, activation="relu")      # relu(a @ b + bias)
    y = tilepipe.linear(x, weight, bias, activation="gelu")  # gelu(F.linear(x, weight, bias))

Importing the package loads tilepipe._C, which registers torch.ops.tilepipe.gemm with its CUDA and
autograd kernels, and tilepipe._ops, which gives it a fake implementation for torch.compile.
"""

import torch

from . import _C, _ops  # noqa: F401  (registration)
from ._ops import ACTIVATIONS, gemm, linear

__all__ = ["ACTIVATIONS", "gemm", "linear", "hopper_tier_available"]


def hopper_tier_available(device=None):
    """Whether CUDA device `device` (default: the current one) runs tilepipe's Hopper tier: an
    sm_90 GPU (H100, H200), which this package's sm_90a code runs on."""
    return _C.hopper_tier_available(torch.cuda._utils._get_device_index(device, optional=True))
