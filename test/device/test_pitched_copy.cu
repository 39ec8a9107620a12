// Device tests of the pitched copy (gemm/pitched_copy.cuh) on its own, on any GPU: random
// non-zero 16-bit patterns (every element tells itself from zero-fill and from its neighbours),
// lines that start at every offset modulo 16 bytes, long lines and short ones (a warp over
// several lines), odd leading dimensions and batch strides, a shared source, the source's last
// line ending at its allocation's end (a read past it shows under compute-sanitizer). Every
// element of the copy is compared with the source, the zeros after each line checked, and every
// other byte of the destination buffer (padding beyond them, gaps between batches, guard bands
// before and after) must keep its poison. Bad parameters are refused before any launch.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tilepipe/gemm/pitched_copy.cuh>

#include "device_test_util.cuh"

namespace {

struct CopyCase {
  int lines, len;
  std::int64_t ld_src;
  int src_offset;            // elements from the source allocation's start to line 0
  int batches = 1;           // copies made
  std::int64_t src_gap = 0;  // batch_stride_src beyond lines * ld_src; -1: a shared source
  std::int64_t dst_pad = 0;  // ld_dst beyond len rounded up to 8 (a multiple of 8)
};

constexpr std::uint16_t kPoison = 0xFFFF;
constexpr std::int64_t kGuard = 128;  // poisoned elements before and after the destination

void run_copy_case(const CopyCase& cc, std::uint32_t seed) {
  SCOPED_TRACE(testing::Message() << cc.lines << " lines of " << cc.len << ", ld_src " << cc.ld_src
                                  << ", offset " << cc.src_offset << ", batches " << cc.batches
                                  << ", src gap " << cc.src_gap << ", dst pad " << cc.dst_pad);
  const bool shared = cc.src_gap < 0;
  const std::int64_t stride_src = shared ? 0 : cc.lines * cc.ld_src + cc.src_gap;
  const std::int64_t span_src = (cc.lines - 1) * cc.ld_src + cc.len;
  // The last line of the last batch ends at the allocation's end.
  const std::size_t src_size =
      cc.src_offset + std::size_t(shared ? 0 : stride_src * (cc.batches - 1)) + span_src;
  const std::int64_t rounded = (cc.len + 7) / 8 * 8;
  const std::int64_t ld_dst = rounded + cc.dst_pad;
  const std::int64_t stride_dst = cc.lines * ld_dst + 8;  // a gap of 8 between batches
  const std::size_t dst_size = 2 * kGuard + stride_dst * cc.batches;

  const std::vector<std::uint16_t> src = tptest::random_nonzero_bits(src_size, seed);
  tptest::DeviceBuffer<std::uint16_t> d_src(src_size), d_dst(dst_size);
  ASSERT_TRUE(d_src.ok() && d_dst.ok());
  TP_CUDA_ASSERT(d_src.upload(src));
  TP_CUDA_ASSERT(d_dst.poison(0xFF));

  tilepipe::PitchedCopyParams p;
  p.src = d_src.get() + cc.src_offset;
  p.ld_src = cc.ld_src;
  p.batch_stride_src = stride_src;
  p.dst = d_dst.get() + kGuard;
  p.ld_dst = ld_dst;
  p.batch_stride_dst = stride_dst;
  p.lines = cc.lines;
  p.len = cc.len;
  const tilepipe::Status s = tilepipe::detail::copy_pitched(p, cc.batches, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<std::uint16_t> dst;
  TP_CUDA_ASSERT(d_dst.download(dst));

  long long bad = 0;
  for (std::size_t i = 0; i < dst_size; ++i) {
    const std::int64_t from = static_cast<std::int64_t>(i) - kGuard;
    const std::int64_t b = from >= 0 ? from / stride_dst : -1;
    const std::int64_t in_batch = from - b * stride_dst;
    const std::int64_t line = in_batch / ld_dst, e = in_batch % ld_dst;
    std::uint16_t want = kPoison;  // outside the copies
    const char* what = "poison";
    if (b >= 0 && b < cc.batches && line < cc.lines && e < rounded) {
      want = e < cc.len ? src[cc.src_offset + b * stride_src + line * cc.ld_src + e] : 0;
      what = e < cc.len ? "the source" : "zero";
    }
    if (dst[i] != want && ++bad <= 10)
      ADD_FAILURE() << "destination element " << i << " (batch " << b << ", line " << line
                    << ", element " << e << ") = 0x" << std::hex << dst[i] << ", want " << what
                    << " 0x" << want;
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace

// Long lines (a warp on 32 chunks of one line): odd K, as the GEMM's A or B K-major.
TEST(PitchedCopy, LongOddLines) {
  run_copy_case({131, 4099, 4099, 0}, 1);
  run_copy_case({67, 4099, 4101, 1}, 2);
  run_copy_case({5, 50257, 50257, 3}, 3);
}

// Every start offset modulo 16 bytes, with lines of every alignment (odd ld) in one copy.
TEST(PitchedCopy, EveryOffset) {
  for (int offset = 0; offset < 8; ++offset) run_copy_case({9, 300, 301, offset}, 10 + offset);
  // Lines whose starts are all 16-byte aligned, with a line length of whole chunks: every chunk
  // through the two-block path without a shift, up to the end.
  run_copy_case({33, 64, 64, 0}, 20);
  run_copy_case({33, 64, 72, 8}, 21);
}

// Short lines (one to a few chunks: several lines per warp), as a column-major A with small M.
TEST(PitchedCopy, ShortLines) {
  run_copy_case({3, 1, 1, 0}, 30);
  run_copy_case({1000, 17, 19, 3}, 31);
  run_copy_case({4099, 131, 131, 1}, 32);
  run_copy_case({257, 8, 9, 5}, 33);
  run_copy_case({1, 15, 15, 1}, 34);
}

// Batches with odd source strides, a destination pitch beyond the rounded line (its padding
// stays untouched), and a source shared by all batches.
TEST(PitchedCopy, Batches) {
  run_copy_case({37, 101, 103, 1, 3, 5, 8}, 40);
  run_copy_case({64, 40, 41, 2, 4, -1, 0}, 41);
  run_copy_case({130, 7, 7, 0, 2, 1, 16}, 42);
}

TEST(PitchedCopy, BadParametersAreRefused) {
  // Nothing is dereferenced before the checks: fake addresses.
  tilepipe::PitchedCopyParams good;
  good.src = reinterpret_cast<const std::uint16_t*>(0x100002);
  good.ld_src = 101;
  good.dst = reinterpret_cast<std::uint16_t*>(0x200000);
  good.ld_dst = 104;
  good.batch_stride_dst = 104 * 10;
  good.lines = 10;
  good.len = 101;
  const auto refused = [](const tilepipe::PitchedCopyParams& p, int batches, const char* names) {
    const tilepipe::Status s = tilepipe::detail::copy_pitched(p, batches, nullptr);
    EXPECT_EQ(s.code(), tilepipe::Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find(names), std::string::npos) << s.message();
  };
  auto p = good;
  p.dst = reinterpret_cast<std::uint16_t*>(0x200008);
  refused(p, 1, "dst, ld_dst");
  p = good;
  p.ld_dst = 108;
  refused(p, 1, "dst, ld_dst");
  p = good;
  p.batch_stride_dst = 104 * 10 + 4;
  refused(p, 2, "batch_stride_dst");
  p = good;
  p.ld_dst = 96;
  refused(p, 1, "ld_dst = 96");
  p = good;
  p.ld_src = 100;
  refused(p, 1, "ld_src = 100");
  p = good;
  p.src = reinterpret_cast<const std::uint16_t*>(0x100001);
  refused(p, 1, "src is not aligned");
  refused(good, 70000, "batches = 70000");
}
