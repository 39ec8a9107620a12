// Device tests of AsyncTileLoader: random matrices of odd sizes, every interior and edge tile
// (and tiles at unaligned coordinates), shared memory compared element by element with the
// source and with zeros outside the matrix.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tilepipe/tilepipe.cuh>

#include "device_test_util.cuh"

namespace {

using Element = __half;

// Each block loads the tile at (row0[b], col0[b]) into shared memory, waits for it, and writes
// the shared tile out in logical (de-swizzled) order.
template <int Rows, int Cols, int Threads>
__global__ void load_tiles_kernel(tilepipe::MatrixView<const Element> src, const int* row0,
                                  const int* col0, std::uint16_t* out) {
  using Loader = tilepipe::AsyncTileLoader<Element, Rows, Cols, Threads>;
  __shared__ typename Loader::Tile tile;  // (Rows, Cols) swizzled
  // Poison shared memory first so that a chunk the loader skips cannot look right.
  for (int i = threadIdx.x; i < Rows * Cols; i += Threads) {
    reinterpret_cast<std::uint16_t*>(tile.data)[i] = 0xDEAD;
  }
  __syncthreads();

  auto pipe = cuda::make_pipeline();
  Loader loader(src, threadIdx.x);
  loader.load(tile, row0[blockIdx.x], col0[blockIdx.x], pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  __syncthreads();

  std::uint16_t* dst = out + static_cast<std::size_t>(blockIdx.x) * Rows * Cols;
  for (int i = threadIdx.x; i < Rows * Cols; i += Threads) {
    const Element v = tile.at(i / Cols, i % Cols);
    dst[i] = reinterpret_cast<const std::uint16_t&>(v);
  }
}

struct Problem {
  int rows, cols, ld;
};

template <int Rows, int Cols, int Threads>
void run_loader_test(Problem p, std::uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "tile " << Rows << "x" << Cols << ", " << Threads
                                  << " threads, matrix " << p.rows << "x" << p.cols << " ld "
                                  << p.ld);
  // The padding between cols and ld holds a sentinel: the loader must never copy it.
  constexpr std::uint16_t kPad = 0x7E57;
  std::vector<std::uint16_t> host = tptest::random_nonzero_bits(std::size_t(p.rows) * p.ld, seed);
  for (int r = 0; r < p.rows; ++r)
    for (int c = p.cols; c < p.ld; ++c) host[std::size_t(r) * p.ld + c] = kPad;

  // Every tile of the grid (interior and edge), plus tiles at coordinates that are not
  // multiples of the tile size and tiles that start inside the last row or column chunk.
  std::vector<int> row0, col0;
  for (int r = 0; r < p.rows; r += Rows)
    for (int c = 0; c < p.cols; c += Cols) {
      row0.push_back(r);
      col0.push_back(c);
    }
  const int odd_rows[] = {1, 3, p.rows - 1, p.rows / 2 + 5};
  const int odd_cols[] = {8, 24, (p.cols - 1) / 8 * 8, p.cols / 3 / 8 * 8};
  for (int r : odd_rows)
    for (int c : odd_cols)
      if (r >= 0 && r < p.rows && c >= 0 && c < p.cols) {
        row0.push_back(r);
        col0.push_back(c);
      }
  const int tiles = static_cast<int>(row0.size());

  // The allocation ends right after the matrix's last element (no padding after the last row),
  // so any read past the matrix there is out of bounds for compute-sanitizer's memcheck.
  const std::size_t span = std::size_t(p.rows - 1) * p.ld + p.cols;
  host.resize(span);
  tptest::DeviceBuffer<std::uint16_t> d_src(span);
  tptest::DeviceBuffer<int> d_row0(tiles), d_col0(tiles);
  tptest::DeviceBuffer<std::uint16_t> d_out(std::size_t(tiles) * Rows * Cols);
  ASSERT_TRUE(d_src.ok() && d_row0.ok() && d_col0.ok() && d_out.ok());
  TP_CUDA_ASSERT(d_src.upload(host));
  TP_CUDA_ASSERT(d_row0.upload(row0));
  TP_CUDA_ASSERT(d_col0.upload(col0));
  TP_CUDA_ASSERT(d_out.poison());

  tilepipe::MatrixView<const Element> view{reinterpret_cast<const Element*>(d_src.get()), p.rows,
                                           p.cols, p.ld};
  load_tiles_kernel<Rows, Cols, Threads>
      <<<tiles, Threads>>>(view, d_row0.get(), d_col0.get(), d_out.get());
  TP_CUDA_ASSERT_LAUNCH();

  std::vector<std::uint16_t> out;
  TP_CUDA_ASSERT(d_out.download(out));
  EXPECT_EQ(tptest::count_tile_mismatches(out, host, p.rows, p.cols, p.ld, row0, col0, Rows, Cols),
            0);
}

}  // namespace

// K-contiguous operand tiles ([MN][K]): 128 x 32 and 64 x 64.
TEST(AsyncTileLoader, KContiguousTilesOddMatrix) {
  run_loader_test<128, 32, 128>({301, 131, 136}, 1);
  run_loader_test<128, 32, 256>({77, 45, 48}, 2);
  run_loader_test<64, 64, 128>({200, 257, 264}, 3);
}

// MN-contiguous operand tiles ([K][MN]): 32 x 128 and 16 x 256.
TEST(AsyncTileLoader, MNContiguousTilesOddMatrix) {
  run_loader_test<32, 128, 128>({131, 301, 304}, 4);
  run_loader_test<16, 256, 256>({45, 77, 80}, 5);
}

// Fewer chunks than threads, and matrices smaller than one tile.
TEST(AsyncTileLoader, SmallTilesAndTinyMatrices) {
  run_loader_test<16, 16, 128>({37, 29, 32}, 6);
  run_loader_test<128, 32, 128>({1, 1, 8}, 7);
  run_loader_test<32, 128, 128>({5, 3, 8}, 8);
}

// Exact multiples of the tile (the unpredicated fast path only) with a padded leading dimension.
TEST(AsyncTileLoader, ExactMultiples) {
  run_loader_test<128, 32, 128>({256, 96, 104}, 9);
  run_loader_test<32, 128, 128>({64, 256, 256}, 10);
}
