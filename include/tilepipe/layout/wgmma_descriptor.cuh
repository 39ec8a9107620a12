#pragma once
//! \file
//! The shared-memory layout that TMA writes with 128-byte swizzling and wgmma reads, and the
//! 64-bit matrix descriptor that tells wgmma where that layout is.
//!
//! **The layout.** A TMA box whose contiguous extent is 128 bytes (64 f16/bf16 elements), copied
//! with `CU_TENSOR_MAP_SWIZZLE_128B` into a 1024-byte aligned buffer, puts 16-byte chunk `c` of
//! row `r` at byte `r * 128 + ((c ^ (r % 8)) * 16)`: the chunk index is XORed with the row's
//! position in its group of eight 128-byte lines. That is exactly `SwizzledTileLayout<Rows, 64>`
//! (host-tested), the Ampere tier's stage layout, so both tiers share one picture of a stage.
//!
//! **The descriptor** (PTX ISA, "Matrix Descriptor Format" of the asynchronous warpgroup MMA):
//!
//! | bits  | field                                                     |
//! | ----- | --------------------------------------------------------- |
//! | 0-13  | start address in shared memory, in 16-byte units          |
//! | 16-29 | leading-dimension byte offset (LBO), in 16-byte units     |
//! | 32-45 | stride-dimension byte offset (SBO), in 16-byte units      |
//! | 49-51 | base offset (0: the swizzle pattern starts 1024-aligned)  |
//! | 62-63 | swizzle mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte    |
//!
//! With the 128-byte swizzle an operand is made of 1024-byte atoms of 8 rows x 128 bytes.
//! - K-major (K contiguous: A row-major, B column-major): an atom is 8 M/N rows x 64 k; SBO is
//!   the step between atoms along M/N (1024 bytes when the rows are dense) and LBO is unused.
//!   The k-th group of 16 elements starts 32 * k bytes into the row: the start address moves,
//!   the hardware applies the swizzle to the final address.
//! - MN-major (M/N contiguous: A column-major, B row-major): an atom is 8 k rows x 64 M/N; SBO is
//!   the step between atoms along K (1024 bytes) and LBO the step between 64-wide M/N blocks
//!   (one TMA box each). The k-th group of 16 k rows starts 16 * 128 * k bytes in.

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe {

//! Byte offset of 16-byte chunk `chunk` of row `row` in a 128-byte swizzled TMA box (rows of
//! 128 bytes, the box 1024-byte aligned).
TILEPIPE_HOST_DEVICE constexpr int tma_swizzle128_offset(int row, int chunk) {
  return row * 128 + ((chunk ^ (row % 8)) * 16);
}

//! Swizzle modes of the descriptor's bits 62-63.
enum class WgmmaSwizzle : std::uint64_t { kNone = 0, k128B = 1, k64B = 2, k32B = 3 };

//! A wgmma shared-memory matrix descriptor (see the file comment for the fields).
struct WgmmaDescriptor {
  std::uint64_t bits = 0;

  //! Encodes a descriptor. Addresses and offsets are bytes; each must be a multiple of 16 and
  //! below 2^18 (shared memory is at most 228 KB).
  TILEPIPE_HOST_DEVICE static constexpr WgmmaDescriptor make(std::uint32_t start_address,
                                                             std::uint32_t leading_byte_offset,
                                                             std::uint32_t stride_byte_offset,
                                                             WgmmaSwizzle swizzle) {
    return WgmmaDescriptor{field(start_address) | (field(leading_byte_offset) << 16) |
                           (field(stride_byte_offset) << 32) |
                           (static_cast<std::uint64_t>(swizzle) << 62)};
  }

  //! The descriptor of the same layout `bytes` further on (the next k-group of 16). `bytes` must
  //! be a multiple of 16 and keep the address inside shared memory.
  TILEPIPE_HOST_DEVICE constexpr WgmmaDescriptor advanced(std::uint32_t bytes) const {
    return WgmmaDescriptor{bits + (bytes >> 4)};
  }
  //! The same, the sum formed in the low 32 bits alone: the start address (bits 0-13) of any
  //! shared-memory address cannot carry out of them, and the compiler then needs no carry chain.
  TILEPIPE_HOST_DEVICE constexpr WgmmaDescriptor advanced_in_low_word(std::uint32_t bytes) const {
    const std::uint32_t low = static_cast<std::uint32_t>(bits) + (bytes >> 4);
    return WgmmaDescriptor{(bits & 0xFFFFFFFF00000000ull) | low};
  }

  TILEPIPE_HOST_DEVICE constexpr std::uint32_t start_address() const {
    return static_cast<std::uint32_t>(bits & 0x3FFF) << 4;
  }
  TILEPIPE_HOST_DEVICE constexpr std::uint32_t leading_byte_offset() const {
    return static_cast<std::uint32_t>((bits >> 16) & 0x3FFF) << 4;
  }
  TILEPIPE_HOST_DEVICE constexpr std::uint32_t stride_byte_offset() const {
    return static_cast<std::uint32_t>((bits >> 32) & 0x3FFF) << 4;
  }
  TILEPIPE_HOST_DEVICE constexpr WgmmaSwizzle swizzle() const {
    return static_cast<WgmmaSwizzle>(bits >> 62);
  }

 private:
  TILEPIPE_HOST_DEVICE static constexpr std::uint64_t field(std::uint32_t bytes) {
    return (bytes >> 4) & 0x3FFF;
  }
};

//! Descriptor of a K-major operand in 128-byte swizzled atoms, dense along M/N.
TILEPIPE_HOST_DEVICE constexpr WgmmaDescriptor kmajor_sw128_descriptor(std::uint32_t address) {
  // LBO is unused by swizzled K-major layouts; PTX's canonical value for it is 1 (16 bytes).
  return WgmmaDescriptor::make(address, 16, 1024, WgmmaSwizzle::k128B);
}

//! Descriptor of an MN-major operand in 128-byte swizzled atoms whose 64-wide M/N blocks are
//! `block_bytes` apart.
TILEPIPE_HOST_DEVICE constexpr WgmmaDescriptor mnmajor_sw128_descriptor(std::uint32_t address,
                                                                        std::uint32_t block_bytes) {
  return WgmmaDescriptor::make(address, block_bytes, 1024, WgmmaSwizzle::k128B);
}

}  // namespace tilepipe
