// The compiled configurations (catalog.cuh).
#include "catalog.cuh"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace tilepipe_bench {

std::vector<TilepipeKernel> all_kernels() {
  std::vector<TilepipeKernel> kernels;
  add_f16_tn_sweep_a(kernels);
  add_f16_tn_sweep_b(kernels);
  add_candidate_kernels(kernels);
  add_f32_kernels(kernels);
  return kernels;
}

std::vector<AutoKernel> all_auto_kernels() {
  std::vector<AutoKernel> kernels;
  add_auto_kernels(kernels);
  return kernels;
}

std::vector<PeerKernel>& peer_registry() {
  static std::vector<PeerKernel> kernels;  // filled before main() by the peers' PeerRegistrars
  return kernels;
}

std::vector<PeerKernel> all_peer_kernels() {
  // In a fixed order whatever the order of the peers' static initialization.
  std::vector<PeerKernel> kernels = peer_registry();
  std::stable_sort(kernels.begin(), kernels.end(), [](const PeerKernel& a, const PeerKernel& b) {
    const int c = std::string(a.peer).compare(b.peer);
    if (c != 0) return c < 0;
    return std::make_pair(int(a.dtype), int(a.layout)) <
           std::make_pair(int(b.dtype), int(b.layout));
  });
  return kernels;
}

const AutoKernel* find_auto_kernel(const std::vector<AutoKernel>& kernels, DType d, LayoutPair l) {
  for (const auto& k : kernels)
    if (k.dtype == d && k.layout == l) return &k;
  return nullptr;
}

const TilepipeKernel* find_kernel(const std::vector<TilepipeKernel>& kernels, DType d, LayoutPair l,
                                  const TileConfig& c) {
  for (const auto& k : kernels)
    if (k.dtype == d && k.layout == l && k.config == c) return &k;
  return nullptr;
}

int missing_candidates(const std::vector<TilepipeKernel>& kernels,
                       const std::vector<AutoKernel>& autos) {
  int missing = 0;
  for (DType d : {DType::kF16, DType::kBF16})
    for (LayoutPair l : {LayoutPair::kTN, LayoutPair::kNN}) {
      for (const auto& c : kCandidateConfigs)
        if (!find_kernel(kernels, d, l, c)) {
          std::fprintf(stderr, "[bench] candidate %s is not compiled for %s %s\n", c.name().c_str(),
                       name_of(d), name_of(l));
          ++missing;
        }
      if (!find_auto_kernel(autos, d, l)) {
        std::fprintf(stderr, "[bench] GemmAuto is not compiled for %s %s\n", name_of(d),
                     name_of(l));
        ++missing;
      }
    }
  return missing;
}

int list_kernels() {
  const std::vector<TilepipeKernel> kernels = all_kernels();
  std::printf("%-5s %-3s %-22s %7s %11s\n", "dtype", "lay", "config", "threads", "smem bytes");
  for (const auto& k : kernels)
    std::printf("%-5s %-3s %-22s %7d %11zu\n", name_of(k.dtype), name_of(k.layout),
                k.config.name().c_str(), k.threads, k.smem_bytes);
  std::printf("%zu GemmMultistage instantiations\n", kernels.size());
  const std::vector<AutoKernel> autos = all_auto_kernels();
  for (const auto& a : autos) {
    // What the heuristic would choose on an H200 (132 SMs) for two shapes, as a smoke test.
    Operands skinny, square;
    skinny.m = 16;
    skinny.n = 4096;
    skinny.k = 4096;
    square.m = square.n = square.k = 4096;
    std::printf("%-5s %-3s auto: 16x4096x4096 -> %s, 4096^3 -> %s (on 132 SMs)\n", name_of(a.dtype),
                name_of(a.layout), a.select(skinny, 132).name().c_str(),
                a.select(square, 132).name().c_str());
  }
  std::printf("%zu GemmAuto instantiations\n", autos.size());
  int missing = missing_candidates(kernels, autos);

  // The peers: tilepipe's own stream-K kernels, and the other libraries' the build has; each must
  // have registered kernels. CMake defines these for the peers it compiles
  // (bench/CutlassPeers.cmake).
  const std::vector<PeerKernel> peers = all_peer_kernels();
  std::vector<std::string> compiled = {"tilepipe-streamk"};  // configs_stream_k.cu, always
#if TILEPIPE_BENCH_CUTLASS_SM80
  compiled.push_back("cutlass-sm80");
#endif
#if TILEPIPE_BENCH_CUTLASS_SM90
  compiled.push_back("cutlass-sm90");
#endif
  if (!compiled.empty()) {
    std::printf("%-13s %-5s %-3s %s\n", "peer", "dtype", "lay", "config");
    for (const auto& k : peers)
      std::printf("%-13s %-5s %-3s %s\n", k.peer, name_of(k.dtype), name_of(k.layout),
                  k.config.c_str());
    std::string counts;
    for (const auto& name : compiled) {
      int n = 0;
      for (const auto& k : peers) n += name == k.peer ? 1 : 0;
      counts += (counts.empty() ? "" : ", ") + name + " " + std::to_string(n);
      if (n == 0) {
        std::fprintf(stderr, "[bench] the build compiled %s but it has no kernel\n", name.c_str());
        ++missing;
      }
    }
    std::printf("%zu peer kernels: %s\n", peers.size(), counts.c_str());
  }
  return missing ? 1 : 0;
}

}  // namespace tilepipe_bench
