// Host tests of StageIndex and of the multistage protocol it drives: a model of the cp.async
// group queue checks, for Stages 2..6, that every tile a consumer reads has landed and that no
// slot is overwritten while it is still to be read.

#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include <tilepipe/layout/stage_index.cuh>

namespace {

template <int Stages>
void check_wrap() {
  using Index = tilepipe::StageIndex<Stages>;
  Index s;
  for (int n = 0; n < 5 * Stages + 3; ++n) {
    EXPECT_EQ(s.get(), n % Stages);
    EXPECT_EQ(Index::of_tile(n), s);
    s.advance();
  }
  static_assert(Index::kLoadsInFlight == Stages - 2, "wait depth");
  static_assert(Index::kPrologueTiles == Stages - 1, "prologue depth");
}

// A model of the ring: committed cp.async groups in a queue, what has landed in each slot, and
// the write and read indices. It counts protocol violations: a consumer reading a slot that does
// not hold the tile it expects (stale or unfinished data), and copies issued into a slot whose
// previous copies are still in flight or whose tile is being read.
template <int Stages>
struct RingModel {
  struct Group {
    int tile;
    int slot;
  };
  std::deque<Group> in_flight;                                   // committed, not yet complete
  std::vector<int> slot_tile = std::vector<int>(Stages, -1);     // landed tile per slot
  std::vector<int> slot_pending = std::vector<int>(Stages, -1);  // tile being copied per slot
  tilepipe::StageIndex<Stages> write, read;
  bool reading = false;  // the consumer has started (after the prologue)
  int violations = 0;

  // Copies of `tile` into the write stage, committed as one group (tile < 0: an empty group).
  void commit(int tile) {
    if (tile >= 0) {
      if (slot_pending[write.get()] != -1) ++violations;
      if (reading && write == read) ++violations;
      slot_pending[write.get()] = tile;
    }
    in_flight.push_back({tile, write.get()});
    write.advance();
  }
  // cp.async.wait_group n (+ the barrier): all but the n youngest groups have landed.
  void wait_prior(int n) {
    while (static_cast<int>(in_flight.size()) > n) {
      const Group g = in_flight.front();
      in_flight.pop_front();
      if (g.tile >= 0) {
        slot_tile[g.slot] = g.tile;
        slot_pending[g.slot] = -1;
      }
    }
  }
  void reads(int tile) {
    if (slot_tile[read.get()] != tile) ++violations;
  }
  // The prologue: tiles 0 .. S-2, one group each (empty past the last tile if commit_when_idle).
  void prologue(int k_tiles, bool commit_when_idle) {
    for (int t = 0; t < Stages - 1; ++t) {
      if (t < k_tiles) commit(t);
      else if (commit_when_idle) commit(-1);
    }
  }
  // The refill of iteration t: tile t + S - 1, or an empty group past the last tile.
  void refill(int t, int k_tiles, bool commit_when_idle) {
    if (t + Stages - 1 < k_tiles) commit(t + Stages - 1);
    else if (commit_when_idle) commit(-1);
  }
};

// The schedule of DESIGN.md: wait for tile t at the top of iteration t, refill, compute.
// `wait_depth` is what the consumer passes to wait_prior; `commit_when_idle` says whether the
// loop commits an empty group when nothing is left to load.
template <int Stages>
int simulate(int k_tiles, int wait_depth, bool commit_when_idle) {
  RingModel<Stages> ring;
  ring.prologue(k_tiles, commit_when_idle);
  ring.reading = true;
  for (int t = 0; t < k_tiles; ++t) {
    ring.wait_prior(wait_depth);
    ring.reads(t);
    ring.refill(t, k_tiles, commit_when_idle);
    ring.read.advance();
  }
  return ring.violations;
}

// The schedule MultistageMainloop runs: the wait for tile t + 1 comes at the end of iteration t,
// after that iteration's refill (tile t + S - 1 into the slot of tile t - 1) is committed, so that
// tile t + 1's first fragments can be loaded before tile t's last mma.
template <int Stages>
int simulate_prefetching(int k_tiles, int wait_depth, bool commit_when_idle) {
  RingModel<Stages> ring;
  ring.prologue(k_tiles, commit_when_idle);
  if (k_tiles > 0) {
    ring.wait_prior(wait_depth);
    ring.reads(0);  // first k-block of tile 0
  }
  ring.reading = true;
  for (int t = 0; t < k_tiles; ++t) {
    ring.refill(t, k_tiles, commit_when_idle);
    ring.reads(t);  // the other k-blocks of tile t
    ring.read.advance();
    ring.wait_prior(wait_depth);             // + barrier
    if (t + 1 < k_tiles) ring.reads(t + 1);  // first k-block of tile t + 1
  }
  return ring.violations;
}

template <int Stages>
void check_protocol() {
  SCOPED_TRACE(testing::Message() << Stages << " stages");
  for (int k_tiles : {1, Stages - 1, Stages, 2 * Stages + 1, 100, 131}) {
    EXPECT_EQ(simulate<Stages>(k_tiles, Stages - 2, true), 0) << k_tiles << " k-tiles";
  }
  // The model catches a wait that is one group too shallow and a skipped commit.
  EXPECT_GT(simulate<Stages>(100, Stages - 1, true), 0);
  if (Stages > 2) {
    EXPECT_GT(simulate<Stages>(100, Stages - 2, false), 0);
  }
  // The same for the prefetching schedule of MultistageMainloop.
  for (int k_tiles : {1, Stages - 1, Stages, 2 * Stages + 1, 100, 131}) {
    EXPECT_EQ(simulate_prefetching<Stages>(k_tiles, Stages - 2, true), 0)
        << k_tiles << " k-tiles (prefetching)";
  }
  EXPECT_GT(simulate_prefetching<Stages>(100, Stages - 1, true), 0);
  if (Stages > 2) {
    EXPECT_GT(simulate_prefetching<Stages>(100, Stages - 2, false), 0);
  }
}

}  // namespace

TEST(StageIndex, WrapsAround) {
  check_wrap<2>();
  check_wrap<3>();
  check_wrap<4>();
  check_wrap<5>();
  check_wrap<6>();
}

TEST(StageIndex, MultistageProtocolModel) {
  check_protocol<2>();
  check_protocol<3>();
  check_protocol<4>();
  check_protocol<5>();
  check_protocol<6>();
}
