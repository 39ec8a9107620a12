#pragma once
//! \file
//! Umbrella header: every public tilepipe collective of both tiers (Ampere: cp.async, ldmatrix,
//! mma.sync; Hopper: TMA, mbarriers, wgmma), and the complete GEMMs built from them
//! (GemmMultistage, which takes the Hopper tier where it can; GemmSm90, the Hopper tier alone;
//! GemmAuto, which chooses a configuration and split-K per problem).

#include "version.cuh"

#include "numeric/element_traits.cuh"

#include "arch/cluster.cuh"
#include "arch/cp_async.cuh"
#include "arch/ldmatrix.cuh"
#include "arch/mbarrier.cuh"
#include "arch/mma.cuh"
#include "arch/prmt.cuh"
#include "arch/special_register.cuh"
#include "arch/tma.cuh"
#include "arch/wgmma.cuh"

#include "layout/byte_fragment_map.cuh"
#include "layout/ldmatrix_map.cuh"
#include "layout/matrix_view.cuh"
#include "layout/pipeline_state.cuh"
#include "layout/stage_index.cuh"
#include "layout/stream_k_partition.cuh"
#include "layout/swizzled_tile.cuh"
#include "layout/thread_map.cuh"
#include "layout/tile_scheduler.cuh"
#include "layout/tile_shape.cuh"
#include "layout/transpose_tile.cuh"
#include "layout/wgmma_descriptor.cuh"

#include "block/async_tile_loader.cuh"
#include "block/mbarrier_ring.cuh"
#include "block/smem_ring_buffer.cuh"
#include "block/smem_tile.cuh"
#include "block/tma_tile_loader.cuh"

#include "warp/byte_fragment_loader.cuh"
#include "warp/fragment_loader.cuh"
#include "warp/fragment_transform.cuh"
#include "warp/fragments.cuh"
#include "warp/warp_mma.cuh"
#include "warp/warpgroup_mma.cuh"

#include "epilogue/output_ops.cuh"
#include "epilogue/output_store.cuh"
#include "epilogue/staged_epilogue.cuh"
#include "epilogue/warpgroup_epilogue.cuh"

#include "mainloop/gemm_policy.cuh"
#include "mainloop/multistage_mainloop.cuh"
#include "mainloop/warp_specialized_mainloop.cuh"

#include "gemm/argument_checks.cuh"
#include "gemm/arguments.cuh"
#include "gemm/gemm_auto.cuh"
#include "gemm/gemm_auto_heuristic.cuh"
#include "gemm/fp8_scale_fold.cuh"
#include "gemm/gemm_fp8.cuh"
#include "gemm/gemm_mixed_input.cuh"
#include "gemm/gemm_multistage.cuh"
#include "gemm/gemm_options.cuh"
#include "gemm/gemm_sm80.cuh"
#include "gemm/gemm_sm90.cuh"
#include "gemm/gemm_tier.cuh"
#include "gemm/hopper_tier.cuh"
#include "gemm/k_major_transpose.cuh"
#include "gemm/kernel.cuh"
#include "gemm/kernel_sm90.cuh"
#include "gemm/launch.cuh"
#include "gemm/mixed_input_arguments.cuh"
#include "gemm/persistent_sm90.cuh"
#include "gemm/split_k.cuh"
#include "gemm/stream_k.cuh"
#include "gemm/tile_configs.cuh"
#include "status.cuh"
