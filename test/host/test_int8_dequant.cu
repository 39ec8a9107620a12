// Host tests of the int8 -> f16 / bf16 conversion of numeric/int8_dequant.cuh and of the sm_80
// e4m3 -> f16 conversion of numeric/e4m3_dequant.cuh: their constants, replayed through a model of
// `prmt` (PTX ISA: byte i of the result is byte `sel >> 4i & 7` of {b, a}), give every q of
// -128 .. 127, and every e4m3 but NaN, exactly, in all four bytes of a register (either pair); the
// products with a scale then round once.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include <tilepipe/numeric/e4m3_dequant.cuh>
#include <tilepipe/numeric/int8_dequant.cuh>

namespace {

using namespace tilepipe::int8_magic;

std::uint32_t prmt_model(std::uint32_t a, std::uint32_t b, std::uint32_t sel) {
  const std::uint64_t bytes = (std::uint64_t(b) << 32) | a;
  std::uint32_t d = 0;
  for (int i = 0; i < 4; ++i)
    d |= std::uint32_t((bytes >> (8 * ((sel >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return d;
}

float half_bits(std::uint32_t bits) {
  __half_raw r;
  r.x = static_cast<unsigned short>(bits);
  return __half2float(__half(r));
}
float f32_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The four bytes of a register, q0 .. q3 (q1 and q3 run the other way), through the one bias XOR of
// the whole register and the selector of pair 0 (bytes 0, 1) or pair 1 (bytes 2, 3).
std::uint32_t four_bytes(int q0, int q1) {
  return std::uint32_t(std::uint8_t(q0)) | std::uint32_t(std::uint8_t(q1)) << 8 |
         std::uint32_t(std::uint8_t(q1)) << 16 | std::uint32_t(std::uint8_t(q0)) << 24;
}

TEST(Int8Dequant, F16MagicIsExactForEveryByte) {
  const float offset = half_bits(kF16Offset & 0xFFFF);
  EXPECT_EQ(offset, 1152.0f);
  EXPECT_EQ(half_bits(kF16Offset >> 16), 1152.0f);
  for (int q0 = -128; q0 < 128; ++q0) {
    const int q1 = 127 - (q0 + 128);  // the other byte runs the other way
    const std::uint32_t biased = four_bytes(q0, q1) ^ 0x80808080u;
    for (int pair = 0; pair < 2; ++pair) {
      const std::uint32_t magic =
          prmt_model(biased, kF16Exponent, kF16Selector + pair * kF16PairStep);
      // Each half is 1024 + 128 + q, an f16 integer (exact), so the subtraction leaves q exactly.
      EXPECT_EQ(half_bits(magic & 0xFFFF) - offset, float(pair == 0 ? q0 : q1));
      EXPECT_EQ(half_bits(magic >> 16) - offset, float(pair == 0 ? q1 : q0));
    }
  }
}

TEST(Int8Dequant, F32MagicIsExactForEveryByte) {
  for (int q0 = -128; q0 < 128; ++q0) {
    const int q1 = -1 - q0;
    const std::uint32_t biased = four_bytes(q0, q1) ^ 0x80808080u;
    for (int pair = 0; pair < 2; ++pair) {
      EXPECT_EQ(f32_bits(prmt_model(biased, kF32Exponent, kF32Selector0 + 2 * pair)) - kF32Offset,
                float(pair == 0 ? q0 : q1));
      EXPECT_EQ(
          f32_bits(prmt_model(biased, kF32Exponent, kF32Selector0 + 2 * pair + 1)) - kF32Offset,
          float(pair == 0 ? q1 : q0));
    }
  }
}

// The bf16 path's fma, m * s - (2^23 + 128) * s, is q * s exactly for every q and every bf16 scale
// of a wide range of exponents (both signs): the subtrahend is exact in f32, and so is q * s.
TEST(Int8Dequant, Bf16FmaIsExactForEveryByteAndScale) {
  for (int e = -40; e <= 40; e += 5) {
    for (int mantissa = 0; mantissa < 128; mantissa += 7) {
      for (int sign = -1; sign <= 1; sign += 2) {
        const float s = sign * std::ldexp(1.0f + mantissa / 128.0f, e);  // 8 significant bits
        const float offset = -kF32Offset * s;
        EXPECT_EQ(double(offset), -double(kF32Offset) * double(s));
        for (int q = -128; q < 128; ++q) {
          const float m = f32_bits(
              prmt_model(std::uint32_t(std::uint8_t(q)) ^ 0x80u, kF32Exponent, kF32Selector0));
          EXPECT_EQ(std::fma(m, s, offset), float(q) * s) << "q " << q << ", scale " << s;
        }
      }
    }
  }
}

// Each e4m3 bit pattern b0 (low byte) and b1 (high byte), through prmt, the shift and the masks,
// is the f16 of its value / 256; times 256 (exact) its value. NaN (S.1111.111) is not kept.
TEST(E4M3Dequant, Sm80BitsAreExactForEveryValue) {
  using namespace tilepipe::e4m3_magic;
  EXPECT_EQ(half_bits(kBiasRatio & 0xFFFF), 256.0f);
  EXPECT_EQ(half_bits(kBiasRatio >> 16), 256.0f);
  for (int b0 = 0; b0 < 256; ++b0) {
    if ((b0 & 0x7F) == 0x7F) continue;
    const int b1 = 255 - b0 == 0x7F || 255 - b0 == 0xFF ? 0 : 255 - b0;
    __nv_fp8_e4m3 e0, e1;
    e0.__x = static_cast<__nv_fp8_storage_t>(b0);
    e1.__x = static_cast<__nv_fp8_storage_t>(b1);
    for (int pair = 0; pair < 2; ++pair) {  // the pair in bytes 0, 1, then in bytes 2, 3
      const std::uint32_t raw = pair == 0
                                    ? std::uint32_t(b0) | std::uint32_t(b1) << 8 | 0x5A5A0000u
                                    : std::uint32_t(b0) << 16 | std::uint32_t(b1) << 24 | 0xA5A5u;
      const std::uint32_t spread = prmt_model(raw, 0u, kSpread + pair * kSpreadPairStep);
      const std::uint32_t bits = (spread & kSignBits) | ((spread >> 1) & kMagnitudeBits);
      EXPECT_EQ(half_bits(bits & 0xFFFF) * 256.0f, static_cast<float>(e0)) << "e4m3 bits " << b0;
      EXPECT_EQ(half_bits(bits >> 16) * 256.0f, static_cast<float>(e1)) << "e4m3 bits " << b1;
    }
  }
}

// q * scale is exact in f32 for 16-bit scales (8 + 11 significant bits at most), so rounding it
// to the element type once is what the f16x2 multiply (correctly rounded) and the f32 multiply
// followed by cvt.rn.bf16x2 both give.
TEST(Int8Dequant, ProductsOfBytesAndScalesAreExactInF32) {
  for (float s : {0.00390625f, -0.0123291015625f, 0.333251953125f, 1.5f, -7.99609375f}) {
    const double ds = __half2float(__float2half_rn(s));
    for (int q = -128; q < 128; ++q) EXPECT_EQ(double(float(q) * float(ds)), double(q) * ds);
  }
}

}  // namespace
