#pragma once
//! \file
//! Kept so that code including it still compiles: GemmAuto is in gemm_auto.cuh, its rule in
//! gemm_auto_heuristic.cuh.

#include "gemm_auto.cuh"
