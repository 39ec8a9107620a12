#pragma once
//! \file
//! gemm_bench's command line: what it may be told, and its parser.

#include <string>
#include <vector>

namespace tilepipe_bench {

struct Options {
  bool quick = false;
  bool sweep = true;
  bool list = false;
  std::string json_path;
  std::vector<std::string> filters;  // a problem runs if its key contains one or its group is one
  int min_runs = 20;
  int max_runs = 200;
  double target_ms = 100;  // timed runs per configuration: about this much GPU time, within bounds
  double settle_ms = 0;    // untimed runs of the configuration before each turn's timed runs
  std::string command_line;
};

//! Parses argv into `o`. Returns -1 to go on, else the exit status (0 after --help, 2 on a usage
//! error, with the usage printed).
int parse_options(int argc, char** argv, Options& o);

}  // namespace tilepipe_bench
