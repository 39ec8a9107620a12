"""Builds and loads the tilepipe_torch extension with torch.utils.cpp_extension.load (JIT).

    import jit_build
    tilepipe_torch = jit_build.load()
    d = tilepipe_torch.gemm(a, b, bias=bias, activation="relu")

The first call compiles tilepipe_torch.cpp (host compiler) and tilepipe_gemm.cu (nvcc: every
element type and layout, for sm_80 and sm_90a), which takes minutes; later calls, in this process
or another, reuse the build while the sources and flags are unchanged. It needs nvcc (on PATH or
in CUDA_HOME) and ninja, and no network. The build goes to build/torch_extension at the top of
the repository (git ignores build/), or to $TILEPIPE_TORCH_BUILD_DIR. TILEPIPE_TORCH_VERBOSE=1
prints the compiler command lines.
"""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

# The binding (host compiler), the dispatch, and the GEMMs of each pair of element types in a file
# of their own, so that ninja compiles them in parallel.
SOURCES = [
    "tilepipe_torch.cpp",
    "tilepipe_gemm.cu",
    "gemm_f16_f16.cu",
    "gemm_f16_f32.cu",
    "gemm_bf16_bf16.cu",
    "gemm_bf16_f32.cu",
]

# The Ampere tier runs on every sm_80+ GPU; the Hopper tier (TMA, wgmma) exists only in the
# arch-specific sm_90a target. With -gencode flags of its own, torch adds none from
# TORCH_CUDA_ARCH_LIST or the visible GPUs (which would add a plain sm_90 that lacks the
# Hopper tier).
ARCH_FLAGS = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90a,code=sm_90a",
]


def load(verbose=False):
    """The compiled extension module (building it first if needed)."""
    from torch.utils.cpp_extension import load as load_extension

    build_dir = Path(os.environ.get("TILEPIPE_TORCH_BUILD_DIR") or REPO / "build/torch_extension")
    build_dir.mkdir(parents=True, exist_ok=True)
    return load_extension(
        name="tilepipe_torch",
        sources=[str(HERE / name) for name in SOURCES],
        extra_include_paths=[str(REPO / "include")],
        extra_cflags=["-O3", "-DNDEBUG"],  # torch adds -std=c++17 for the host compiler
        # --threads=2: nvcc compiles the two targets in parallel.
        extra_cuda_cflags=["-O3", "-DNDEBUG", "-std=c++17", "--threads=2", *ARCH_FLAGS],
        build_directory=str(build_dir),
        verbose=verbose or os.environ.get("TILEPIPE_TORCH_VERBOSE") == "1",
    )
