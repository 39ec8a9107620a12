// The timer of one turn (timer.cuh).
#include "timer.cuh"

#include <algorithm>
#include <cmath>

#include "check.cuh"

namespace tilepipe_bench {
namespace {

// Holds the stream for `ns` nanoseconds, so that the launches issued behind it queue up.
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

Timer::Timer(cudaStream_t stream, const Options& o) : stream_(stream), o_(o) {
  events_.resize(o.max_runs + 1);
  for (auto& e : events_) CHECK_CUDA(cudaEventCreate(&e));
}

Timer::~Timer() {
  for (auto& e : events_) cudaEventDestroy(e);
}

bool Timer::time(const Launch& launch, int sets, double target_ms, int min_runs,
                 std::vector<float>* samples, std::string* error) {
  int next_set = 0;
  auto run = [&]() {
    std::string e = launch(next_set);
    next_set = (next_set + 1) % sets;
    return e;
  };
  CHECK_CUDA(cudaEventRecord(events_[0], stream_));
  for (int i = 0; i < kWarmupRuns; ++i) {
    if (std::string e = run(); !e.empty()) {
      *error = e;
      return false;
    }
  }
  CHECK_CUDA(cudaEventRecord(events_[1], stream_));
  CHECK_CUDA(cudaStreamSynchronize(stream_));
  float warm_ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&warm_ms, events_[0], events_[1]));
  const double estimate = std::max(1e-3, double(warm_ms) / kWarmupRuns);
  const int runs = std::clamp(int(std::ceil(target_ms / estimate)), min_runs, o_.max_runs);

  // --settle-ms: more untimed runs, so that the GPU's clock settles to this configuration's own
  // power draw before it is timed (the H200 takes ~50-100 ms, docs/performance-log.md entry 11).
  if (o_.settle_ms > 0) {
    const int settle_runs = std::min(100000, int(std::ceil(o_.settle_ms / estimate)));
    for (int i = 0; i < settle_runs; ++i) {
      if (std::string e = run(); !e.empty()) {
        *error = e;
        CHECK_CUDA(cudaStreamSynchronize(stream_));
        return false;
      }
    }
  }

  // About 20 us of host time per launch (argument checks, attribute call, launch) must fit in
  // the spin, so that the GPU runs the timed launches back to back.
  const double spin_ms = std::min(20.0, 1.0 + 0.02 * runs);
  spin_kernel<<<1, 1, 0, stream_>>>(static_cast<unsigned long long>(spin_ms * 1e6));
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventRecord(events_[0], stream_));
  for (int i = 0; i < runs; ++i) {
    if (std::string e = run(); !e.empty()) {
      *error = e;
      CHECK_CUDA(cudaStreamSynchronize(stream_));
      return false;
    }
    CHECK_CUDA(cudaEventRecord(events_[i + 1], stream_));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream_));
  for (int i = 0; i < runs; ++i) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
    samples->push_back(ms);
  }
  return true;
}

Timing Timer::summarize(std::vector<float> ms) {
  Timing t;
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  t.runs = int(n);
  t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (double(ms[n / 2 - 1]) + ms[n / 2]);
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.q1_ms = ms[n / 4];
  t.q3_ms = ms[(3 * n) / 4];
  return t;
}

}  // namespace tilepipe_bench
