// Runs a compiled sketch on sim_uno (-T) and collects its UART lines with their simulated ms and the runner's
// summary line: what the simulator suites share.
#pragma once

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "sim_frames.h"

namespace sim {

struct SimRun {
  int exit_code = -1;
  std::vector<Line> lines;
  std::string summary;  // "# sim: simulated_ms=... wall_ms=... state=..."
};

// `name` names the stderr file under BUILD_DIR/tests; `elf` is the path of the .elf.
inline SimRun run_elf(const std::string& name, const std::string& elf, const std::string& args) {
  std::string stderr_path = std::string(BUILD_DIR) + "/tests/" + name + ".sim.stderr";
  std::string command = std::string(SIM_UNO) + " -T -w 60 " + args + " " + elf + " 2>" + stderr_path;
  SimRun run;
  FILE* out = popen(command.c_str(), "r");
  if (!out) return run;
  char buf[512];
  std::regex stamped(R"(^\[(\d+)\] (.*?)\r?\n?$)");
  while (fgets(buf, sizeof buf, out)) {
    std::cmatch m;
    if (std::regex_match(buf, m, stamped)) run.lines.push_back({std::stol(m[1]), m[2]});
  }
  int status = pclose(out);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(stderr_path);
  for (std::string l; std::getline(err, l);) {
    if (l.rfind("# sim: ", 0) == 0) run.summary = l;
  }
  std::printf("    %s %s -> %s\n", name.c_str(), args.c_str(), run.summary.c_str());
  return run;
}

inline std::vector<Line> lines_starting(const SimRun& run, const std::string& prefix) {
  std::vector<Line> out;
  for (const Line& l : run.lines) {
    if (l.text.rfind(prefix, 0) == 0) out.push_back(l);
  }
  return out;
}

}  // namespace sim
