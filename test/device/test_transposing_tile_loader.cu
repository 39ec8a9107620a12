// Device tests of TransposingTileLoader: random f32 matrices of odd sizes and leading dimensions,
// every interior and edge tile and tiles at odd coordinates, through each of its paths (`load`,
// `load_masked` with row and column masks, `load_interior` in shares); the transposed shared tile
// compared element by element, bit for bit, with the source and with zeros outside the matrix.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tilepipe/tilepipe.cuh>

#include "device_test_util.cuh"

namespace {

enum class Path { kLoad, kMaskRows, kMaskCols, kInterior };

// Each block loads the source tile at (row0[b], col0[b]) by `path` into shared memory, waits for
// it, and writes the shared tile out in logical order: out element (r, c) of a block is shared
// element (c, r), which must be source element (row0 + r, col0 + c).
template <int Rows, int Cols, int Threads>
__global__ void transpose_tiles_kernel(tilepipe::MatrixView<const float> src, const int* row0,
                                       const int* col0, Path path, std::uint32_t* out) {
  using Loader = tilepipe::TransposingTileLoader<Rows, Cols, Threads>;
  __shared__ typename Loader::Tile tile;  // (Cols, Rows) swizzled
  // Poison shared memory first so that an element the loader skips cannot look right.
  for (int i = threadIdx.x; i < Rows * Cols; i += Threads)
    reinterpret_cast<std::uint32_t*>(tile.data)[i] = 0xDEADBEEFu;
  __syncthreads();

  auto pipe = cuda::make_pipeline();
  const Loader loader(src, threadIdx.x);
  const int r0 = row0[blockIdx.x], c0 = col0[blockIdx.x];
  switch (path) {
    case Path::kLoad: loader.load(tile, r0, c0, pipe); break;
    case Path::kMaskRows: loader.load_masked(tile, r0, c0, loader.mask_rows(r0), pipe); break;
    case Path::kMaskCols: loader.load_masked(tile, r0, c0, loader.mask_cols(c0), pipe); break;
    case Path::kInterior:  // in three shares, as a mainloop spreads them over its k-blocks
      for (int share = 0; share < 3; ++share) loader.load_interior(tile, r0, c0, pipe, share, 3);
      break;
  }
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  __syncthreads();

  std::uint32_t* dst = out + static_cast<std::size_t>(blockIdx.x) * Rows * Cols;
  for (int i = threadIdx.x; i < Rows * Cols; i += Threads)
    dst[i] = __float_as_uint(tile.at(i % Cols, i / Cols));
}

struct Problem {
  int rows, cols, ld;
};

// The tiles each path may take: `load` any; a row mask tiles whose columns lie inside the matrix;
// a column mask tiles whose rows do; `load_interior` tiles wholly inside.
template <int Rows, int Cols>
bool path_takes(Path path, Problem p, int r0, int c0) {
  switch (path) {
    case Path::kLoad: return true;
    case Path::kMaskRows: return c0 + Cols <= p.cols;
    case Path::kMaskCols: return r0 + Rows <= p.rows;
    case Path::kInterior: return r0 + Rows <= p.rows && c0 + Cols <= p.cols;
  }
  return false;
}

template <int Rows, int Cols, int Threads>
void run_transpose_test(Problem p, Path path, std::uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "source tile " << Rows << "x" << Cols << ", " << Threads
                                  << " threads, matrix " << p.rows << "x" << p.cols << " ld "
                                  << p.ld << ", path " << static_cast<int>(path));
  // The padding between cols and ld holds a sentinel: the loader must never copy it.
  constexpr std::uint32_t kPad = 0x7E57BEEFu;
  std::vector<std::uint32_t> host = tptest::random_nonzero_bits32(std::size_t(p.rows) * p.ld, seed);
  for (int r = 0; r < p.rows; ++r)
    for (int c = p.cols; c < p.ld; ++c) host[std::size_t(r) * p.ld + c] = kPad;

  std::vector<int> row0, col0;
  auto add = [&](int r, int c) {
    if (r >= 0 && r < p.rows && c >= 0 && c < p.cols && path_takes<Rows, Cols>(path, p, r, c)) {
      row0.push_back(r);
      col0.push_back(c);
    }
  };
  for (int r = 0; r < p.rows; r += Rows)
    for (int c = 0; c < p.cols; c += Cols) add(r, c);
  for (int r : {1, 3, p.rows - Rows, p.rows - 1, p.rows / 2 + 5})
    for (int c : {1, 7, p.cols - Cols, p.cols - 1, p.cols / 3}) add(r, c);
  const int tiles = static_cast<int>(row0.size());
  if (tiles == 0) return;  // the path takes no tile of this matrix (path_takes); another does

  // The allocation ends right after the matrix's last element, so that memcheck sees any read
  // past the matrix.
  const std::size_t span = std::size_t(p.rows - 1) * p.ld + p.cols;
  host.resize(span);
  tptest::DeviceBuffer<std::uint32_t> d_src(span);
  tptest::DeviceBuffer<int> d_row0(tiles), d_col0(tiles);
  tptest::DeviceBuffer<std::uint32_t> d_out(std::size_t(tiles) * Rows * Cols);
  ASSERT_TRUE(d_src.ok() && d_row0.ok() && d_col0.ok() && d_out.ok());
  TP_CUDA_ASSERT(d_src.upload(host));
  TP_CUDA_ASSERT(d_row0.upload(row0));
  TP_CUDA_ASSERT(d_col0.upload(col0));
  TP_CUDA_ASSERT(d_out.poison());

  tilepipe::MatrixView<const float> view{reinterpret_cast<const float*>(d_src.get()), p.rows,
                                         p.cols, p.ld};
  transpose_tiles_kernel<Rows, Cols, Threads>
      <<<tiles, Threads>>>(view, d_row0.get(), d_col0.get(), path, d_out.get());
  TP_CUDA_ASSERT_LAUNCH();

  std::vector<std::uint32_t> out;
  TP_CUDA_ASSERT(d_out.download(out));
  EXPECT_EQ(tptest::count_tile_mismatches(out, host, p.rows, p.cols, p.ld, row0, col0, Rows, Cols),
            0);
}

template <int Rows, int Cols, int Threads>
void run_every_path(Problem p, std::uint32_t seed) {
  for (Path path : {Path::kLoad, Path::kMaskRows, Path::kMaskCols, Path::kInterior})
    run_transpose_test<Rows, Cols, Threads>(p, path, seed + static_cast<std::uint32_t>(path));
}

}  // namespace

// The f32 default tile's operands (128 x 32 source tiles, 256 threads: offsets that translate).
TEST(TransposingTileLoader, DefaultTileOddMatrix) {
  run_every_path<128, 32, 256>({301, 131, 133}, 1);
  run_every_path<128, 32, 256>({77, 45, 45}, 10);
}

// 4 warps: bands of 16 rows, whose shared offsets do not translate (the general formula).
TEST(TransposingTileLoader, FourWarpsOddMatrix) {
  run_every_path<64, 32, 128>({200, 97, 101}, 20);
  run_every_path<32, 32, 128>({37, 29, 29}, 30);
}

// Matrices smaller than one tile (only `load` takes their tiles), and exact multiples of the tile.
TEST(TransposingTileLoader, TinyMatricesAndExactMultiples) {
  run_transpose_test<128, 32, 256>({1, 1, 1}, Path::kLoad, 40);
  run_transpose_test<32, 32, 128>({5, 3, 3}, Path::kLoad, 41);
  run_every_path<128, 32, 256>({256, 96, 96}, 50);
}
