#pragma once
//! \file
//! CopyWorkspace: where the Hopper tier's copies of A and B lie in a GEMM's workspace, and where
//! the GEMM's own part begins after them. TMA needs strides that are multiples of 16 bytes, so an
//! operand it cannot address as given (tf32 in an M- or N-major layout, a 16-bit operand that is
//! not 16-byte aligned) is copied first: as lines of `len` contiguous elements whose pitch is
//! `len` rounded up to 16 bytes, once per batch or once for all. Each part starts on 256 bytes.

#include <cstddef>
#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe {

//! What one copy holds: `lines` lines of `len` elements, one copy per batch where `batched`,
//! else one for all batches. `lines == 0` or `len == 0`: no copy.
struct CopyShape {
  std::int64_t lines = 0, len = 0;
  bool batched = false;
};

//! Where one copy lies in the workspace.
struct CopyPlacement {
  std::int64_t ld = 0;            //!< elements between lines: `len` rounded up to 16 bytes
  std::int64_t batch_stride = 0;  //!< elements between the batches' copies; 0: one copy
  std::size_t offset = 0;         //!< bytes from the workspace's start
  std::size_t bytes = 0;          //!< 0 where the operand is not copied

  TILEPIPE_HOST_DEVICE constexpr bool copied() const { return bytes > 0; }
};

//! The layout of a workspace: A's copy, B's copy, then the GEMM's own part (split-K's partials,
//! say), each at a multiple of kAlign bytes; parts that are absent take no room.
struct CopyWorkspace {
  static constexpr std::size_t kAlign = 256;
  CopyPlacement a, b;
  std::size_t gemm_offset = 0;  //!< bytes from the start to the GEMM's own part
  std::size_t bytes = 0;        //!< the whole workspace

  TILEPIPE_HOST_DEVICE constexpr bool copies() const { return a.copied() || b.copied(); }

  //! The copies of shapes `a` and `b` of `element_bytes`-byte elements for `batches` batches,
  //! followed by `gemm_bytes` bytes for the GEMM itself.
  TILEPIPE_HOST_DEVICE static constexpr CopyWorkspace make(CopyShape a, CopyShape b,
                                                           int element_bytes, int batches,
                                                           std::size_t gemm_bytes = 0) {
    CopyWorkspace w;
    w.a = place(a, element_bytes, batches, 0);
    w.b = place(b, element_bytes, batches, round_up(w.a.bytes));
    w.gemm_offset = round_up(w.copies_end());
    return w.with_gemm_bytes(gemm_bytes);
  }

  //! The same copies, followed by `gemm_bytes` bytes for the GEMM itself.
  TILEPIPE_HOST_DEVICE constexpr CopyWorkspace with_gemm_bytes(std::size_t gemm_bytes) const {
    CopyWorkspace w = *this;
    w.bytes = gemm_bytes > 0 ? gemm_offset + gemm_bytes : copies_end();
    return w;
  }

 private:
  TILEPIPE_HOST_DEVICE constexpr std::size_t copies_end() const {
    return b.copied() ? b.offset + b.bytes : a.bytes;
  }

  TILEPIPE_HOST_DEVICE static constexpr std::size_t round_up(std::size_t x) {
    return (x + kAlign - 1) / kAlign * kAlign;
  }

  TILEPIPE_HOST_DEVICE static constexpr CopyPlacement place(CopyShape s, int element_bytes,
                                                            int batches, std::size_t offset) {
    CopyPlacement p;
    if (s.lines <= 0 || s.len <= 0 || batches <= 0) return p;
    const std::int64_t per_16_bytes = 16 / element_bytes;
    p.ld = (s.len + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
    const bool batched = s.batched && batches > 1;
    p.batch_stride = batched ? s.lines * p.ld : 0;
    p.offset = offset;
    p.bytes = static_cast<std::size_t>(s.lines * p.ld * (batched ? batches : 1)) * element_bytes;
    return p;
  }
};

}  // namespace tilepipe
