"""tilepipe's GEMMs as PyTorch operators (python/README.md).

    import tilepipe
    d = tilepipe.gemm(a, b, bias, activation="relu")      # relu(a @ b + bias)
    y = tilepipe.linear(x, weight, bias, activation="gelu")  # gelu(F.linear(x, weight, bias))
    d = tilepipe.scaled_mm(a8, w8.t(), scale_a, scale_b)  # FP8, as torch._scaled_mm
    y = tilepipe.grouped_mm(x, w.transpose(-2, -1), offs)  # experts, as torch._grouped_mm
    y = tilepipe.scaled_grouped_mm(x8, w8.transpose(-2, -1), sx, sw, offs)  # FP8 experts

Importing the package loads tilepipe._C, which registers torch.ops.tilepipe.gemm (CUDA and autograd
kernels), torch.ops.tilepipe.scaled_mm, grouped_mm, grouped_mm_masked and scaled_grouped_mm (CUDA
kernels), and tilepipe._ops, which gives them fake implementations for torch.compile.
"""

import torch

from . import _C, _ops  # noqa: F401  (registration)
from ._ops import (ACTIVATIONS, gemm, grouped_mm, grouped_mm_masked, linear, scaled_grouped_mm,
                   scaled_mm)

__all__ = ["ACTIVATIONS", "gemm", "grouped_mm", "grouped_mm_masked", "linear", "scaled_grouped_mm",
           "scaled_mm", "hopper_tier_available"]


def hopper_tier_available(device=None):
    """Whether CUDA device `device` (default: the current one) runs tilepipe's Hopper tier: an
    sm_90 GPU (H100, H200), which this package's sm_90a code runs on."""
    return _C.hopper_tier_available(torch.cuda._utils._get_device_index(device, optional=True))
