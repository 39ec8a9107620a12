// The Hopper tier (GemmSm90: TMA, mbarrier ring, wgmma, persistent warp-specialized kernel) and
// GemmMultistage's choice of it. Skips on a GPU that is not sm_90 or in a build without 90a; where
// both have the tier, a test fails if it cannot run (TP_REQUIRE_HOPPER_TIER).
//
// Most cases run the randomized test's table of GemmMultistage instantiations (gemm_dispatch.cuh)
// on the Hopper tier (`run_on`), so that this file instantiates only what the table lacks: an
// f16 -> bf16 GEMM, GemmSm90 itself with a fused operator, a config without a cluster, and the
// ping-pong schedule.

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gemm_dispatch.cuh"
#include "gemm_test_util.cuh"

namespace {

using tilepipe::Layout;
using tptest::GemmCase;
using tptest::Reference;

// GemmMultistage (the table's) forced onto the Hopper tier.
template <class AB, class D, Layout LA = Layout::kRowMajor, Layout LB = Layout::kColumnMajor,
          int Stages = 4>
using Sm90 = tptest::DispatchedGemm<AB, D, LA, LB, Stages, tptest::HopperTier>;

// The library's own answer, which TP_REQUIRE_HOPPER_TIER asserts where the GPU and the build have
// the tier (it decides whether to skip without asking the library).
bool hopper_tier_available() {
  return tilepipe::GemmSm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>::available();
}

// Odd shapes: residues in M, N and K (K below, at and above one k-tile of 64), single tiles,
// and enough tiles that every persistent block walks several (the ring carries over tiles).
const GemmCase kOddShapes[] = {
    {1, 1, 1},
    {127, 257, 131, Layout::kRowMajor, 1.0f, 1.0f},
    {64, 256, 64},
    {65, 255, 63, Layout::kColumnMajor, 0.5f, -1.0f},
    {300, 200, 5},
    {1000, 3000, 200, Layout::kRowMajor, 1.0f, 0.0f},
    {520, 770, 70, Layout::kRowMajor, 0.5f, 0.0f},  // the staged epilogue's path for alpha != 1
    {129, 1100, 1029, Layout::kColumnMajor, 1.0f, 2.0f},
};

template <class AB, class D, Layout LA, Layout LB>
void run_shapes(std::uint32_t seed) {
  for (const GemmCase& gc : kOddShapes)
    tptest::run_gemm_case<Sm90<AB, D, LA, LB>, AB, D>(gc, Reference::kExactCpu, seed++);
}

// D = relu(alpha * A * B * scale[row] + bias[col]): the same operator the Ampere tier's tests use.
using FusedOp =
    tilepipe::Chain<tilepipe::ScalePerRow<float>, tilepipe::BiasPerCol<float>, tilepipe::Relu>;
struct FusedCase {
  static constexpr bool kExact = true;
  std::vector<float> scale, bias;
  std::unique_ptr<tptest::DeviceBuffer<float>> d_scale, d_bias;
  template <class Args>
  void setup(Args& args, int m, int n) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> s(-2, 2), b(-5, 5);
    for (int i = 0; i < m; ++i) scale.push_back(static_cast<float>(s(rng)));
    for (int i = 0; i < n; ++i) bias.push_back(static_cast<float>(b(rng)));
    d_scale = std::make_unique<tptest::DeviceBuffer<float>>(scale.size());
    d_bias = std::make_unique<tptest::DeviceBuffer<float>>(bias.size());
    EXPECT_EQ(d_scale->upload(scale), cudaSuccess);
    EXPECT_EQ(d_bias->upload(bias), cudaSuccess);
    args.output_op.template get<0>().scale = d_scale->get();
    args.output_op.template get<1>().bias = d_bias->get();
  }
  double apply(double v, int row, int col) const {
    const double x = v * scale[row] + bias[col];
    return x > 0 ? x : 0;
  }
};

}  // namespace

TEST(GemmSm90, LayoutsF16) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  run_shapes<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>(10);
  run_shapes<__half, __half, Layout::kRowMajor, Layout::kRowMajor>(20);
  run_shapes<__half, __half, Layout::kColumnMajor, Layout::kColumnMajor>(30);
  run_shapes<__half, __half, Layout::kColumnMajor, Layout::kRowMajor>(40);
}

TEST(GemmSm90, LayoutsBf16) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  run_shapes<__nv_bfloat16, __nv_bfloat16, Layout::kRowMajor, Layout::kColumnMajor>(50);
  run_shapes<__nv_bfloat16, float, Layout::kRowMajor, Layout::kRowMajor>(60);
}

TEST(GemmSm90, OutputTypesAndKZero) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  using F16ToBf16 =
      tilepipe::GemmSm90<__half, __nv_bfloat16, Layout::kRowMajor, Layout::kColumnMajor>;
  for (Layout l : {Layout::kRowMajor, Layout::kColumnMajor}) {
    GemmCase gc{127, 257, 131, l, 1.0f, 1.0f};
    tptest::run_gemm_case<Sm90<__half, float, Layout::kRowMajor, Layout::kColumnMajor, 2>, __half,
                          float>(gc, Reference::kExactCpu, 70);
    tptest::run_gemm_case<F16ToBf16, __half, __nv_bfloat16>(gc, Reference::kExactCpu, 71);
  }
  // K == 0: D = beta * C, and A and B are never read.
  tptest::run_gemm_case<Sm90<__half, float, Layout::kRowMajor, Layout::kColumnMajor, 2>, __half,
                        float>({33, 65, 0, Layout::kRowMajor, 1.0f, 2.0f}, Reference::kExactCpu,
                               72);
}

TEST(GemmSm90, Batched) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  using TN = Sm90<__half, __half>;
  using NT = Sm90<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kRowMajor, 6>;
  GemmCase gc{77, 300, 90, Layout::kRowMajor, 1.0f, 1.0f, /*batch=*/4, /*pad=*/8};
  tptest::run_gemm_case<TN, __half, __half>(gc, Reference::kExactCpu, 80);
  gc.layout_cd = Layout::kColumnMajor;
  tptest::run_gemm_case<NT, __nv_bfloat16, float>(gc, Reference::kExactCpu, 81);
  gc.broadcast_b = true;  // one B for every problem: a two-dimensional tensor map
  tptest::run_gemm_case<TN, __half, __half>(gc, Reference::kExactCpu, 82);
  tptest::run_gemm_case<TN, __half, __half>({1, 1, 1, Layout::kRowMajor, 1, 0, 7},
                                            Reference::kExactCpu, 83);
}

TEST(GemmSm90, StageCounts) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  const GemmCase gc{257, 300, 555, Layout::kRowMajor, 1.0f, 1.0f};
  tptest::run_gemm_case<Sm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 2>, __half,
                        __half>(gc, Reference::kExactCpu, 90);
  tptest::run_gemm_case<Sm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 3>, __half,
                        __half>(gc, Reference::kExactCpu, 91);
  // Five and six stages take the 128 x 128 tile.
  tptest::run_gemm_case<Sm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 6>, __half,
                        __half>(gc, Reference::kExactCpu, 92);
}

// The default configs run in clusters of two blocks that multicast B; a config without a cluster
// takes the plain launch and loads all of B itself (both B layouts).
TEST(GemmSm90, WithoutCluster) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  using Config = tilepipe::HopperTileConfig<128, 128, 4, /*ClusterM=*/1>;
  using TN = tilepipe::GemmSm90<__half, float, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                tilepipe::Identity, Config>;
  using NN = tilepipe::GemmSm90<__half, float, Layout::kRowMajor, Layout::kRowMajor, 4,
                                tilepipe::Identity, Config>;
  std::uint32_t seed = 95;
  for (const GemmCase& gc : kOddShapes) {
    tptest::run_gemm_case<TN, __half, float>(gc, Reference::kExactCpu, seed++);
    tptest::run_gemm_case<NN, __half, float>(gc, Reference::kExactCpu, seed++);
  }
}

// Ping-pong: two consumer warpgroups take 64-row tiles in turn. The odd shapes, plus shapes with
// two to four tiles per block (an odd count in some blocks: one consumer then has one tile more)
// and K over several laps of the ring, in clusters of two (TN) and without a cluster (NN).
TEST(GemmSm90, PingPong) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  using tilepipe::HopperSchedule;
  using TN =
      tilepipe::GemmSm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4,
                         tilepipe::Identity,
                         tilepipe::HopperTileConfig<64, 256, 4, 2, HopperSchedule::kPingPong>>;
  using NN =
      tilepipe::GemmSm90<__nv_bfloat16, float, Layout::kRowMajor, Layout::kRowMajor, 8,
                         tilepipe::Identity,
                         tilepipe::HopperTileConfig<64, 128, 8, 1, HopperSchedule::kPingPong>>;
  std::uint32_t seed = 120;
  for (const GemmCase& gc : kOddShapes) {
    tptest::run_gemm_case<TN, __half, __half>(gc, Reference::kExactCpu, seed++);
    tptest::run_gemm_case<NN, __nv_bfloat16, float>(gc, Reference::kExactCpu, seed++);
  }
  for (const GemmCase& gc :
       {GemmCase{2000, 3000, 300, Layout::kRowMajor, 1.0f, 1.0f},
        GemmCase{4100, 1000, 555, Layout::kColumnMajor, 1.0f, 0.0f},
        GemmCase{77, 300, 90, Layout::kRowMajor, 1.0f, 1.0f, /*batch=*/5, /*pad=*/8}}) {
    tptest::run_gemm_case<TN, __half, __half>(gc, Reference::kExactCpu, seed++);
    tptest::run_gemm_case<NN, __nv_bfloat16, float>(gc, Reference::kExactCpu, seed++);
  }
}

// (Named Large: the sanitizer runs leave it out.)
TEST(GemmSm90, PingPongLargeAgainstCublas) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  using TN = tilepipe::GemmSm90<
      __half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4, tilepipe::Identity,
      tilepipe::HopperTileConfig<64, 256, 4, 2, tilepipe::HopperSchedule::kPingPong>>;
  tptest::run_gemm_case<TN, __half, __half>({2048, 2048, 2048}, Reference::kCublas, 140);
}

TEST(GemmSm90, FusedOutputOperator) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  for (Layout l : {Layout::kRowMajor, Layout::kColumnMajor}) {
    FusedCase c;
    tptest::run_gemm_case_op<
        tilepipe::GemmSm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4, FusedOp>,
        __half, __half>({200, 300, 130, l, 1.0f, 1.0f}, Reference::kExactCpu, 100, c);
  }
  // beta = 0 and row-major D whose lines end on 16 bytes: the staged path, with edge tiles in M
  // and N whose elements past D are staged with the operator at clamped positions (the vectors
  // are read only inside; memcheck would see a read past them) and clipped by TMA.
  FusedCase c;
  tptest::run_gemm_case_op<
      tilepipe::GemmSm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4, FusedOp>,
      __half, __half>({200, 264, 130, Layout::kRowMajor, 1.0f, 0.0f}, Reference::kExactCpu, 101, c);
}

TEST(GemmSm90, LargeAgainstCublas) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  tptest::run_gemm_case<Sm90<__half, __half>, __half, __half>({2048, 2048, 2048},
                                                              Reference::kCublas, 110);
  using NN = Sm90<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor, Layout::kColumnMajor>;
  tptest::run_gemm_case<NN, __nv_bfloat16, __nv_bfloat16>(
      {2048, 1536, 4096, Layout::kColumnMajor, 1.0f, 0.5f}, Reference::kCublas, 111);
}

// GemmMultistage takes the Hopper tier by itself, and the Ampere tier for split-K; run_on refuses
// split-K on the Hopper tier with a reason.
TEST(GemmSm90, GemmMultistageChoosesTheTier) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  // f16 TN at 2 stages is the table's split-K configuration of that type and layout.
  const int index = tptest::find_config(tptest::DType::kF16, tptest::DType::kF16, Layout::kRowMajor,
                                        Layout::kColumnMajor, 2);
  ASSERT_GE(index, 0);
  const tptest::GemmConfig& cfg = tptest::all_configs()[index];
  ASSERT_TRUE(cfg.split_k);
  tptest::DeviceBuffer<__half> a(256 * 1024), b(256 * 1024), d(256 * 256);
  tptest::ErasedArgs args;
  args.m = 256;
  args.n = 256;
  args.k = 1024;
  args.a = a.get();
  args.lda = 1024;
  args.b = b.get();
  args.ldb = 1024;
  args.d = d.get();
  args.ldd = 256;
  EXPECT_EQ(cfg.tier(args), tilepipe::GemmTier::kHopper);
  args.split_k = 4;
  EXPECT_EQ(cfg.tier(args), tilepipe::GemmTier::kAmpere);
  tptest::DeviceBuffer<unsigned char> workspace(cfg.workspace_size(args));
  args.workspace = workspace.get();
  args.workspace_bytes = workspace.bytes();
  args.tier = tilepipe::GemmTier::kHopper;
  const tilepipe::Status refused = cfg.run(args, nullptr);
  EXPECT_FALSE(refused);
  EXPECT_NE(refused.message().find("split_k"), std::string::npos) << refused.message();
  // Without a tier, the same table entry runs each case on the tier it picks: the Hopper tier,
  // then the Ampere tier for split-K.
  using Auto = tptest::DispatchedGemm<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 2>;
  tptest::run_gemm_case<Auto, __half, __half>({127, 257, 131, Layout::kRowMajor, 1.0f, 1.0f},
                                              Reference::kExactCpu, 120);
}

namespace {

// The Hopper tier's split-K and stream-K schedulers in the three kinds of tile: the default
// 128 x 256 in clusters of two (two consumer warpgroups, each with its own slot and counter per
// piece), 64 x 128 without a cluster, and ping-pong 64 x 256 in clusters of two.
using SplitDefault = tilepipe::GemmSm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>;
using SplitSmall =
    tilepipe::GemmSm90<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kRowMajor, 6,
                       tilepipe::Identity, tilepipe::HopperTileConfig<64, 128, 6, 1>>;
using SplitPingPong = tilepipe::GemmSm90<
    __half, float, Layout::kRowMajor, Layout::kColumnMajor, 4, tilepipe::Identity,
    tilepipe::HopperTileConfig<64, 256, 4, 2, tilepipe::HopperSchedule::kPingPong>>;

// K over many k-tiles with residues, few and many tiles, batches, beta != 0, column-major D.
// (Sized for the CPU reference: about 2 x 10^9 multiply-adds in all.)
const GemmCase kSplitShapes[] = {
    {1, 1, 1},
    {127, 257, 1031, Layout::kRowMajor, 1.0f, 1.0f},
    {65, 255, 63, Layout::kColumnMajor, 0.5f, -1.0f},  // one k-tile: nothing to split
    {100, 200, 1500, Layout::kRowMajor, 1.0f, 0.0f, /*batch=*/3},
    {600, 1100, 130, Layout::kRowMajor, 1.0f, 0.0f},  // many tiles, three k-tiles
    {129, 300, 2029, Layout::kColumnMajor, 1.0f, 2.0f},
    {16, 1024, 4096, Layout::kRowMajor, 1.0f, 0.0f},  // decode-like: few tiles, long K
};

template <class Gemm, class AB, class D>
void run_split_cases(std::uint32_t seed) {
  for (GemmCase gc : kSplitShapes) {
    for (int split : {2, 3, 16}) {
      gc.split_k = split;
      gc.stream_k = 0;
      tptest::run_gemm_case<Gemm, AB, D>(gc, Reference::kExactCpu, seed++);
    }
    // Stream-K over one block, a prime count, one wave of the device and two.
    int wave = 0;
    ASSERT_TRUE(Gemm::stream_k_blocks(wave));
    for (int blocks : {1, 7, wave, 2 * wave}) {
      gc.split_k = 1;
      gc.stream_k = blocks;
      tptest::run_gemm_case<Gemm, AB, D>(gc, Reference::kExactCpu, seed++);
    }
  }
}

}  // namespace

TEST(GemmSm90, SplitKAndStreamK) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  run_split_cases<SplitDefault, __half, __half>(300);
  run_split_cases<SplitSmall, __nv_bfloat16, float>(400);
  run_split_cases<SplitPingPong, __half, float>(500);
  // One cluster item of 256 k-tiles: split 16 ways, and cut by stream-K into a piece per worker
  // (66 pieces of one tile on an H200), every one summed in order.
  for (int split : {1, 16})
    for (int sk : {0, 132}) {
      GemmCase gc{256, 256, 16384};
      gc.split_k = split;
      gc.stream_k = split > 1 ? 0 : sk;
      tptest::run_gemm_case<SplitDefault, __half, __half>(gc, Reference::kExactCpu, 600);
    }
}

// tf32 (float A and B, 32-float k-tiles) through the same schedulers.
TEST(GemmSm90, Tf32SplitKAndStreamK) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  using Tf32 = tilepipe::GemmSm90<float, float, Layout::kRowMajor, Layout::kColumnMajor>;
  std::uint32_t seed = 700;
  for (GemmCase gc : {GemmCase{127, 257, 1031, Layout::kRowMajor, 1.0f, 1.0f},
                      GemmCase{16, 300, 2000, Layout::kColumnMajor, 0.5f, 0.0f, /*batch=*/2}}) {
    for (int split : {2, 5}) {
      gc.split_k = split;
      gc.stream_k = 0;
      tptest::run_gemm_case<Tf32, float, float>(gc, Reference::kExactCpu, seed++);
    }
    for (int blocks : {7, 132}) {
      gc.split_k = 1;
      gc.stream_k = blocks;
      tptest::run_gemm_case<Tf32, float, float>(gc, Reference::kExactCpu, seed++);
    }
  }
}

// The pieces of a tile are summed in k order whichever block finishes last: runs give the same
// bits, for split-K and for stream-K (whose pieces are unequal), from a workspace of garbage and
// in replays of a CUDA graph.
TEST(GemmSm90, SplitKAndStreamKAreDeterministic) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  const int m = 256, n = 512, k = 8192;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<__half> ha(std::size_t(m) * k), hb(std::size_t(k) * n);
  for (auto& x : ha) x = __float2half(u(rng));
  for (auto& x : hb) x = __float2half(u(rng));
  tptest::DeviceBuffer<__half> a(ha.size()), b(hb.size()), d(std::size_t(m) * n);
  TP_CUDA_ASSERT(a.upload(ha));
  TP_CUDA_ASSERT(b.upload(hb));
  for (int mode = 0; mode < 2; ++mode) {
    SplitDefault::Arguments args;
    args.m = m;
    args.n = n;
    args.k = k;
    args.a = a.get();
    args.lda = k;
    args.b = b.get();
    args.ldb = k;
    args.d = d.get();
    args.ldd = n;
    (mode == 0 ? args.split_k : args.stream_k) = mode == 0 ? 7 : 100;
    tptest::DeviceBuffer<unsigned char> ws(SplitDefault::workspace_size(args));
    ASSERT_GT(ws.bytes(), 0u);
    // Counters need no preparation: a workspace of garbage, then the previous launch's counters.
    TP_CUDA_ASSERT(ws.poison(0xA5));
    args.workspace = ws.get();
    args.workspace_bytes = ws.bytes();
    std::vector<__half> first, again;
    for (int run = 0; run < 3; ++run) {
      TP_CUDA_ASSERT(d.poison(0xFF));
      const tilepipe::Status s = SplitDefault::run(args);
      ASSERT_TRUE(s) << s.message();
      TP_CUDA_ASSERT(cudaDeviceSynchronize());
      TP_CUDA_ASSERT(d.download(run == 0 ? first : again));
      if (run > 0)
        ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(__half)), 0)
            << (mode == 0 ? "split-K" : "stream-K") << " run " << run;
    }
    // A CUDA graph replays the launch with its epoch: the last arrival of each tile leaves the
    // count at zero for the next replay.
    cudaStream_t stream;
    TP_CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    TP_CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const tilepipe::Status captured = SplitDefault::run(args, stream);
    TP_CUDA_ASSERT(cudaStreamEndCapture(stream, &graph));
    ASSERT_TRUE(captured) << captured.message();
    TP_CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 3; ++replay) {
      TP_CUDA_ASSERT(d.poison(0xFF));
      TP_CUDA_ASSERT(cudaGraphLaunch(exec, stream));
      TP_CUDA_ASSERT(cudaStreamSynchronize(stream));
      TP_CUDA_ASSERT(d.download(again));
      ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(__half)), 0)
          << (mode == 0 ? "split-K" : "stream-K") << " graph replay " << replay;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

// Bad split and stream-K requests and workspaces are refused, naming the argument.
TEST(GemmSm90, RefusesBadSplitArguments) {
  SplitDefault::Arguments args;
  args.m = 256;
  args.n = 256;
  args.k = 4096;
  tptest::DeviceBuffer<__half> a(256 * 4096), b(256 * 4096), d(256 * 256);
  args.a = a.get();
  args.lda = 4096;
  args.b = b.get();
  args.ldb = 4096;
  args.d = d.get();
  args.ldd = 256;
  const auto refused = [&](const char* name) {
    const tilepipe::Status s = SplitDefault::check_arguments(args);
    EXPECT_FALSE(s) << name;
    EXPECT_NE(s.message().find(name), std::string::npos) << s.message();
  };
  args.split_k = 0;
  refused("split_k");
  args.split_k = 1;
  args.stream_k = -1;
  refused("stream_k");
  args.stream_k = 8;
  args.split_k = 2;
  refused("exclude each other");
  args.stream_k = 0;
  refused("workspace");  // split_k = 2 without a workspace
  tptest::DeviceBuffer<unsigned char> ws(SplitDefault::workspace_size(args));
  args.workspace = ws.get();
  args.workspace_bytes = ws.bytes() - 1;
  refused("workspace_bytes");
  args.workspace_bytes = ws.bytes();
  EXPECT_TRUE(SplitDefault::check_arguments(args));
  args.workspace = d.get();  // overlaps D
  refused("overlaps D");
}
