#pragma once
//! \file
//! A minimal PNG writer for the trace renderer (render.hpp): 8-bit RGB, stored (uncompressed)
//! deflate blocks, so it needs no zlib. Host-only C++17.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tilepipe::trace::detail {

inline void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {  // big-endian, as PNG wants
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

//! CRC-32 (the PNG/zlib polynomial). The table is built at first use; C++11 makes that thread-safe.
inline std::uint32_t crc32(const std::uint8_t* data, std::size_t n) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

inline void append_chunk(std::vector<std::uint8_t>& png, const char* type,
                         const std::vector<std::uint8_t>& data) {
  put_u32(png, static_cast<std::uint32_t>(data.size()));
  const std::size_t start = png.size();  // the CRC covers the type and the data, not the length
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), data.begin(), data.end());
  put_u32(png, crc32(png.data() + start, png.size() - start));
}

//! An 8-bit RGB PNG of `rgb` (row-major, 3 bytes a pixel). The deflate stream uses stored blocks
//! only: a few times larger than compressed, but tiny code and nothing to get subtly wrong.
inline std::vector<std::uint8_t> encode_png(const std::vector<std::uint8_t>& rgb, int width,
                                            int height) {
  const std::size_t row_bytes = 3 * static_cast<std::size_t>(width);
  std::vector<std::uint8_t> raw;  // each scanline starts with its filter type: 0, no prediction
  raw.reserve(height * (row_bytes + 1));
  for (int y = 0; y < height; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), rgb.begin() + y * row_bytes, rgb.begin() + (y + 1) * row_bytes);
  }
  std::vector<std::uint8_t> z = {
      0x78, 0x01};  // deflate, 32 KiB window; 0x7801 % 31 == 0 as zlib requires
  std::size_t pos = 0;
  do {  // a stored block: a byte-aligned header (BFINAL, BTYPE 00), LEN, ~LEN (little-endian), data
    const std::size_t len = std::min<std::size_t>(65535, raw.size() - pos);
    z.push_back(pos + len == raw.size() ? 1 : 0);
    for (std::size_t v : {len, ~len}) {
      z.push_back(static_cast<std::uint8_t>(v));
      z.push_back(static_cast<std::uint8_t>(v >> 8));
    }
    z.insert(z.end(), raw.begin() + pos, raw.begin() + pos + len);
    pos += len;
  } while (pos < raw.size());
  std::uint32_t a = 1, b = 0;  // Adler-32 of the uncompressed data ends the zlib stream
  for (std::uint8_t byte : raw) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  put_u32(z, (b << 16) | a);

  std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<std::uint8_t> ihdr;
  put_u32(ihdr, static_cast<std::uint32_t>(width));
  put_u32(ihdr, static_cast<std::uint32_t>(height));
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8 bits, RGB, deflate, filter method 0, no interlace
  append_chunk(png, "IHDR", ihdr);
  append_chunk(png, "IDAT", z);
  append_chunk(png, "IEND", {});
  return png;
}

}  // namespace tilepipe::trace::detail
