// Host tests of wgmma_descriptor.cuh: the descriptor's bits against the PTX ISA's field table
// (written out here a second time, bit by bit), and the 128-byte TMA swizzle against both the
// Ampere tier's SwizzledTileLayout and the swizzle's definition as a rule on address bits.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tilepipe/layout/swizzled_tile.cuh>
#include <tilepipe/layout/wgmma_descriptor.cuh>

namespace {

using tilepipe::WgmmaDescriptor;
using tilepipe::WgmmaSwizzle;

// ---- The descriptor ----------------------------------------------------------------------------

// The PTX ISA's matrix-descriptor table for wgmma, one row per field: first bit, width, and the
// value it holds. The reference encoder sets bits one at a time from this table, so it shares no
// shift or mask with the header.
struct Field {
  int first_bit;
  int width;
  std::uint64_t value;
};

std::uint64_t encode_reference(std::uint32_t start, std::uint32_t lbo, std::uint32_t sbo,
                               std::uint64_t swizzle_mode) {
  const Field fields[] = {{0, 14, start / 16},  // matrix start address, 16-byte units
                          {16, 14, lbo / 16},   // leading-dimension byte offset, 16-byte units
                          {32, 14, sbo / 16},   // stride-dimension byte offset, 16-byte units
                          {49, 3, 0},  // base offset: 0, the operand's atoms are 1024-byte aligned
                          {62, 2, swizzle_mode}};  // 0 none, 1 128B, 2 64B, 3 32B
  std::uint64_t bits = 0;
  for (const Field& f : fields)
    for (int b = 0; b < f.width; ++b)
      if ((f.value >> b) & 1u) bits |= std::uint64_t{1} << (f.first_bit + b);
  return bits;
}

// Every bit the table leaves reserved; a descriptor must keep them zero.
std::uint64_t reserved_bits() {
  std::uint64_t used = 0;
  for (int b = 0; b < 14; ++b)
    used |=
        (std::uint64_t{1} << b) | (std::uint64_t{1} << (16 + b)) | (std::uint64_t{1} << (32 + b));
  for (int b = 49; b < 52; ++b) used |= std::uint64_t{1} << b;
  used |= std::uint64_t{3} << 62;
  return ~used;
}

// Byte addresses and offsets a descriptor holds: small ones, the usual atom strides, odd multiples
// of 16, and the largest that fit 14 bits of 16-byte units (2^18 - 16).
const std::uint32_t kByteValues[] = {0,    16,    32,    48,     128,    1024,  2048,
                                     8192, 16400, 65536, 131056, 229360, 262128};
const WgmmaSwizzle kSwizzles[] = {WgmmaSwizzle::kNone, WgmmaSwizzle::k128B, WgmmaSwizzle::k64B,
                                  WgmmaSwizzle::k32B};

// ---- The 128-byte swizzle ----------------------------------------------------------------------

// The 128-byte swizzle as the hardware applies it to a shared-memory byte address: bits 4-6 (the
// 16-byte chunk within a 128-byte line) are XORed with bits 7-9 (the line within a 1024-byte
// block). The address is absolute, which is why a box must start 1024-byte aligned for the
// pattern to restart at its first row.
std::uint32_t swizzle128_address(std::uint32_t address) {
  return address ^ (((address >> 7) & 7u) << 4);
}

// Whether TMA's placement of a Rows x 128-byte box agrees with layout L's chunk_offset, for every
// chunk of every row of L.
template <class L>
bool tma_matches_layout() {
  for (int r = 0; r < L::kRows; ++r)
    for (int c = 0; c < L::kChunksPerRow; ++c)
      if (tilepipe::tma_swizzle128_offset(r, c) != L::chunk_offset(r, c) * 16) return false;
  return true;
}

template <int Rows>
void check_tma_box() {
  SCOPED_TRACE(testing::Message() << Rows << " rows of 128 bytes");
  // The Hopper tier's stage is this layout; the Ampere tier's epilogue and tests already trust it.
  EXPECT_TRUE((tma_matches_layout<tilepipe::SwizzledTileLayout<Rows, 64, 2>>()));
  // A bijection: two chunks on one address would be a copy overwriting its own data.
  std::vector<int> hits(Rows * 8, 0);
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < 8; ++c) {
      const int off = tilepipe::tma_swizzle128_offset(r, c);
      ASSERT_EQ(off % 16, 0);
      ASSERT_GE(off, 0);
      ASSERT_LT(off, Rows * 128);
      ++hits[off / 16];
    }
  for (int h : hits) EXPECT_EQ(h, 1);
}

}  // namespace

TEST(WgmmaDescriptor, EncodingMatchesThePtxTable) {
  // The PTX codes, not the enum's order, are what the hardware reads.
  EXPECT_EQ(static_cast<std::uint64_t>(WgmmaSwizzle::kNone), 0u);
  EXPECT_EQ(static_cast<std::uint64_t>(WgmmaSwizzle::k128B), 1u);
  EXPECT_EQ(static_cast<std::uint64_t>(WgmmaSwizzle::k64B), 2u);
  EXPECT_EQ(static_cast<std::uint64_t>(WgmmaSwizzle::k32B), 3u);
  for (std::uint32_t start : kByteValues)
    for (std::uint32_t lbo : kByteValues)
      for (std::uint32_t sbo : kByteValues)
        for (WgmmaSwizzle sw : kSwizzles) {
          const WgmmaDescriptor d = WgmmaDescriptor::make(start, lbo, sbo, sw);
          const std::uint64_t want =
              encode_reference(start, lbo, sbo, static_cast<std::uint64_t>(sw));
          ASSERT_EQ(d.bits, want) << std::hex << "start 0x" << start << " lbo 0x" << lbo
                                  << " sbo 0x" << sbo << " swizzle " << static_cast<int>(sw);
          ASSERT_EQ(d.bits & reserved_bits(), 0u);
          // The getters give back what went in, so kernels and tests can read a descriptor.
          ASSERT_EQ(d.start_address(), start);
          ASSERT_EQ(d.leading_byte_offset(), lbo);
          ASSERT_EQ(d.stride_byte_offset(), sbo);
          ASSERT_EQ(d.swizzle(), sw);
        }
}

TEST(WgmmaDescriptor, MaximalFieldsDoNotSpill) {
  // All-ones in every field: a field one bit too wide would set a reserved bit or the neighbour.
  const WgmmaDescriptor d = WgmmaDescriptor::make(262128, 262128, 262128, WgmmaSwizzle::k32B);
  EXPECT_EQ(d.bits, 0xC0003FFF3FFF3FFFull);
  EXPECT_EQ(d.bits & reserved_bits(), 0u);
  EXPECT_EQ(WgmmaDescriptor::make(0, 0, 0, WgmmaSwizzle::kNone).bits, 0u);
  // Out of contract (2^18 and up), a value is cut to its field rather than spilling into a
  // reserved bit or the next field: a bad address then reads wrong data instead of a different
  // layout or swizzle.
  const WgmmaDescriptor big =
      WgmmaDescriptor::make(0xFFFFFFF0u, 0, 0xFFFFFFF0u, WgmmaSwizzle::kNone);
  EXPECT_EQ(big.bits & reserved_bits(), 0u);
  EXPECT_EQ(big.leading_byte_offset(), 0u);
  EXPECT_EQ(big.swizzle(), WgmmaSwizzle::kNone);
}

TEST(WgmmaDescriptor, AdvancedMovesOnlyTheStartAddress) {
  // The mainloop steps through the four k-groups of a 64-wide K-major atom by moving the start
  // address 32 bytes at a time; touching LBO, SBO or the swizzle would silently change the layout.
  const std::uint64_t start_field = 0x3FFF;
  // Starts up to the last 128 bytes of a 228 KB shared memory, so all four k-groups stay inside.
  for (std::uint32_t start : {0u, 1024u, 49152u, 131072u, 233344u})
    for (WgmmaSwizzle sw : kSwizzles) {
      const WgmmaDescriptor d = WgmmaDescriptor::make(start, 16, 1024, sw);
      const WgmmaDescriptor e = d.advanced(32);
      EXPECT_EQ(e.bits & start_field, (d.bits & start_field) + 2) << start;
      EXPECT_EQ(e.bits & ~start_field, d.bits & ~start_field) << start;
      EXPECT_EQ(e.start_address(), start + 32);
      EXPECT_EQ(e.bits, WgmmaDescriptor::make(start + 32, 16, 1024, sw).bits);
      for (std::uint32_t k = 0; k < 4; ++k)
        EXPECT_EQ(d.advanced(32 * k).bits,
                  WgmmaDescriptor::make(start + 32 * k, 16, 1024, sw).bits);
    }
  // Up to the largest start the field holds, without a carry into the reserved bit 14.
  const WgmmaDescriptor top = WgmmaDescriptor::make(262096, 16, 1024, WgmmaSwizzle::k128B);
  EXPECT_EQ(top.advanced(32).start_address(), 262128u);
  EXPECT_EQ(top.advanced(32).bits & reserved_bits(), 0u);
}

TEST(WgmmaDescriptor, Sw128OperandDescriptors) {
  for (std::uint32_t address : {0u, 1024u, 32768u, 230400u - 1024u}) {
    // K-major: atoms of 8 rows follow each other densely (SBO 1024); LBO is ignored, and set to
    // PTX's canonical 1 (16 bytes) rather than 0.
    const WgmmaDescriptor k = tilepipe::kmajor_sw128_descriptor(address);
    EXPECT_EQ(k.start_address(), address);
    EXPECT_EQ(k.stride_byte_offset(), 1024u);
    EXPECT_EQ(k.leading_byte_offset(), 16u);
    EXPECT_EQ(k.swizzle(), WgmmaSwizzle::k128B);
    EXPECT_EQ(k.bits, encode_reference(address, 16, 1024, 1));
    // MN-major: SBO steps 8 k rows, LBO steps to the next 64-wide M/N block (one TMA box).
    for (std::uint32_t block : {8192u, 16384u, 32768u}) {
      const WgmmaDescriptor m = tilepipe::mnmajor_sw128_descriptor(address, block);
      EXPECT_EQ(m.start_address(), address);
      EXPECT_EQ(m.leading_byte_offset(), block);
      EXPECT_EQ(m.stride_byte_offset(), 1024u);
      EXPECT_EQ(m.swizzle(), WgmmaSwizzle::k128B);
      EXPECT_EQ(m.bits, encode_reference(address, block, 1024, 1));
    }
  }
  static_assert(tilepipe::kmajor_sw128_descriptor(1024).advanced(64).start_address() == 1088,
                "descriptors are built at compile time");
}

TEST(TmaSwizzle128, MatchesTheAmpereStageLayout) {
  check_tma_box<8>();
  check_tma_box<64>();
  check_tma_box<128>();
  check_tma_box<256>();
}

TEST(TmaSwizzle128, CheckFailsForSixtyFourByteRows) {
  // Rows of 32 f16 are 64 bytes: SwizzledTileLayout packs two rows per 128-byte line, TMA's
  // 128-byte formula assumes one, so the comparison above must reject it.
  EXPECT_FALSE((tma_matches_layout<tilepipe::SwizzledTileLayout<8, 32, 2>>()));
  EXPECT_FALSE((tma_matches_layout<tilepipe::SwizzledTileLayout<64, 32, 2>>()));
  EXPECT_FALSE((tma_matches_layout<tilepipe::SwizzledTileLayout<256, 32, 2>>()));
  // The row formula is what differs, not the rule: the 64-byte-row layout is the address-bit
  // swizzle applied to its dense row-major bytes.
  using Narrow = tilepipe::SwizzledTileLayout<64, 32, 2>;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(swizzle128_address(static_cast<std::uint32_t>(r * 64 + c * 16)),
                static_cast<std::uint32_t>(Narrow::chunk_offset(r, c) * 16));
}

TEST(TmaSwizzle128, MatchesTheAddressBitRule) {
  // Every byte of a 256-row box placed at several 1024-aligned addresses: the chunk moves as a
  // whole, and the offset from the box's start does not depend on where the box is.
  for (std::uint32_t base : {0u, 1024u, 7168u, 196608u})
    for (int r = 0; r < 256; ++r)
      for (int c = 0; c < 8; ++c)
        for (int b = 0; b < 16; b += 5) {
          const std::uint32_t plain = base + static_cast<std::uint32_t>(r * 128 + c * 16 + b);
          ASSERT_EQ(swizzle128_address(plain),
                    base + static_cast<std::uint32_t>(tilepipe::tma_swizzle128_offset(r, c) + b))
              << "base " << base << " row " << r << " chunk " << c << " byte " << b;
        }
  // The rule holds only for aligned boxes: one starting 128 bytes into a block is swizzled as if
  // its row 0 were row 1, which is why the stages are 1024-byte aligned.
  int differ = 0;
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      differ += swizzle128_address(128u + static_cast<std::uint32_t>(r * 128 + c * 16)) !=
                128u + static_cast<std::uint32_t>(tilepipe::tma_swizzle128_offset(r, c));
  EXPECT_GT(differ, 0);
}

TEST(TmaSwizzle128, KMajorDescriptorStepsLandOnTmaChunks) {
  // wgmma reads a K-major 128B-swizzled operand by computing the unswizzled address of element
  // (row, k) from the descriptor (start + (row / 8) * SBO + (row % 8) * 128 + 2k bytes) and then
  // applying the address-bit swizzle. Stepping the start by 32 bytes per k-group of 16 must reach
  // exactly the byte where TMA put that element, for every row of a 128-row stage.
  const std::uint32_t stage = 3 * 16384;  // any 1024-aligned stage base
  const WgmmaDescriptor d = tilepipe::kmajor_sw128_descriptor(stage);
  for (std::uint32_t group = 0; group < 4; ++group) {
    const WgmmaDescriptor g = d.advanced(32 * group);
    for (std::uint32_t row = 0; row < 128; ++row)
      for (std::uint32_t k = 0; k < 16; ++k) {
        const std::uint32_t plain =
            g.start_address() + (row / 8) * g.stride_byte_offset() + (row % 8) * 128 + 2 * k;
        const std::uint32_t k_byte = 32 * group + 2 * k;  // byte of the element within its row
        const std::uint32_t tma = stage +
                                  static_cast<std::uint32_t>(tilepipe::tma_swizzle128_offset(
                                      static_cast<int>(row), static_cast<int>(k_byte / 16))) +
                                  k_byte % 16;
        ASSERT_EQ(swizzle128_address(plain), tma)
            << "k-group " << group << " row " << row << " k " << k;
      }
  }
}

TEST(TmaSwizzle128, IsConstexpr) {
  static_assert(tilepipe::tma_swizzle128_offset(0, 0) == 0, "the first chunk stays in place");
  static_assert(tilepipe::tma_swizzle128_offset(1, 0) == 128 + 16, "row 1's chunk 0 moves to 1");
  static_assert(tilepipe::tma_swizzle128_offset(9, 3) == 9 * 128 + (3 ^ 1) * 16,
                "the pattern repeats every 8 rows");
  SUCCEED();
}
