// Host tests of PipelineState and of the Hopper ring protocol it drives: a model of the full and
// empty mbarriers (arrival counts, transaction bytes, phase parity) runs a producer, a copy engine
// and several consumers in many interleavings, for Stages 2..6, and checks that every consumer
// reads every k-tile in order once it has landed, that no slot is refilled while it is still to be
// read, and that nothing deadlocks. The same model, run with a known mistake in the protocol
// (a wrong parity, a missing arrival), must report it. A second model runs the ring of a cluster
// of CTAs whose producers multicast B into each other's slots (the default Hopper GEMM): each
// consumer releases a slot in every CTA, and each producer waits for its slots' last releases
// before its CTA may exit.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <ostream>
#include <random>
#include <vector>

#include <tilepipe/layout/pipeline_state.cuh>

namespace {

// ---- PipelineState on its own ----------------------------------------------------------------

template <int Stages>
void check_advance() {
  using State = tilepipe::PipelineState<Stages>;
  SCOPED_TRACE(testing::Message() << Stages << " stages");
  State s;
  EXPECT_EQ(s.index(), 0);
  EXPECT_EQ(s.phase(), 0u);
  for (int n = 0; n < 7 * Stages + 3; ++n) {
    // The lap number's parity, computed without the class: the phase a wait must name.
    EXPECT_EQ(s.index(), n % Stages) << "after " << n << " advances";
    EXPECT_EQ(s.phase(), static_cast<unsigned>((n / Stages) % 2)) << "after " << n << " advances";
    const State before = s;
    s.advance();
    // The parity may change only where a new lap begins; flipping one slot early or late would
    // make every wait of that slot name the wrong phase.
    const bool wrapped = s.index() == 0;
    EXPECT_EQ(s.phase() != before.phase(), wrapped) << "advance " << n << " -> " << n + 1;
  }
}

TEST(PipelineState, AdvanceWrapsAndFlipsParityAtTheWrap) {
  check_advance<2>();
  check_advance<3>();
  check_advance<4>();
  check_advance<5>();
  check_advance<6>();
  check_advance<7>();
  check_advance<8>();
}

// advance(n) from any state is n single advances (a ping-pong consumer skips whole tiles).
template <int Stages>
void check_advance_by() {
  using State = tilepipe::PipelineState<Stages>;
  SCOPED_TRACE(testing::Message() << Stages << " stages");
  for (int start = 0; start < 2 * Stages; ++start)
    for (int n = 0; n < 5 * Stages + 2; ++n) {
      State one_by_one, at_once;
      for (int i = 0; i < start; ++i) one_by_one.advance();
      at_once = one_by_one;
      for (int i = 0; i < n; ++i) one_by_one.advance();
      at_once.advance(n);
      EXPECT_EQ(at_once.index(), one_by_one.index()) << "from " << start << " by " << n;
      EXPECT_EQ(at_once.phase(), one_by_one.phase()) << "from " << start << " by " << n;
    }
}

TEST(PipelineState, AdvanceByNIsNSingleAdvances) {
  check_advance_by<2>();
  check_advance_by<3>();
  check_advance_by<4>();
  check_advance_by<5>();
  check_advance_by<8>();
}

// The state after `steps` advances from the start, at compile time.
template <int Stages>
constexpr tilepipe::PipelineState<Stages> walked(int steps) {
  tilepipe::PipelineState<Stages> s;
  for (int i = 0; i < steps; ++i) s.advance();
  return s;
}

TEST(PipelineState, IsConstexpr) {
  using State = tilepipe::PipelineState<3>;
  static_assert(walked<3>(3) == State(0, 1u), "a whole lap flips the parity");
  static_assert(walked<3>(6) == State(0, 0u), "two laps flip it back");
  static_assert(walked<3>(4).index() == 1, "index is the step count modulo the stage count");
  static_assert(!(State(1, 0u) == State(1, 1u)), "states that differ in parity differ");
  SUCCEED();
}

// ---- The mbarrier model ----------------------------------------------------------------------

// One mbarrier, as the PTX ISA describes it: a phase completes when its pending arrival count
// reaches zero and its transaction count is zero; the barrier then starts the next phase with the
// arrival count it was initialised with.
class Mbarrier {
 public:
  explicit Mbarrier(int arrivals) : expected_(arrivals), pending_(arrivals) {}

  // Returns false for an arrival the current phase does not expect (undefined on the hardware:
  // it can only come from a role that is a phase ahead of the others).
  bool arrive() {
    if (pending_ == 0) return false;
    --pending_;
    complete_if_done();
    return true;
  }
  bool arrive_expect_tx(std::int64_t bytes) {
    tx_ += bytes;  // the expected bytes are added before the arrival counts
    return arrive();
  }
  void complete_tx(std::int64_t bytes) {
    tx_ -= bytes;
    complete_if_done();
  }

  // try_wait.parity(p) succeeds when the phase of parity p has completed. The hardware keeps only
  // the current phase's parity: if it differs from p, the phase of parity p is the one just
  // completed. A fresh barrier is in phase 0, so a wait for parity 1 (the "phase before 0")
  // succeeds at once; and a wait for a phase two laps old is indistinguishable from a wait for the
  // current one, which is why a wrong parity can pass silently.
  bool try_wait_parity(unsigned parity) const { return (phase_ & 1u) != parity; }

  std::uint64_t completed_phases() const { return phase_; }

 private:
  void complete_if_done() {
    if (pending_ == 0 && tx_ == 0) {
      ++phase_;
      pending_ = expected_;
    }
  }

  int expected_;
  int pending_;
  std::int64_t tx_ = 0;
  std::uint64_t phase_ = 0;  // the current phase's number; completed phases before it
};

// Whether a consumer read k-tiles 0, 1, ..., k_tiles - 1, each once.
bool read_in_order(const std::vector<int>& log, int k_tiles) {
  if (log.size() != static_cast<std::size_t>(k_tiles)) return false;
  for (std::size_t k = 0; k < log.size(); ++k)
    if (log[k] != static_cast<int>(k)) return false;
  return true;
}

// The mistakes the model must catch.
enum class Mistake {
  kNone,
  kProducerWaitsOnPhase,         // waits on empty[s] with parity `phase` instead of `phase ^ 1`
  kProducerSkipsAcquire,         // issues copies without waiting on empty[s]
  kConsumerSkipsRelease,         // consumer 0 never arrives on empty for the first k-tile
  kConsumerWaitsOnFlippedPhase,  // waits on full[s] with parity `phase ^ 1` instead of `phase`
  kPingPongNoSkip,               // a ping-pong consumer does not skip the other's tiles
  kPingPongNoOrder,     // a ping-pong consumer starts a tile before the previous one is read
  kStaggerArriveOnly,   // consumer 0 only signals (no credits), consumer 1 waits for the signal
  kStaggerEarlyCredit,  // consumer 1 gives the next unit's credit before it waits for the signal
};

// How the scheduler picks the next role among those that can move.
enum class Schedule {
  kRandom,          // weighted at random, weights drawn per seed (slow and fast roles)
  kProducerFirst,   // the producer and copy engine run as far ahead as they are allowed
  kConsumersFirst,  // consumers run the moment a wait lets them
};

// How often each role is picked when it can move: at random per seed (slow and fast roles) for
// the random schedule, all alike otherwise.
std::vector<int> role_weights(int roles, Schedule schedule, std::mt19937& rng) {
  std::vector<int> weight(roles, 1);
  if (schedule == Schedule::kRandom) {
    std::uniform_int_distribution<int> w(1, 12);
    for (int& x : weight) x = w(rng);
  }
  return weight;
}

struct Outcome {
  bool deadlock = false;   // some role still had work and none could move
  int stale_reads = 0;     // a consumer saw data other than the k-tile it expected
  int overwrites = 0;      // a copy was issued into a slot some consumer had not finished reading
  int extra_arrivals = 0;  // an arrival on a barrier whose phase expected no more
  bool in_order = true;    // every consumer read k-tiles 0, 1, 2, ... (checked at the end)

  bool clean() const {
    return !deadlock && stale_reads == 0 && overwrites == 0 && extra_arrivals == 0 && in_order;
  }
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{deadlock " << o.deadlock << ", stale " << o.stale_reads << ", overwrites "
            << o.overwrites << ", extra arrivals " << o.extra_arrivals << ", in order "
            << o.in_order << "}";
}

// A ring of `Stages` slots, each holding an A part and a B part written by two separate copies
// (so the full barrier's phase must wait for the bytes of both, not only for the producer's
// arrival). `k_tiles` is the total over all tiles a persistent block computes: the roles' states
// run on across tiles without a reset, so tile boundaries fall anywhere in a lap.
//
// Cooperative (`pingpong_tile == 0`): every consumer reads every k-tile, and a slot is free once
// all of them have released it. Ping-pong (`pingpong_tile > 0` k-tiles per tile): the tiles go to
// the consumers in turn, each slot has one reader, and a consumer walks past the other consumers'
// tiles with `advance(n)`, as GemmKernelSm90 does: first by `c * pingpong_tile`, then after each
// of its tiles by `(consumers - 1) * pingpong_tile`. A consumer starts waiting on a tile only once
// the previous tile's consumer has read all of it (the kernel's order barrier): a parity wait
// tells only adjacent phases apart, and a consumer a lap or more ahead of the copies would take
// an old phase's completion for its own.
//
// Stagger (`stagger_tile > 0` k-tiles per unit, two cooperative consumers): as the FP8 GEMM's
// consumers (WarpSpecializedMainloop::consume with a `stagger_barrier`), consumer 1 waits for a
// signal before it starts each unit, and then gives a credit for the next; consumer 0 signals a
// unit once it has read and released its first k-tile, and only with that unit's credit. Two named
// barriers of two parties each (one arrives, the other waits); consumer 1 gives the first credit
// before any unit, and consumer 0 takes the last after its last (stagger_begin, stagger_end).
// With kStaggerArriveOnly there are no credits: where a unit has fewer k-tiles than the ring has
// slots, consumer 0 can then signal a second unit before consumer 1 has taken the first, and the
// barrier pairs the wrong arrivals. With kStaggerEarlyCredit consumer 1's two credits can meet in
// one phase in the same way.
template <int Stages>
class RingSimulation {
 public:
  static constexpr int kNoData = -1;  // never written
  // The stagger's barriers, and what a consumer does once its wait on one is over.
  static constexpr int kSignal = 0, kCredit = 1;
  static constexpr int kThenNothing = 0, kThenCredit = 1, kThenSignal = 2;
  static constexpr int kLanding = -2;  // a copy into the part is in flight
  static constexpr std::int64_t kBytesA = 16384, kBytesB = 8192;

  RingSimulation(int k_tiles, int consumers, Mistake mistake, int pingpong_tile = 0,
                 int stagger_tile = 0)
      : k_tiles_(k_tiles), consumers_(consumers), mistake_(mistake), pingpong_tile_(pingpong_tile),
        stagger_tile_(stagger_tile), reads_(static_cast<std::size_t>(k_tiles), 0) {
    const int readers = pingpong_tile > 0 ? 1 : consumers;
    for (int i = 0; i < Stages; ++i) {
      full_.emplace_back(1);  // the producer's arrive_expect_tx; the bytes come on top
      empty_.emplace_back(readers);
    }
    consumer_.resize(consumers);
    for (int c = 0; c < consumers; ++c) {
      Consumer& x = consumer_[c];
      for (int k = 0; k < k_tiles; ++k)
        if (pingpong_tile == 0 || (k / pingpong_tile) % consumers == c) x.own.push_back(k);
      if (pingpong_tile > 0) x.state.advance(c * pingpong_tile);
    }
    if (credits()) barrier_arrive(kCredit);  // consumer 1's first credit (stagger_begin)
  }

  Outcome run(Schedule schedule, unsigned seed) {
    std::mt19937 rng(seed);
    // Roles: 0 producer, 1 copy engine, 2.. consumers.
    const int roles = 2 + consumers_;
    const std::vector<int> weight = role_weights(roles, schedule, rng);
    std::vector<int> ready;
    for (;;) {
      ready.clear();
      for (int r = 0; r < roles; ++r)
        if (can_move(r)) ready.push_back(r);
      if (ready.empty()) break;
      move(pick(ready, weight, schedule, rng), rng, schedule);
    }
    outcome_.deadlock = !all_done();
    // A clean run leaves no arrival pending on the stagger's barriers.
    for (const NamedBarrier& b : barrier_)
      if (!outcome_.deadlock && b.arrived != 0) ++outcome_.extra_arrivals;
    for (const Consumer& c : consumer_)
      if (c.read_log != c.own) outcome_.in_order = false;
    return outcome_;
  }

  // After a clean run each full barrier completed one phase per k-tile that used its slot, and
  // each empty barrier as many (every reader released every k-tile).
  bool phases_match_laps() const {
    for (int s = 0; s < Stages; ++s) {
      const std::uint64_t uses = static_cast<std::uint64_t>((k_tiles_ - s + Stages - 1) / Stages);
      if (full_[s].completed_phases() != uses || empty_[s].completed_phases() != uses) return false;
    }
    return true;
  }

 private:
  using State = tilepipe::PipelineState<Stages>;

  struct Copy {
    int slot;
    int k_tile;
    bool part_b;
  };
  struct Consumer {
    State state;
    std::vector<int> own;  // the k-tiles it reads, in order
    std::size_t next = 0;  // own[next] is the k-tile it reads next
    bool reading = false;  // between the first and the second half of a read
    std::vector<int> read_log;
    long long waiting = -1;   // stagger: the barrier phase it waits to see completed (-1: none)
    int waiting_on = 0;       // stagger: on which barrier
    int then = kThenNothing;  // stagger: what it does once the wait is over
    int met_unit = -1;        // stagger, consumer 1: the last unit it waited for the signal of
    bool took_last = false;   // stagger, consumer 0: it took the last credit (stagger_end)

    bool done() const { return next >= own.size(); }
    int k_tile() const { return own[next]; }
  };

  static int pick(const std::vector<int>& ready, const std::vector<int>& weight, Schedule schedule,
                  std::mt19937& rng) {
    if (schedule == Schedule::kProducerFirst) return ready.front();
    // `ready` is in role order, so its last entry is a consumer if any can move, else the copy
    // engine, else the producer.
    if (schedule == Schedule::kConsumersFirst) return ready.back();
    int total = 0;
    for (int r : ready) total += weight[r];
    int x = std::uniform_int_distribution<int>(0, total - 1)(rng);
    for (int r : ready) {
      if (x < weight[r]) return r;
      x -= weight[r];
    }
    return ready.back();
  }

  bool all_done() const {
    if (produced_ < k_tiles_ || !in_flight_.empty()) return false;
    for (const Consumer& c : consumer_)
      if (!c.done() || c.waiting >= 0) return false;
    return !credits() || consumer_[0].took_last;
  }

  unsigned producer_wait_parity() const {
    return mistake_ == Mistake::kProducerWaitsOnPhase ? producer_.phase() : producer_.phase() ^ 1u;
  }
  unsigned consumer_wait_parity(const Consumer& c) const {
    return mistake_ == Mistake::kConsumerWaitsOnFlippedPhase ? c.state.phase() ^ 1u
                                                             : c.state.phase();
  }

  bool can_move(int role) const {
    if (role == 0) {
      if (produced_ >= k_tiles_) return false;
      return mistake_ == Mistake::kProducerSkipsAcquire ||
             empty_[producer_.index()].try_wait_parity(producer_wait_parity());
    }
    if (role == 1) return !in_flight_.empty();
    const Consumer& c = consumer_[role - 2];
    if (c.waiting >= 0) return barrier_[c.waiting_on].phase > c.waiting;
    if (c.done()) return credits() && role == 2 && !c.took_last;
    if (stagger_due(c, role - 2)) return true;
    if (pingpong_tile_ > 0 && !c.reading && mistake_ != Mistake::kPingPongNoOrder) {
      const int k = c.k_tile();
      if (k % pingpong_tile_ == 0 && k > 0 && reads_[static_cast<std::size_t>(k - 1)] == 0)
        return false;
    }
    return c.reading || full_[c.state.index()].try_wait_parity(consumer_wait_parity(c));
  }

  void move(int role, std::mt19937& rng, Schedule schedule) {
    if (role == 0) return produce();
    if (role == 1) {
      // TMA copies finish in any order; the fixed schedules take the oldest.
      std::size_t i = 0;
      if (schedule == Schedule::kRandom)
        i = std::uniform_int_distribution<std::size_t>(0, in_flight_.size() - 1)(rng);
      const Copy c = in_flight_[i];
      in_flight_.erase(in_flight_.begin() + static_cast<std::ptrdiff_t>(i));
      (c.part_b ? data_b_ : data_a_)[c.slot] = c.k_tile;
      full_[c.slot].complete_tx(c.part_b ? kBytesB : kBytesA);
      return;
    }
    Consumer& c = consumer_[role - 2];
    if (c.waiting >= 0) {
      c.waiting = -1;  // its phase of the barrier completed
      return after_wait(c.then);
    }
    if (c.done()) {  // consumer 0 takes the last credit
      c.took_last = true;
      return barrier_sync(c, kCredit, kThenNothing);
    }
    if (stagger_due(c, role - 2)) {
      c.met_unit = c.k_tile() / stagger_tile_;
      if (mistake_ == Mistake::kStaggerEarlyCredit) {
        barrier_arrive(kCredit);
        return barrier_sync(c, kSignal, kThenNothing);
      }
      return barrier_sync(c, kSignal, credits() ? kThenCredit : kThenNothing);
    }
    consume(c, role - 2);
  }

  // Consumer 1 meets the stagger barrier before it starts a unit's first k-tile.
  bool stagger_due(const Consumer& c, int id) const {
    return stagger_tile_ > 0 && id == 1 && !c.reading && c.k_tile() % stagger_tile_ == 0 &&
           c.met_unit != c.k_tile() / stagger_tile_;
  }
  // Whether consumer 1 gives credits: all but the arrive-only protocol.
  bool credits() const { return stagger_tile_ > 0 && mistake_ != Mistake::kStaggerArriveOnly; }
  // A named barrier of the two consumers: a phase completes with the second arrival.
  bool barrier_arrive(int b) {
    if (++barrier_[b].arrived < 2) return false;
    barrier_[b].arrived = 0;
    ++barrier_[b].phase;
    return true;
  }
  // Arrives and waits for the phase to complete, then does `then`.
  void barrier_sync(Consumer& c, int b, int then) {
    const long long phase = barrier_[b].phase;
    if (barrier_arrive(b)) return after_wait(then);
    c.waiting = phase;
    c.waiting_on = b;
    c.then = then;
  }
  void after_wait(int then) {
    if (then == kThenCredit) barrier_arrive(kCredit);
    if (then == kThenSignal) barrier_arrive(kSignal);
  }

  // The producer has passed its wait on empty[s]: arm full[s], then issue both copies.
  void produce() {
    const int s = producer_.index();
    const int k = produced_;
    // Slot s last held k-tile k - Stages; each of its readers must have finished reading it.
    const int readers = pingpong_tile_ > 0 ? 1 : consumers_;
    if (k >= Stages && reads_[static_cast<std::size_t>(k - Stages)] < readers)
      ++outcome_.overwrites;
    if (!full_[s].arrive_expect_tx(kBytesA + kBytesB)) ++outcome_.extra_arrivals;
    data_a_[s] = kLanding;
    data_b_[s] = kLanding;
    in_flight_.push_back({s, k, false});
    in_flight_.push_back({s, k, true});
    producer_.advance();
    ++produced_;
  }

  // A read takes two moves, so that a copy can land between them and tear it.
  void consume(Consumer& c, int id) {
    const int s = c.state.index();
    const int k = c.k_tile();
    const bool intact = data_a_[s] == k && data_b_[s] == k;
    if (!c.reading) {
      if (!intact) ++outcome_.stale_reads;
      c.reading = true;
      return;
    }
    if (!intact) ++outcome_.stale_reads;
    c.read_log.push_back(data_a_[s] == data_b_[s] ? data_a_[s] : kLanding);
    c.reading = false;
    ++c.next;  // done reading; the release below is what the producer can see
    ++reads_[static_cast<std::size_t>(k)];
    const bool skip = mistake_ == Mistake::kConsumerSkipsRelease && id == 0 && k == 0;
    if (!skip && !empty_[s].arrive()) ++outcome_.extra_arrivals;
    c.state.advance();
    // Consumer 0 has released its unit's first k-tile: with the unit's credit, it signals.
    if (stagger_tile_ > 0 && id == 0 && k % stagger_tile_ == 0) {
      if (credits()) barrier_sync(c, kCredit, kThenSignal);
      else barrier_arrive(kSignal);
    }
    // A ping-pong consumer that ends a tile steps over the other consumers' next tiles.
    if (pingpong_tile_ > 0 && (k + 1) % pingpong_tile_ == 0 && mistake_ != Mistake::kPingPongNoSkip)
      c.state.advance((consumers_ - 1) * pingpong_tile_);
  }

  int k_tiles_;
  int consumers_;
  Mistake mistake_;
  int pingpong_tile_;
  int stagger_tile_;
  struct NamedBarrier {
    int arrived = 0;      // arrivals in the current phase
    long long phase = 0;  // completed phases
  };
  NamedBarrier barrier_[2];  // stagger: kSignal (consumer 0 to 1), kCredit (1 to 0)
  std::vector<int> reads_;   // how many consumers have finished reading each k-tile
  std::vector<Mbarrier> full_, empty_;
  std::vector<int> data_a_ = std::vector<int>(Stages, kNoData);  // k-tile in each slot's A part
  std::vector<int> data_b_ = std::vector<int>(Stages, kNoData);  // k-tile in each slot's B part
  std::deque<Copy> in_flight_;
  State producer_;
  int produced_ = 0;
  std::vector<Consumer> consumer_;
  Outcome outcome_;
};

constexpr unsigned kSeeds = 60;

template <int Stages>
Outcome simulate(int k_tiles, int consumers, Mistake mistake, Schedule schedule, unsigned seed) {
  return RingSimulation<Stages>(k_tiles, consumers, mistake).run(schedule, seed);
}

// The ring does not restart at a tile boundary (the roles' states run on), so only a block's total
// k-tile count matters: three tiles of 1, S - 1, S, S + 1 and 7 k-tiles end the run at different
// offsets of a lap, exactly on a wrap included, and a single k-tile never wraps at all.
template <int Stages>
std::vector<int> k_tile_totals() {
  std::vector<int> totals;
  for (int per_tile : {1, Stages - 1, Stages, Stages + 1, 7}) totals.push_back(3 * per_tile);
  totals.push_back(1);
  return totals;
}

template <int Stages>
void check_protocol() {
  SCOPED_TRACE(testing::Message() << Stages << " stages");
  for (int consumers : {1, 2, 8})
    for (int k_tiles : k_tile_totals<Stages>()) {
      SCOPED_TRACE(testing::Message() << consumers << " consumers, " << k_tiles << " k-tiles");
      for (Schedule schedule : {Schedule::kProducerFirst, Schedule::kConsumersFirst}) {
        RingSimulation<Stages> sim(k_tiles, consumers, Mistake::kNone);
        const Outcome o = sim.run(schedule, 0);
        EXPECT_TRUE(o.clean()) << o << " schedule " << static_cast<int>(schedule);
        EXPECT_TRUE(sim.phases_match_laps());
      }
      for (unsigned seed = 0; seed < kSeeds; ++seed) {
        RingSimulation<Stages> sim(k_tiles, consumers, Mistake::kNone);
        const Outcome o = sim.run(Schedule::kRandom, seed);
        ASSERT_TRUE(o.clean()) << o << " seed " << seed;
        ASSERT_TRUE(sim.phases_match_laps()) << "seed " << seed;
      }
    }
}

// Ping-pong: the tiles alternate between the consumers; tiles of 1, S - 1, S, S + 1 and 7 k-tiles
// put the tile boundaries (where a consumer skips) at every offset of a lap, and 1 to 5 tiles give
// the consumers equal and unequal shares.
template <int Stages>
void check_pingpong_protocol() {
  SCOPED_TRACE(testing::Message() << Stages << " stages");
  for (int consumers : {2, 3})
    for (int per_tile : {1, Stages - 1, Stages, Stages + 1, 7})
      for (int tiles = 1; tiles <= 5; ++tiles) {
        const int k_tiles = tiles * per_tile;
        SCOPED_TRACE(testing::Message() << consumers << " consumers, " << tiles << " tiles of "
                                        << per_tile << " k-tiles");
        for (Schedule schedule : {Schedule::kProducerFirst, Schedule::kConsumersFirst}) {
          RingSimulation<Stages> sim(k_tiles, consumers, Mistake::kNone, per_tile);
          const Outcome o = sim.run(schedule, 0);
          EXPECT_TRUE(o.clean()) << o << " schedule " << static_cast<int>(schedule);
          EXPECT_TRUE(sim.phases_match_laps());
        }
        for (unsigned seed = 0; seed < kSeeds; ++seed) {
          RingSimulation<Stages> sim(k_tiles, consumers, Mistake::kNone, per_tile);
          const Outcome o = sim.run(Schedule::kRandom, seed);
          ASSERT_TRUE(o.clean()) << o << " seed " << seed;
          ASSERT_TRUE(sim.phases_match_laps()) << "seed " << seed;
        }
      }
}

// Stagger: two cooperative consumers signal and credit each other once per unit; units of 1,
// S - 1, S, S + 1 and 7 k-tiles, 1 to 5 of them per block. With credits given as the kernel gives
// them it never hangs. With consumer 0 only signalling, three or more units shorter than the ring
// hang in some of the random interleavings (a GemmFp8Sm90 hang on an H200: 4 k-tiles per unit, 6
// stages; with two units the interleaving that hangs is too rare to count on), while units as
// long as the ring or longer cannot hang. A credit given before the wait hangs at any length.
template <int Stages>
void check_stagger_protocol() {
  SCOPED_TRACE(testing::Message() << Stages << " stages");
  for (int per_unit : {1, Stages - 1, Stages, Stages + 1, 7})
    for (int units = 1; units <= 5; ++units) {
      const int k_tiles = units * per_unit;
      SCOPED_TRACE(testing::Message() << units << " units of " << per_unit << " k-tiles");
      unsigned hung = 0, hung_early_credit = 0;
      for (unsigned seed = 0; seed < kSeeds; ++seed) {
        RingSimulation<Stages> sim(k_tiles, 2, Mistake::kNone, 0, per_unit);
        const Outcome o = sim.run(Schedule::kRandom, seed);
        ASSERT_TRUE(o.clean()) << o << " seed " << seed;
        ASSERT_TRUE(sim.phases_match_laps()) << "seed " << seed;
        RingSimulation<Stages> arrive_only(k_tiles, 2, Mistake::kStaggerArriveOnly, 0, per_unit);
        hung += arrive_only.run(Schedule::kRandom, seed).deadlock ? 1 : 0;
        RingSimulation<Stages> early(k_tiles, 2, Mistake::kStaggerEarlyCredit, 0, per_unit);
        hung_early_credit += early.run(Schedule::kRandom, seed).deadlock ? 1 : 0;
      }
      for (Schedule schedule : {Schedule::kProducerFirst, Schedule::kConsumersFirst}) {
        RingSimulation<Stages> sim(k_tiles, 2, Mistake::kNone, 0, per_unit);
        EXPECT_TRUE(sim.run(schedule, 0).clean()) << "schedule " << static_cast<int>(schedule);
      }
      if (per_unit >= Stages) {
        EXPECT_EQ(hung, 0u) << "arrive-only hung with units of a lap";
      } else if (units >= 3) {
        EXPECT_GT(hung, 0u) << "arrive-only never hung";
      }
      EXPECT_GT(hung_early_credit, 0u) << "a credit before the wait never hung";
    }
}

// A mistake that stops the ring must deadlock it in every interleaving: nothing a schedule does
// can make the missing phase complete. `k_tiles` is more than a lap so that a slot is reused.
template <int Stages>
void check_deadlocks(Mistake mistake) {
  SCOPED_TRACE(testing::Message() << Stages << " stages, mistake " << static_cast<int>(mistake));
  const int k_tiles = 4 * Stages + 3;
  for (Schedule schedule : {Schedule::kProducerFirst, Schedule::kConsumersFirst}) {
    const Outcome o = simulate<Stages>(k_tiles, 8, mistake, schedule, 0);
    EXPECT_TRUE(o.deadlock) << o << " schedule " << static_cast<int>(schedule);
  }
  for (unsigned seed = 0; seed < kSeeds; ++seed) {
    const Outcome o = simulate<Stages>(k_tiles, 8, mistake, Schedule::kRandom, seed);
    EXPECT_TRUE(o.deadlock) << o << " seed " << seed;
  }
}

// A mistake that lets a role run ahead is a race: it shows only in interleavings where the role
// actually gets ahead, so a lucky schedule can hide it (as on the hardware). The schedule that
// favours the racing role must always show it, and most random interleavings must (over 90% did
// over 1,000 seeds; the bound leaves room for another standard library's distributions).
template <int Stages>
void check_race_caught(Mistake mistake, Schedule adversary) {
  SCOPED_TRACE(testing::Message() << Stages << " stages, mistake " << static_cast<int>(mistake));
  const int k_tiles = 4 * Stages + 3;
  const Outcome o = simulate<Stages>(k_tiles, 8, mistake, adversary, 0);
  // Whatever follows (the confused barrier counts often hang the ring later), the race itself
  // shows as data: a read of a slot not yet written, or a copy over a slot not yet read.
  EXPECT_GT(o.stale_reads + o.overwrites, 0)
      << o << " adversarial schedule " << static_cast<int>(adversary);
  unsigned caught = 0;
  for (unsigned seed = 0; seed < kSeeds; ++seed)
    if (!simulate<Stages>(k_tiles, 8, mistake, Schedule::kRandom, seed).clean()) ++caught;
  EXPECT_GE(caught, kSeeds * 3 / 4) << "random interleavings that showed the race";
}

// ---- The ring of a cluster (TMA multicast) ----------------------------------------------------

// Mistakes of the cluster protocol the model must catch.
enum class ClusterMistake {
  kNone,
  kReleaseLocalOnly,  // consumers release only their own CTA's slot (and the empty barriers
                      // count only local arrivals): the non-cluster protocol inside a cluster
  kNoTail,            // a producer does not wait for its slots' last releases before exiting
};

struct ClusterOutcome {
  bool deadlock = false;
  int stale_reads = 0;  // a consumer saw a part of the slot other than the k-tile it expected
  int overwrites = 0;   // a copy landed in a slot some consumer of that CTA had not read
  int extra_arrivals = 0;
  int after_exit = 0;  // an arrival or a copy reached a CTA that had exited
  bool in_order = true;

  bool clean() const {
    return !deadlock && stale_reads == 0 && overwrites == 0 && extra_arrivals == 0 &&
           after_exit == 0 && in_order;
  }
};

std::ostream& operator<<(std::ostream& os, const ClusterOutcome& o) {
  return os << "{deadlock " << o.deadlock << ", stale " << o.stale_reads << ", overwrites "
            << o.overwrites << ", extra arrivals " << o.extra_arrivals << ", after exit "
            << o.after_exit << ", in order " << o.in_order << "}";
}

// `Ctas` CTAs, each with a ring of `Stages` slots of an A part (its own copy) and one B part per
// CTA (CTA r copies part r and multicasts it to every CTA: one copy per destination, landing in
// any order). A CTA's full barrier expects its producer's arrival and the bytes of A and of every
// B part; its empty barrier the releases of every consumer of every CTA (of its own only, with
// kReleaseLocalOnly). Roles move one at a time, in random or fixed orders.
template <int Stages>
class ClusterRingSimulation {
 public:
  static constexpr int kNoData = -1, kLanding = -2;
  static constexpr std::int64_t kBytesA = 16384, kBytesBPart = 8192;

  ClusterRingSimulation(int ctas, int k_tiles, int consumers, ClusterMistake mistake)
      : ctas_(ctas), k_tiles_(k_tiles), consumers_(consumers), mistake_(mistake) {
    const int releases =
        mistake == ClusterMistake::kReleaseLocalOnly ? consumers : consumers * ctas;
    for (int c = 0; c < ctas; ++c) {
      Cta cta;
      for (int i = 0; i < Stages; ++i) {
        cta.full.emplace_back(1);
        cta.empty.emplace_back(releases);
      }
      cta.a.assign(Stages, kNoData);
      cta.b.assign(Stages, std::vector<int>(ctas, kNoData));
      cta.consumer.resize(consumers);
      cta_.push_back(cta);
    }
  }

  ClusterOutcome run(Schedule schedule, unsigned seed) {
    std::mt19937 rng(seed);
    // Roles: per CTA a producer and its consumers, then the copy engine.
    const int per_cta = 1 + consumers_;
    const int roles = ctas_ * per_cta + 1;
    const std::vector<int> weight = role_weights(roles, schedule, rng);
    std::vector<int> ready;
    for (;;) {
      ready.clear();
      for (int r = 0; r < roles; ++r)
        if (can_move(r, per_cta)) ready.push_back(r);
      if (ready.empty()) break;
      int role;
      if (schedule == Schedule::kProducerFirst) {
        role = ready.front();
      } else if (schedule == Schedule::kConsumersFirst) {
        role =
            ready.back() == roles - 1 && ready.size() > 1 ? ready[ready.size() - 2] : ready.back();
      } else {
        int total = 0;
        for (int r : ready) total += weight[r];
        int x = std::uniform_int_distribution<int>(0, total - 1)(rng);
        role = ready.back();
        for (int r : ready) {
          if (x < weight[r]) {
            role = r;
            break;
          }
          x -= weight[r];
        }
      }
      move(role, per_cta, rng, schedule);
    }
    for (const Cta& cta : cta_) {
      if (!cta.exited) outcome_.deadlock = true;
      for (const Consumer& c : cta.consumer)
        if (!read_in_order(c.read_log, k_tiles_)) outcome_.in_order = false;
    }
    if (!in_flight_.empty()) outcome_.deadlock = true;
    return outcome_;
  }

 private:
  using State = tilepipe::PipelineState<Stages>;
  struct Consumer {
    State state;
    int k_tile = 0;
    bool reading = false;
    std::vector<int> read_log;
  };
  struct Cta {
    std::vector<Mbarrier> full, empty;
    std::vector<int> a;               // k-tile in each slot's A part
    std::vector<std::vector<int>> b;  // k-tile in each slot's B parts
    std::vector<Consumer> consumer;
    State producer;
    int produced = 0;
    int tail = 0;  // slots whose last release the producer has waited for
    bool exited = false;
  };
  struct Copy {
    int cta;  // destination
    int slot;
    int k_tile;
    int part;  // -1: A, else the B part
  };

  int tail_length() const { return mistake_ == ClusterMistake::kNoTail ? 0 : Stages; }

  bool can_move(int role, int per_cta) const {
    if (role == ctas_ * per_cta) return !in_flight_.empty();
    const Cta& cta = cta_[role / per_cta];
    const int r = role % per_cta;
    if (cta.exited) return false;
    if (r == 0) {
      if (cta.produced >= k_tiles_ && cta.tail >= tail_length()) return false;
      const State st = cta.producer;
      return cta.empty[st.index()].try_wait_parity(st.phase() ^ 1u);
    }
    const Consumer& c = cta.consumer[r - 1];
    if (c.k_tile >= k_tiles_) return false;
    return c.reading || cta.full[c.state.index()].try_wait_parity(c.state.phase());
  }

  void move(int role, int per_cta, std::mt19937& rng, Schedule schedule) {
    if (role == ctas_ * per_cta) {
      std::size_t i = 0;
      if (schedule == Schedule::kRandom)
        i = std::uniform_int_distribution<std::size_t>(0, in_flight_.size() - 1)(rng);
      const Copy c = in_flight_[i];
      in_flight_.erase(in_flight_.begin() + static_cast<std::ptrdiff_t>(i));
      Cta& dst = cta_[c.cta];
      if (dst.exited) {
        ++outcome_.after_exit;
        return;
      }
      (c.part < 0 ? dst.a[c.slot] : dst.b[c.slot][c.part]) = c.k_tile;
      dst.full[c.slot].complete_tx(c.part < 0 ? kBytesA : kBytesBPart);
      return;
    }
    const int id = role / per_cta;
    const int r = role % per_cta;
    if (r == 0) return produce(id);
    consume(id, r - 1);
  }

  // Producer of CTA `id`, past its wait on empty[s]: the next k-tile, or a step of the tail.
  void produce(int id) {
    Cta& cta = cta_[id];
    const int s = cta.producer.index();
    if (cta.produced >= k_tiles_) {  // the tail: this slot's last releases are in
      cta.producer.advance();
      ++cta.tail;
      maybe_exit(id);
      return;
    }
    const int k = cta.produced;
    if (!cta.full[s].arrive_expect_tx(kBytesA + kBytesBPart * ctas_)) ++outcome_.extra_arrivals;
    in_flight_.push_back({id, s, k, -1});
    for (int dst = 0; dst < ctas_; ++dst) {
      // The multicast writes slot s of every CTA: each one's consumers must have read k - Stages.
      for (const Consumer& c : cta_[dst].consumer)
        if (k >= Stages && c.k_tile <= k - Stages) {
          ++outcome_.overwrites;
          break;
        }
      cta_[dst].b[s][id] = kLanding;
      in_flight_.push_back({dst, s, k, id});
    }
    cta.a[s] = kLanding;
    cta.producer.advance();
    ++cta.produced;
    maybe_exit(id);
  }

  void consume(int id, int which) {
    Cta& cta = cta_[id];
    Consumer& c = cta.consumer[which];
    const int s = c.state.index();
    bool intact = cta.a[s] == c.k_tile;
    for (int part : cta.b[s]) intact = intact && part == c.k_tile;
    if (!intact) ++outcome_.stale_reads;
    if (!c.reading) {
      c.reading = true;
      return;
    }
    c.read_log.push_back(intact ? c.k_tile : kLanding);
    c.reading = false;
    ++c.k_tile;
    if (mistake_ == ClusterMistake::kReleaseLocalOnly) {
      if (!cta.empty[s].arrive()) ++outcome_.extra_arrivals;
    } else {
      for (int dst = 0; dst < ctas_; ++dst) {
        if (cta_[dst].exited) {
          ++outcome_.after_exit;
          continue;
        }
        if (!cta_[dst].empty[s].arrive()) ++outcome_.extra_arrivals;
      }
    }
    c.state.advance();
    maybe_exit(id);
  }

  // A CTA exits once its producer has issued everything and walked its tail, and its consumers
  // have read everything.
  void maybe_exit(int id) {
    Cta& cta = cta_[id];
    if (cta.produced < k_tiles_ || cta.tail < tail_length()) return;
    for (const Consumer& c : cta.consumer)
      if (c.k_tile < k_tiles_) return;
    cta.exited = true;
  }

  int ctas_, k_tiles_, consumers_;
  ClusterMistake mistake_;
  std::vector<Cta> cta_;
  std::deque<Copy> in_flight_;
  ClusterOutcome outcome_;
};

}  // namespace

TEST(PipelineState, MbarrierModelFollowsPtx) {
  // The model's barrier is checked first, since every protocol verdict below rests on it.
  Mbarrier bar(2);
  EXPECT_TRUE(bar.try_wait_parity(1));  // the phase "before phase 0" counts as complete
  EXPECT_FALSE(bar.try_wait_parity(0));
  EXPECT_TRUE(bar.arrive_expect_tx(64));
  EXPECT_TRUE(bar.arrive());
  EXPECT_FALSE(bar.try_wait_parity(0));  // both arrivals are in, but 64 bytes are not
  bar.complete_tx(32);
  EXPECT_FALSE(bar.try_wait_parity(0));
  bar.complete_tx(32);
  EXPECT_TRUE(bar.try_wait_parity(0));  // phase 0 complete
  EXPECT_FALSE(bar.try_wait_parity(1));
  EXPECT_EQ(bar.completed_phases(), 1u);
  EXPECT_TRUE(bar.arrive());
  EXPECT_TRUE(bar.arrive());  // phase 1 completes without bytes
  EXPECT_TRUE(bar.try_wait_parity(1));
  // Two phases on, parity 0 again: a wait can't tell phase 2 from phase 0.
  EXPECT_TRUE(bar.arrive());
  EXPECT_TRUE(bar.arrive());
  EXPECT_TRUE(bar.try_wait_parity(0));
  EXPECT_EQ(bar.completed_phases(), 3u);
}

TEST(PipelineState, HopperRingProtocolModel) {
  check_protocol<2>();
  check_protocol<3>();
  check_protocol<4>();
  check_protocol<5>();
  check_protocol<6>();
}

// The FP8 GEMM's two consumers' signals and credits, once per unit (6 stages, as its default tile
// config).
TEST(PipelineState, StaggerRendezvousModel) {
  check_stagger_protocol<2>();
  check_stagger_protocol<4>();
  check_stagger_protocol<6>();
}

TEST(PipelineState, PingPongRingProtocolModel) {
  check_pingpong_protocol<2>();
  check_pingpong_protocol<4>();
  check_pingpong_protocol<5>();
}

// A ping-pong consumer that forgets to skip the other's tile waits on a slot that its own next
// k-tile never fills in time, or reads the other's data: never a clean run.
TEST(PipelineState, PingPongModelCatchesAMissingSkip) {
  for (int per_tile : {1, 3, 4, 7}) {
    SCOPED_TRACE(testing::Message() << per_tile << " k-tiles per tile");
    const int k_tiles = 4 * per_tile;
    for (Schedule schedule : {Schedule::kProducerFirst, Schedule::kConsumersFirst}) {
      const Outcome o =
          RingSimulation<4>(k_tiles, 2, Mistake::kPingPongNoSkip, per_tile).run(schedule, 0);
      EXPECT_FALSE(o.clean()) << o << " schedule " << static_cast<int>(schedule);
    }
    for (unsigned seed = 0; seed < kSeeds; ++seed) {
      const Outcome o = RingSimulation<4>(k_tiles, 2, Mistake::kPingPongNoSkip, per_tile)
                            .run(Schedule::kRandom, seed);
      EXPECT_FALSE(o.clean()) << o << " seed " << seed;
    }
  }
}

// Without the order barrier the second consumer's first wait can pass on an old phase once its
// tile starts a lap or more past the copies: a race, which the schedule that lets consumers run
// first always shows, and most random ones do.
TEST(PipelineState, PingPongModelCatchesAMissingOrder) {
  for (int per_tile : {4, 7}) {
    SCOPED_TRACE(testing::Message() << per_tile << " k-tiles per tile");
    const Outcome o = RingSimulation<4>(4 * per_tile, 2, Mistake::kPingPongNoOrder, per_tile)
                          .run(Schedule::kConsumersFirst, 0);
    EXPECT_GT(o.stale_reads, 0) << o;
    unsigned caught = 0;
    for (unsigned seed = 0; seed < kSeeds; ++seed)
      if (!RingSimulation<4>(4 * per_tile, 2, Mistake::kPingPongNoOrder, per_tile)
               .run(Schedule::kRandom, seed)
               .clean())
        ++caught;
    EXPECT_GE(caught, kSeeds / 2) << "random interleavings that showed the race";
  }
}

TEST(PipelineState, ModelCatchesAProducerWaitingOnTheWrongParity) {
  // A fresh empty barrier has completed no phase of parity 0, so the first acquire never returns
  // and the consumers wait for data that is never copied.
  check_deadlocks<2>(Mistake::kProducerWaitsOnPhase);
  check_deadlocks<4>(Mistake::kProducerWaitsOnPhase);
  check_deadlocks<6>(Mistake::kProducerWaitsOnPhase);
}

TEST(PipelineState, ModelCatchesAProducerThatDoesNotWait) {
  // Shows the overwrite check can fire: with the producer running ahead, a slot is refilled while
  // consumers still have to read it.
  const Outcome o = simulate<3>(20, 8, Mistake::kProducerSkipsAcquire, Schedule::kProducerFirst, 0);
  EXPECT_GT(o.overwrites, 0) << o;
  check_race_caught<2>(Mistake::kProducerSkipsAcquire, Schedule::kProducerFirst);
  check_race_caught<5>(Mistake::kProducerSkipsAcquire, Schedule::kProducerFirst);
}

TEST(PipelineState, ModelCatchesAMissingRelease) {
  // Empty[0] never completes its first phase, so the producer's second lap on slot 0 waits for
  // ever; with more than a lap of k-tiles that is a deadlock in every interleaving.
  check_deadlocks<2>(Mistake::kConsumerSkipsRelease);
  check_deadlocks<3>(Mistake::kConsumerSkipsRelease);
  check_deadlocks<6>(Mistake::kConsumerSkipsRelease);
}

TEST(PipelineState, ModelCatchesAConsumerWaitingOnTheWrongParity) {
  // Parity 1 on a fresh full barrier passes at once: with consumers scheduled first the read
  // finds a slot no copy has written.
  const Outcome first =
      simulate<4>(20, 8, Mistake::kConsumerWaitsOnFlippedPhase, Schedule::kConsumersFirst, 0);
  EXPECT_GT(first.stale_reads, 0) << first;
  check_race_caught<2>(Mistake::kConsumerWaitsOnFlippedPhase, Schedule::kConsumersFirst);
  check_race_caught<4>(Mistake::kConsumerWaitsOnFlippedPhase, Schedule::kConsumersFirst);
  check_race_caught<6>(Mistake::kConsumerWaitsOnFlippedPhase, Schedule::kConsumersFirst);
}

template <int Stages>
void check_cluster_protocol() {
  SCOPED_TRACE(testing::Message() << Stages << " stages");
  for (int ctas : {2, 4})
    for (int consumers : {1, 8})
      for (int k_tiles : k_tile_totals<Stages>()) {
        SCOPED_TRACE(testing::Message()
                     << ctas << " CTAs, " << consumers << " consumers, " << k_tiles << " k-tiles");
        for (Schedule schedule : {Schedule::kProducerFirst, Schedule::kConsumersFirst}) {
          const ClusterOutcome o =
              ClusterRingSimulation<Stages>(ctas, k_tiles, consumers, ClusterMistake::kNone)
                  .run(schedule, 0);
          EXPECT_TRUE(o.clean()) << o << " schedule " << static_cast<int>(schedule);
        }
        for (unsigned seed = 0; seed < kSeeds; ++seed) {
          const ClusterOutcome o =
              ClusterRingSimulation<Stages>(ctas, k_tiles, consumers, ClusterMistake::kNone)
                  .run(Schedule::kRandom, seed);
          ASSERT_TRUE(o.clean()) << o << " seed " << seed;
        }
      }
}

TEST(PipelineState, ClusterRingProtocolModel) {
  check_cluster_protocol<2>();
  check_cluster_protocol<4>();
  check_cluster_protocol<6>();
}

TEST(PipelineState, ClusterModelCatchesLocalReleases) {
  // Releasing only the own CTA's slot lets a peer's multicast land in a slot that is still being
  // read: the producer-first order shows it every time, most random orders too.
  const int k_tiles = 4 * 4 + 3;
  const ClusterOutcome first =
      ClusterRingSimulation<4>(2, k_tiles, 8, ClusterMistake::kReleaseLocalOnly)
          .run(Schedule::kProducerFirst, 0);
  EXPECT_GT(first.overwrites + first.stale_reads, 0) << first;
  unsigned caught = 0;
  for (unsigned seed = 0; seed < kSeeds; ++seed)
    if (!ClusterRingSimulation<4>(2, k_tiles, 8, ClusterMistake::kReleaseLocalOnly)
             .run(Schedule::kRandom, seed)
             .clean())
      ++caught;
  EXPECT_GE(caught, kSeeds / 2) << "random interleavings that showed the race";
}

TEST(PipelineState, ClusterModelCatchesAProducerWithoutTail) {
  // Without the tail a CTA may exit while its peer's consumers still release its slots.
  unsigned caught = 0;
  for (unsigned seed = 0; seed < kSeeds; ++seed) {
    const ClusterOutcome o =
        ClusterRingSimulation<3>(2, 10, 4, ClusterMistake::kNoTail).run(Schedule::kRandom, seed);
    if (o.after_exit > 0) ++caught;
  }
  EXPECT_GE(caught, kSeeds / 4) << "random interleavings in which a CTA was reached after exiting";
  const ClusterOutcome clean =
      ClusterRingSimulation<3>(2, 10, 4, ClusterMistake::kNone).run(Schedule::kRandom, 0);
  EXPECT_EQ(clean.after_exit, 0) << clean;
}
