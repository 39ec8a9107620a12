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

// Simulates the schedule of DESIGN.md with a queue of committed groups. `wait_depth` is what the
// consumer passes to wait_prior; `commit_when_idle` says whether the loop commits an empty group
// when nothing is left to load. Returns the number of protocol violations.
template <int Stages>
int simulate(int k_tiles, int wait_depth, bool commit_when_idle) {
  using Index = tilepipe::StageIndex<Stages>;
  struct Group { int tile; int slot; };
  std::deque<Group> in_flight;                 // committed, not yet complete
  std::vector<int> slot_tile(Stages, -1);      // tile whose data has landed in each slot
  std::vector<int> slot_pending(Stages, -1);   // tile being copied into each slot
  Index write, read;
  int violations = 0;

  auto issue = [&](int tile) {
    if (slot_pending[write.get()] != -1) ++violations;  // overwriting copies in flight
    slot_pending[write.get()] = tile;
    in_flight.push_back({tile, write.get()});
  };
  auto commit_empty = [&] { in_flight.push_back({-1, -1}); };
  auto wait_prior = [&](int n) {
    while (static_cast<int>(in_flight.size()) > n) {
      const Group g = in_flight.front();
      in_flight.pop_front();
      if (g.tile >= 0) {
        slot_tile[g.slot] = g.tile;
        slot_pending[g.slot] = -1;
      }
    }
  };

  for (int t = 0; t < Index::kPrologueTiles; ++t) {
    if (t < k_tiles) issue(t);
    if (t < k_tiles || commit_when_idle) {
      if (t >= k_tiles) commit_empty();
      write.advance();
    }
  }
  for (int t = 0; t < k_tiles; ++t) {
    wait_prior(wait_depth);                    // + barrier
    if (slot_tile[read.get()] != t) ++violations;  // consumer would read stale data
    const int next = t + Stages - 1;
    if (next < k_tiles) {
      issue(next);
      write.advance();
    } else if (commit_when_idle) {
      commit_empty();
      write.advance();
    }
    read.advance();
  }
  return violations;
}

// The schedule MultistageMainloop runs: the wait for tile t + 1 comes at the end of iteration t,
// after that iteration's refill (tile t + S - 1 into the slot of tile t - 1) is committed, so that
// tile t + 1's first fragments can be loaded before tile t's last mma.
template <int Stages>
int simulate_prefetching(int k_tiles, int wait_depth, bool commit_when_idle) {
  using Index = tilepipe::StageIndex<Stages>;
  struct Group { int tile; int slot; };
  std::deque<Group> in_flight;
  std::vector<int> slot_tile(Stages, -1), slot_pending(Stages, -1);
  Index write, read;
  int violations = 0;
  bool reading = false;  // the consumer has started (after the prologue)
  auto commit = [&](int tile) {  // tile < 0: an empty group
    if (tile >= 0) {
      if (slot_pending[write.get()] != -1) ++violations;      // overwriting copies in flight
      if (reading && write == read) ++violations;             // overwriting the tile being read
      slot_pending[write.get()] = tile;
    }
    in_flight.push_back({tile, write.get()});
    write.advance();
  };
  auto wait_prior = [&](int n) {
    while (static_cast<int>(in_flight.size()) > n) {
      const Group g = in_flight.front();
      in_flight.pop_front();
      if (g.tile >= 0) {
        slot_tile[g.slot] = g.tile;
        slot_pending[g.slot] = -1;
      }
    }
  };
  auto reads = [&](int tile) {
    if (slot_tile[read.get()] != tile) ++violations;  // stale or unfinished data
  };
  for (int t = 0; t < Index::kPrologueTiles; ++t) {
    if (t < k_tiles) commit(t);
    else if (commit_when_idle) commit(-1);
  }
  if (k_tiles > 0) {
    wait_prior(wait_depth);
    reads(0);  // first k-block of tile 0
  }
  reading = true;
  for (int t = 0; t < k_tiles; ++t) {
    if (t + Stages - 1 < k_tiles) commit(t + Stages - 1);
    else if (commit_when_idle) commit(-1);
    reads(t);  // the other k-blocks of tile t
    read.advance();
    wait_prior(wait_depth);  // + barrier
    if (t + 1 < k_tiles) reads(t + 1);  // first k-block of tile t + 1
  }
  return violations;
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
    EXPECT_EQ(simulate_prefetching<Stages>(k_tiles, Stages - 2, true), 0) << k_tiles << " k-tiles (prefetching)";
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
