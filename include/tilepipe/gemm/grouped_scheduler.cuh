#pragma once
//! \file
//! GroupedScheduler: the work of a grouped GEMM for the persistent Hopper kernel (GemmKernelSm90's
//! scheduler seam): `G` problems of one N and K whose row counts are known only on the device
//! (a mixture-of-experts layer after routing). Every block builds, once at kernel start, the
//! running count of work items per group in shared memory from the device sizes; a work item is
//! then found by a binary search in that table, so that one persistent grid walks every group's
//! tiles with no host read of the sizes (one launch, capturable in a CUDA graph).
//!
//! Whatever the sizes hold, each group's rows are clamped into the operands: contiguous, group g
//! is rows `[clamp(offs[g-1]), max(that, clamp(offs[g])))` with `clamp` to `[0, rows]` and
//! `offs[-1] = 0`; masked, rows `[0, clamp(counts[g]))` of its batch with `clamp` to
//! `[0, rows]` (a pointer-array GEMM's too, whose row counts its preparing kernel has checked:
//! gemm_grouped_pointer_array.cuh). A size that needed clamping (negative, past `rows`, or an
//! offset before the previous one) is reported: block 0 writes the optional status word.

#include <climits>

#include "../detail/macros.cuh"
#include "../layout/tile_raster.cuh"

namespace tilepipe {

//! How a grouped GEMM's A and D hold the groups' rows.
enum class GroupedForm : int {
  kContiguous,  //!< A is `[rows, K]`, D `[rows, N]`; group g ends at row `offs[g]` (its start is
                //!< the previous group's end): `torch._grouped_mm`'s convention
  kMasked,      //!< A is `[G, rows, K]`, D `[G, rows, N]`; group g has `counts[g]` valid rows
                //!< (a pointer-array GEMM's groups too: GroupedPointerArrays)
};

//! A group's rows of A and D after clamping, and whether its size needed the clamp.
struct GroupRows {
  int begin, end;
  bool bad;
};

//! The rows of a group whose size (an offset or a count, as `form` says) is `size`, after a
//! previous offset `prev` (contiguous only; 0 for the first group), in operands of `rows` rows.
TILEPIPE_HOST_DEVICE constexpr GroupRows group_rows(GroupedForm form, int prev, int size,
                                                    int rows) {
  const int end = size < 0 ? 0 : size > rows ? rows : size;
  if (form == GroupedForm::kMasked) return GroupRows{0, end, size < 0 || size > rows};
  const int begin = prev < 0 ? 0 : prev > rows ? rows : prev;
  return GroupRows{begin, end < begin ? begin : end, size < 0 || size > rows || size < prev};
}

//! One unit of a grouped GEMM's work: a work item (`ClusterM` tiles of one column, one per block
//! of a cluster) of group `group`, all of its k-tiles.
struct GroupedUnit {
  int group;
  int row0;     //!< the item's first row in A and D (the cluster's rank 0)
  int n0;       //!< its first column
  int row_end;  //!< the group's end: rows from here on belong to no tile of it and are not stored
  int batch_d;  //!< D's batch coordinate: the group where D is `[G, rows, N]`, else 0
  int k_begin, k_end;
};

//! \tparam TileM, TileN  a block's tile
//! \tparam ClusterM      blocks of a cluster, which take `ClusterM` tiles of one column per item
//! \tparam Raster        the order of a group's items (`GroupedRaster<8>`)
//! \tparam MaxGroups     the most groups (the shared table's entries; a multiple of 32)
template <int TileM, int TileN, int ClusterM, class Raster, int MaxGroups>
struct GroupedScheduler {
  static_assert(MaxGroups % 32 == 0 && MaxGroups > 0,
                "GroupedScheduler: MaxGroups must be a positive multiple of 32 (a warp builds the "
                "table, MaxGroups / 32 groups per lane)");
  static constexpr int kMaxGroups = MaxGroups;

  //! The items of groups `0..g`, for every group: built by `build`, read by `Walk`.
  struct SharedStorage {
    int items_through[MaxGroups];
  };

  GroupedForm form = GroupedForm::kContiguous;
  const int* sizes = nullptr;  //!< on the device: `offs` (contiguous) or `counts` (masked)
  int groups = 0;              //!< G, in `[1, MaxGroups]`
  int rows = 0;                //!< contiguous: rows of A and D; masked: rows of each group's
  int items_n = 0;             //!< work items along N
  int k_tiles = 0;             //!< k-tiles of every item
  int workers = 1;             //!< persistent workers (clusters) of the grid
  int* status = nullptr;       //!< optional: 0, or 1 + the first group whose size was clamped
  //! Optional (ClusterM = 1): a counter in global memory, zero when the launch starts. With it
  //! the blocks claim work items on demand rather than each taking every `workers`-th (`Walk`).
  unsigned* claims = nullptr;

  //! Work items of a group of `r` rows.
  TILEPIPE_HOST_DEVICE constexpr int items_of(int r) const {
    return ((r + TileM - 1) / TileM + ClusterM - 1) / ClusterM * items_n;
  }

  //! One whole warp: fills `t` from the sizes (each lane `MaxGroups / 32` consecutive groups,
  //! all their sizes loaded at once), and in block 0 writes the status. The block synchronises
  //! before reading `t`.
  TILEPIPE_DEVICE void build(SharedStorage& t) const {
    constexpr int kPer = MaxGroups / 32;
    const int lane = static_cast<int>(threadIdx.x % 32);
    const int g0 = lane * kPer;
    int raw[kPer + 1];  // raw[i]: the size of group g0 - 1 + i (0 before group 0 and past G)
    TILEPIPE_UNROLL
    for (int i = 0; i <= kPer; ++i) {
      const int g = g0 - 1 + i;
      raw[i] = g >= 0 && g < groups ? __ldg(sizes + g) : 0;
    }
    int items[kPer];
    int sum = 0, first_bad = INT_MAX;
    TILEPIPE_UNROLL
    for (int i = 0; i < kPer; ++i) {
      const GroupRows r = group_rows(form, raw[i], raw[i + 1], rows);
      const bool in = g0 + i < groups;
      items[i] = in ? items_of(r.end - r.begin) : 0;
      sum += items[i];
      if (in && r.bad && first_bad == INT_MAX) first_bad = g0 + i;
    }
    int before = sum;  // the lanes' inclusive scan, then less this lane's own
    TILEPIPE_UNROLL
    for (int d = 1; d < 32; d *= 2) {
      const int x = __shfl_up_sync(0xFFFFFFFFu, before, d);
      if (lane >= d) before += x;
    }
    before -= sum;
    TILEPIPE_UNROLL
    for (int i = 0; i < kPer; ++i) {
      before += items[i];
      if (g0 + i < groups) t.items_through[g0 + i] = before;
    }
    first_bad = __reduce_min_sync(0xFFFFFFFFu, first_bad);
    if (status != nullptr && blockIdx.x == 0 && lane == 0)
      *status = first_bad == INT_MAX ? 0 : first_bad + 1;
  }

  //! The walk over the table, as GemmKernelSm90 asks it. Work items are numbered group by group,
  //! each group's in `Raster`'s order. Dealt at launch, worker `w`'s units are items `w`,
  //! `w + workers`, ... On demand (`claims`, ClusterM = 1), each block's producer claims the next
  //! item whenever it starts one: items of unequal cost (a small group's weights stream from
  //! memory, a large group's are found in L2) then keep every block busy to the end. Either way
  //! the producer sends each item's number to the consumers with its first k-tile (`tagged`).
  class Walk {
   public:
    TILEPIPE_DEVICE Walk(const GroupedScheduler& s, const SharedStorage& t) : s_(s), t_(t) {}

    TILEPIPE_DEVICE int units(int w) const {
      const int items = total();
      return w < items ? (items - 1 - w) / s_.workers + 1 : 0;
    }

    //! Worker `w`'s `j`-th item as dealt, or -1 past its last.
    TILEPIPE_DEVICE int dealt(int w, int j) const { return j < units(w) ? j * s_.workers + w : -1; }

    //! The producer's thread, for its `j`-th unit: the item, or -1 past the last; on demand, the
    //! next that no block has taken.
    TILEPIPE_DEVICE int next(int w, int j) const {
      if (s_.claims == nullptr || !tagged()) return dealt(w, j);
      const unsigned item = atomicAdd(s_.claims, 1u);
      return item < static_cast<unsigned>(total()) ? static_cast<int>(item) : -1;
    }

    //! Whether items' numbers reach the consumers with their first k-tiles (else, with no
    //! k-tile, they walk the deal themselves).
    TILEPIPE_DEVICE bool tagged() const { return s_.k_tiles > 0; }

    TILEPIPE_DEVICE GroupedUnit unit(int w, int j) const { return unit_of(j * s_.workers + w); }

    TILEPIPE_DEVICE GroupedUnit unit_of(int item) const {
      int lo = 0, hi = s_.groups - 1;  // the group: the first whose running count passes item
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (t_.items_through[mid] > item) hi = mid;
        else lo = mid + 1;
      }
      const int first = lo > 0 ? t_.items_through[lo - 1] : 0;
      const int items_m = (t_.items_through[lo] - first) / s_.items_n;
      const TileCoord tile = Raster::tile_of(item - first, items_m, s_.items_n);
      const int prev = s_.form == GroupedForm::kContiguous && lo > 0 ? __ldg(s_.sizes + lo - 1) : 0;
      const GroupRows r = group_rows(s_.form, prev, __ldg(s_.sizes + lo), s_.rows);
      return GroupedUnit{lo,        r.begin + tile.m * ClusterM * TileM,      tile.n * TileN,
                         r.end,     s_.form == GroupedForm::kMasked ? lo : 0, 0,
                         s_.k_tiles};
    }

   private:
    TILEPIPE_DEVICE int total() const { return t_.items_through[s_.groups - 1]; }

    const GroupedScheduler& s_;
    const SharedStorage& t_;
  };
};

namespace detail {

//! The base of a scheduler whose groups' A and B tensor maps and D are in global memory, one per
//! group (GroupedPointerArrays): GemmKernelSm90 loads and stores through them.
struct PointerArrayTag {};

//! The sizes' check alone (one warp), for a grouped GEMM with no element of D to compute: writes
//! `s.status` as the GEMM's kernel would.
template <class Scheduler>
__global__ void grouped_sizes_kernel(const Scheduler s) {
  __shared__ typename Scheduler::SharedStorage table;
  s.build(table);
}

}  // namespace detail

}  // namespace tilepipe
