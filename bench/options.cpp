// gemm_bench's command line (options.hpp).
#include "options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tilepipe_bench {
namespace {

void usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s [--quick] [--json PATH] [--filter S1,S2,...] [--runs N] [--target-ms T]\n"
      "          [--settle-ms S] [--no-sweep] [--list]\n"
      "  --quick        a few sizes (squares 1024 and 4096, two model shapes, three irregular\n"
      "                 ones), sweep at 4096 only\n"
      "  --json PATH    also write every measurement to PATH (scripts/plot_bench.py plots it)\n"
      "  --filter LIST  only problems whose key (dtype/layout/MxNxK, e.g. f16/tn/4096x4096x4096)\n"
      "                 contains one of the comma-separated strings, or whose group (square,\n"
      "                 model, edge, irregular) is one of them\n"
      "  --runs N       at least N timed runs per configuration (default 20)\n"
      "  --target-ms T  more runs, up to 200, until they take about T ms of GPU time (default "
      "100)\n"
      "  --settle-ms S  before each turn's timed runs, about S ms of untimed runs of the same\n"
      "                 configuration, so the clock settles to its power draw (default 0)\n"
      "  --no-sweep     skip the f16 TN tile x stage sweep\n"
      "  --list         list the compiled configurations and exit\n",
      argv0);
}

}  // namespace

int parse_options(int argc, char** argv, Options& o) {
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage(argv[0]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--quick") o.quick = true;
    else if (arg == "--no-sweep") o.sweep = false;
    else if (arg == "--list") o.list = true;
    else if (arg == "--json") o.json_path = value();
    else if (arg == "--runs") o.min_runs = std::max(1, std::atoi(value().c_str()));
    else if (arg == "--target-ms") o.target_ms = std::max(0.0, std::atof(value().c_str()));
    else if (arg == "--settle-ms") o.settle_ms = std::max(0.0, std::atof(value().c_str()));
    else if (arg == "--filter") {
      const std::string list = value();
      std::size_t start = 0;
      while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start) o.filters.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (arg == "-h" || arg == "--help") {
      usage(argv[0]);
      return 0;
    } else {
      usage(argv[0]);
      return 2;
    }
  }
  o.max_runs = std::max(o.max_runs, o.min_runs);
  return -1;
}

}  // namespace tilepipe_bench
