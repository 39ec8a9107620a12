#pragma once
//! \file
//! What the benchmark's translation units share: the data types and layouts it measures, the
//! tile configurations, and the table of compiled GemmMultistage instantiations.
//!
//! The instantiations live in their own files (configs_*.cu) so that the build spreads them
//! over several compiler processes; the rest of the benchmark sees them only through
//! `TilepipeKernel` and `AutoKernel`.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <tilepipe/gemm/default_policy.cuh>
#include <tilepipe/status.cuh>

// The element types named at run time, and the random fill, are the device tests' own.
#include "../test/device/device_fill.cuh"

namespace tilepipe_bench {

//! Element type of A, B and D: the benchmark measures kF16 and kBF16 (accumulation is always
//! f32), and kF32 at a few squares (its own table: tf32 and SIMT f32 against cuBLAS's two f32
//! paths); `name_of` gives "f16", "bf16" and "f32".
using DType = tptest::DType;
using tptest::name_of;

//! Operand layouts, in BLAS letters for (A, B): TN = A row-major and B column-major (both
//! K-contiguous), NN = A and B column-major. D is always row-major.
enum class LayoutPair { kTN, kNN };

inline const char* name_of(LayoutPair l) { return l == LayoutPair::kTN ? "tn" : "nn"; }

//! The math of a configuration (tilepipe/numeric/math.cuh): MathDefault for f16 and bf16, and for
//! f32 MathTF32 (tensor cores) or MathSimtF32 (CUDA cores).
enum class MathKind { kDefault, kTF32, kSimtF32 };

template <class Math>
constexpr MathKind math_kind_of() {
  if constexpr (std::is_same_v<Math, tilepipe::MathTF32>) return MathKind::kTF32;
  else if constexpr (std::is_same_v<Math, tilepipe::MathSimtF32>) return MathKind::kSimtF32;
  else return MathKind::kDefault;
}

//! One GemmPolicy: block tile, warp tile, stages, and the math where it is not the default.
struct TileConfig {
  int tile_m, tile_n, tile_k, warp_m, warp_n, stages;
  MathKind math = MathKind::kDefault;

  constexpr bool same_tile(const TileConfig& o) const {
    return tile_m == o.tile_m && tile_n == o.tile_n && tile_k == o.tile_k && warp_m == o.warp_m &&
           warp_n == o.warp_n && math == o.math;
  }
  constexpr bool operator==(const TileConfig& o) const {
    return same_tile(o) && stages == o.stages;
  }
  constexpr int warps() const { return (tile_m / warp_m) * (tile_n / warp_n); }
  //! "128x128x32" (the block tile alone).
  std::string tile_name() const {
    return std::to_string(tile_m) + "x" + std::to_string(tile_n) + "x" + std::to_string(tile_k);
  }
  //! "128x128x32/w64x64/s4", "128x128x32/w64x32/s3/tf32" (or "/simt") for the f32 maths.
  std::string name() const {
    return tile_name() + "/w" + std::to_string(warp_m) + "x" + std::to_string(warp_n) + "/s" +
           std::to_string(stages) +
           (math == MathKind::kTF32      ? "/tf32"
            : math == MathKind::kSimtF32 ? "/simt"
                                         : "");
  }
};

//! The TileConfig of a Hopper tier tile (a HopperTileConfig): one consumer warpgroup's m64 x N
//! counts as its warp tile.
template <class Config>
constexpr TileConfig hopper_config_of() {
  return TileConfig{Config::kM, Config::kN, Config::kK, 64, Config::kN, Config::kStages};
}

//! The TileConfig of a GemmPolicy.
template <class Policy>
constexpr TileConfig config_of() {
  return TileConfig{Policy::Tile::kM,
                    Policy::Tile::kN,
                    Policy::Tile::kK,
                    Policy::Warp::kM,
                    Policy::Warp::kN,
                    Policy::kStages,
                    math_kind_of<typename Policy::Math>()};
}

//! GemmMultistage's default, `DefaultGemmPolicy<4>`: 256x128x64 when every target of the build
//! has sm_90-class shared memory (the GPU machine's `native` build), else 256x128x32.
inline constexpr TileConfig kDefaultConfig = config_of<tilepipe::DefaultGemmPolicy<4>>();

//! `DefaultGemmPolicy<S>` for S = 2..6: what `GemmMultistage<..., S>` runs unless told otherwise
//! (on sm_90-only builds the 64-deep tile up to 4 stages, the 32-deep one at 5 and 6).
inline constexpr TileConfig kDefaultConfigsByStages[] = {
    config_of<tilepipe::DefaultGemmPolicy<2>>(), config_of<tilepipe::DefaultGemmPolicy<3>>(),
    config_of<tilepipe::DefaultGemmPolicy<4>>(), config_of<tilepipe::DefaultGemmPolicy<5>>(),
    config_of<tilepipe::DefaultGemmPolicy<6>>()};

//! Configurations compiled for every data type and layout (the default first). The f16 TN sweep
//! (configs_f16_tn_*.cu) holds all of them; configs_candidates.cu compiles them for the rest.
//! Chosen from the first H200 run (docs/performance-log.md, entry 1): the best of the f16 TN
//! sweep, the best NN configurations, and a small tile for small problems.
inline constexpr TileConfig kCandidateConfigs[] = {
    kDefaultConfig,
    {256, 128, 32, 64, 64, 4},  // the portable default (the default where sm_80 is a target)
    {128, 128, 32, 64, 64, 4},  // the default before 256x128x32
    {128, 128, 32, 64, 64, 3},
    {256, 128, 32, 64, 64, 3},
    {128, 256, 64, 64, 64, 3},  // fastest for most NN problems
    {64, 64, 64, 32, 32, 3},    // many blocks: small problems
    {64, 64, 64, 32, 32, 4},
};

//! Device pointers and sizes of one GEMM: D (m x n, row-major, ldd) = A (m x k) * B (k x n),
//! with A and B in the layouts of the kernel's `LayoutPair`; the workspace is what the kernel
//! asks for (GemmAuto's split-K, tf32 NN's K-major copy of A on the Hopper tier, a peer's).
struct Operands {
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* d = nullptr;
  std::int64_t ldd = 0;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

//! What the compiler and the occupancy calculator say about one kernel on the current device.
struct KernelResources {
  int registers = 0;      //!< per thread
  int blocks_per_sm = 0;  //!< resident blocks per SM with the kernel's shared memory
};

//! One compiled GemmMultistage instantiation.
struct TilepipeKernel {
  TileConfig config;
  DType dtype;
  LayoutPair layout;
  std::size_t smem_bytes;  //!< GemmMultistage::kSharedBytes (the ring, or the epilogue if larger)
  int threads;
  //! Checks the arguments and launches on the stream (GemmMultistage::run), alpha = 1, beta = 0,
  //! with `Operands::workspace`.
  tilepipe::Status (*run)(const Operands&, cudaStream_t);
  //! GemmMultistage::can_implement for the operands (with their workspace) on the current device:
  //! a problem it refuses (the benchmark's kernels take only 16-byte aligned operands) is skipped,
  //! with the reason, not counted as a failure.
  tilepipe::Status (*can_implement)(const Operands&);
  //! GemmMultistage::workspace_size: for f32 NN under MathTF32, the K-major copy of A that the
  //! Hopper tier makes (and times as part of the call); 0 for the others.
  std::size_t (*workspace_size)(const Operands&);
  //! Registers and occupancy on the current device (needs a GPU; of the Ampere tier's kernel).
  KernelResources (*resources)();
  //! GemmMultistage::kHasHopperTier: the configuration has the default tile, so on a device that
  //! runs sm_90a code `run` takes the Hopper tier (GemmSm90 with the same stage count).
  bool hopper_tier;
};

// Each appends its instantiations (configs_*.cu).
void add_f16_tn_sweep_a(std::vector<TilepipeKernel>& out);     //!< f16 TN, 4-8 warp tiles, K 32
void add_f16_tn_sweep_b(std::vector<TilepipeKernel>& out);     //!< f16 TN, the other tiles
void add_candidate_kernels(std::vector<TilepipeKernel>& out);  //!< bf16 TN, f16 NN, bf16 NN
void add_f32_kernels(std::vector<TilepipeKernel>& out);        //!< f32 TN and NN, tf32 and SIMT

//! What tilepipe::GemmAuto (gemm_heuristic.cuh) chooses for one problem.
struct AutoChoice {
  TileConfig config{};  //!< the tile configuration (none for a tile named only by `tile_name`)
  int split_k = 1;      //!< K slices (1: no split-K)
  bool hopper = false;  //!< the Large choice, run on the Hopper tier (GemmSm90)
  //! What else the choice says: ",streamK=132", ",copies" (unaligned operands on the Hopper tier's
  //! pitched copies), ",narrow" (the narrow kernel).
  std::string suffix;
  //! GemmAutoConfig::name() of a tile that configs_auto.cu has no TileConfig for.
  std::string tile_name;
  //! "64x64x64/w32x32/s3,splitK=8" (as GemmAutoConfig::name), ",hopper" on the Hopper tier.
  std::string name() const {
    if (!tile_name.empty()) return tile_name + suffix;
    return config.name() + (split_k > 1 ? ",splitK=" + std::to_string(split_k) : std::string()) +
           (hopper ? ",hopper" : "") + suffix;
  }
};

//! One compiled tilepipe::GemmAuto instantiation (configs_auto.cu), any alignment: the
//! heuristic's choice, the workspace it asks for and its run, alpha = 1, beta = 0, with
//! `Operands::workspace`.
struct AutoKernel {
  DType dtype;
  LayoutPair layout;
  //! No GPU needed; operands with null pointers and zero leading dimensions count as aligned.
  AutoChoice (*select)(const Operands&, int sm_count);
  //! GemmAuto::workspace_size on the current device: what `run` needs for these operands.
  std::size_t (*workspace_size)(const Operands&);
  tilepipe::Status (*run)(const Operands&, cudaStream_t);
};

void add_auto_kernels(std::vector<AutoKernel>& out);  //!< f16 and bf16, TN and NN

//! Result of the register-only mma.sync microbenchmark (mma_peak.cu).
struct PeakResult {
  double tflops = 0;
  double median_ms = 0;
  int runs = 0;
  long long mma_per_launch = 0;
  int blocks = 0, threads_per_block = 0, chains_per_warp = 0, iterations = 0;
};

//! Measures the throughput of `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.*.f32` with all
//! operands in registers: `runs` timed launches after warm-up, median.
PeakResult measure_mma_peak(DType dtype, int runs, cudaStream_t stream);

//! The same register-only kernel, one launch at a time, so that gemm_bench can time it in turns
//! with a problem's GEMMs: the peak at the clock the GPU runs at while that problem is measured.
class MmaPeakKernel {
 public:
  MmaPeakKernel(DType dtype, int iterations);
  ~MmaPeakKernel();
  MmaPeakKernel(const MmaPeakKernel&) = delete;
  MmaPeakKernel& operator=(const MmaPeakKernel&) = delete;
  void launch(cudaStream_t stream) const;  //!< one full wave of the microbenchmark
  long long mma_per_launch() const;
  double flops() const;  //!< per launch
  int blocks() const { return blocks_; }

 private:
  DType dtype_;
  int iterations_;
  int blocks_ = 0;
  float* out_ = nullptr;
};

}  // namespace tilepipe_bench
