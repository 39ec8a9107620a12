#pragma once
//! \file
//! Umbrella header: every public tilepipe collective, and the complete GEMMs built from them
//! (GemmMultistage, and GemmAuto, which chooses a configuration and split-K per problem).

#include "version.cuh"

#include "numeric/element_traits.cuh"

#include "arch/cp_async.cuh"
#include "arch/ldmatrix.cuh"
#include "arch/mma.cuh"

#include "layout/ldmatrix_map.cuh"
#include "layout/matrix_view.cuh"
#include "layout/stage_index.cuh"
#include "layout/swizzled_tile.cuh"
#include "layout/thread_map.cuh"
#include "layout/tile_shape.cuh"

#include "block/async_tile_loader.cuh"
#include "block/smem_ring_buffer.cuh"
#include "block/smem_tile.cuh"

#include "warp/fragment_loader.cuh"
#include "warp/fragments.cuh"
#include "warp/warp_mma.cuh"

#include "epilogue/output_ops.cuh"
#include "epilogue/output_store.cuh"
#include "epilogue/staged_epilogue.cuh"

#include "mainloop/gemm_policy.cuh"
#include "mainloop/multistage_mainloop.cuh"

#include "gemm/arguments.cuh"
#include "gemm/default_policy.cuh"
#include "gemm/gemm_heuristic.cuh"
#include "gemm/kernel.cuh"
#include "gemm/gemm_multistage.cuh"
#include "gemm/split_k.cuh"
#include "status.cuh"
