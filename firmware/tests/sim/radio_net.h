// A radio network under test: base_station.elf and sensor_node.elf variants on the lockstep runner
// (tests/sim/radio), driven through its C API so a test can reset a board or pull a radio out.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

extern "C" {
#include "radio/lockstep.h"
}
#include "sim_frames.h"

namespace sim {

const uint32_t kNodeVcc = 3300;  // a node on 3 x AA, straight into 5V

// Analog inputs of a sensor node in mV (A0 temp_in, A1 temp_out, A2 light, A3 humidity).
struct NodeInputs {
  uint32_t temp_in, temp_out, light, humidity;
};

inline std::string node_elf(int id, int sample_s) {
  return std::string(BUILD_DIR) + "/sensor_node-NODE_ID" + std::to_string(id) + "-SIGNING0-SAMPLE_SECONDS" +
         std::to_string(sample_s) + "/sensor_node.elf";
}
const std::string kBaseElf = std::string(BUILD_DIR) + "/base_station/base_station.elf";
const std::string kSixtySecondNodeElf = std::string(BUILD_DIR) + "/sensor_node-SIGNING0/sensor_node.elf";  // NODE_ID 1

class RadioNet {
 public:
  explicit RadioNet(const faults_t& faults = faults_t{}) {
    char path[] = "/tmp/radio-trace-XXXXXX";
    int fd = mkstemp(path);
    trace_path_ = path;
    trace_ = fdopen(fd, "w");
    sim_ = static_cast<lockstep_t*>(std::calloc(1, sizeof(lockstep_t)));
    lockstep_init(sim_, &faults, trace_);
    sim_->wall_limit_s = 900;  // a hang guard only
  }
  ~RadioNet() {
    lockstep_free(sim_);
    std::free(sim_);
    if (trace_) std::fclose(trace_);
    std::remove(trace_path_.c_str());
  }
  RadioNet(const RadioNet&) = delete;
  RadioNet& operator=(const RadioNet&) = delete;

  board_t* base(bool radio = true) {
    static const uint32_t none[8] = {};
    return add(kBaseElf, 0, radio, 5000, none);
  }
  // Node `id` must be added as board number `id` (after the base and nodes 1..id-1): the trace and the scripted
  // faults name boards by number.
  board_t* node(int id, double boot_ms, const NodeInputs& in, const std::string& elf = "", bool radio = true) {
    EXPECT_EQ(sim_->count, id) << "add the base station, then nodes 1, 2, ... in order";
    uint32_t adc[8] = {in.temp_in, in.temp_out, in.light, in.humidity};
    return add(elf.empty() ? node_elf(id, 2) : elf, boot_ms, radio, kNodeVcc, adc);
  }
  void run_until_ms(double ms) { ASSERT_EQ(lockstep_run_until(sim_, (ticks_t)(ms * TICKS_PER_MS)), RUN_TIME); }
  lockstep_t* sim() { return sim_; }
  const air_stats_t& stats() const { return sim_->air.stats; }

  static std::vector<Line> lines(const board_t* b, const std::string& prefix = "") {
    std::vector<Line> out;
    for (size_t i = 0; i < b->line_count; ++i) {
      std::string text = b->lines[i].text;
      if (text.rfind(prefix, 0) == 0) out.push_back({(long)(b->lines[i].t / TICKS_PER_MS), text});
    }
    return out;
  }
  // Every line of the base station that is not a status line, parsed as a v1 frame.
  static std::vector<Frame> frames(const board_t* base, const std::string& source = "") {
    std::vector<Frame> out;
    for (const Line& l : lines(base, "$")) {
      Frame f;
      EXPECT_TRUE(parse_frame(l, f)) << "not a valid v1 frame: " << l.text;
      if (source.empty() || f.source == source) out.push_back(f);
    }
    return out;
  }
  // The trace's packet records (call once, at the end: it writes out the packets still on the air).
  std::vector<nlohmann::json> packets() {
    lockstep_finish(sim_);
    std::fclose(trace_);
    trace_ = nullptr;
    std::vector<nlohmann::json> out;
    std::ifstream in(trace_path_);
    for (std::string l; std::getline(in, l);) {
      nlohmann::json j = nlohmann::json::parse(l);  // every line must be JSON
      if (j.contains("kind")) out.push_back(j);
    }
    return out;
  }

 private:
  board_t* add(const std::string& elf, double boot_ms, bool radio, uint32_t vcc, const uint32_t adc[8]) {
    board_t* b = lockstep_add(sim_, elf.c_str(), (ticks_t)(boot_ms * TICKS_PER_MS), radio, vcc, adc);
    EXPECT_NE(b, nullptr) << elf;
    return b;
  }
  std::string trace_path_;
  FILE* trace_;
  lockstep_t* sim_;
};

}  // namespace sim
