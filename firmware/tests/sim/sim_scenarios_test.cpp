// The compiled sketches (.elf, exactly what gets flashed) running on simavr through sim_uno. Expected values
// are computed here from the injected voltages with the thermistor equation, independently of the firmware.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim_run.h"

namespace {

using namespace sim;

SimRun run_sketch(const std::string& sketch, const std::string& args) {
  return run_elf(sketch, std::string(BUILD_DIR) + "/" + sketch + "/" + sketch + ".elf", args);
}

std::vector<Frame> frames_of(const SimRun& run) {
  std::vector<Frame> frames;
  for (const Line& l : run.lines) {
    if (l.text.empty() || l.text[0] == '#') continue;
    Frame f;
    EXPECT_TRUE(parse_frame(l, f)) << "not a valid v1 frame: " << l.text;
    frames.push_back(f);
  }
  return frames;
}

// `count` frames from source room, seq 0, 1, ..., 5 s of simulated time apart, carrying temp and light.
void expect_room_frames(const SimRun& run, size_t count, double temp_mv, double light_mv) {
  std::vector<Frame> frames = frames_of(run);
  ASSERT_EQ(frames.size(), count);
  for (size_t i = 0; i < frames.size(); ++i) {
    const Frame& f = frames[i];
    EXPECT_EQ(f.source, "room");
    EXPECT_EQ(f.seq, static_cast<long>(i));
    ASSERT_EQ(f.values.size(), 2u);
    EXPECT_EQ(f.values[0].first, "temp");
    EXPECT_EQ(f.values[1].first, "light");
    expect_temperature(value_of(f, "temp"), temp_mv);
    expect_light(value_of(f, "light"), light_mv);
    if (i) {
      EXPECT_NEAR(f.ms - frames[i - 1].ms, 5000, 2);
    }
  }
}

}  // namespace

TEST(SerialNodeSim, FramesCarryTheInjectedInputsWithSeqCountingUp) {
  SimRun run = run_sketch("serial_node", "-m 16000 -a 0=2500 -a 1=3000");
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_NE(run.summary.find("simulated_ms=16000"), std::string::npos);
  ASSERT_FALSE(run.lines.empty());
  EXPECT_EQ(run.lines[0].text, "# boot serial_node source=room sample_s=5");
  expect_room_frames(run, 4, 2500, 3000);  // at 0, 5, 10 and 15 s
}

TEST(SerialNodeSim, ValuesFollowOtherInputs) {
  SimRun run = run_sketch("serial_node", "-m 6000 -a 0=1200 -a 1=200");
  ASSERT_EQ(run.exit_code, 0);
  expect_room_frames(run, 2, 1200, 200);  // ~52 °C, 4 %
}

TEST(SerialNodeSim, ShortedThermistorIsLeftOutNotSentAsANumber) {
  SimRun run = run_sketch("serial_node", "-m 6000 -a 0=0 -a 1=4000");
  ASSERT_EQ(run.exit_code, 0);
  std::vector<Frame> frames = frames_of(run);
  ASSERT_EQ(frames.size(), 2u);
  for (const Frame& f : frames) {
    ASSERT_EQ(f.values.size(), 1u);
    EXPECT_EQ(f.values[0].first, "light");
    expect_light(f.values[0].second, 4000);
  }
}

TEST(BaseStationSim, WithoutRadioPrintsStatusAndKeepsRunning) {
  SimRun run = run_sketch("base_station", "-m 25000");
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_NE(run.summary.find("simulated_ms=25000"), std::string::npos);
  EXPECT_NE(run.summary.find("state=time"), std::string::npos);  // neither crashed nor stuck in sleep
  ASSERT_GE(run.lines.size(), 2u);
  EXPECT_EQ(run.lines[0].text, "# boot base_station protocol=T1,T2 payload=v1,v2 channel=76 nodes=1-6");
  EXPECT_EQ(run.lines[1].text, "# radio missing");
  EXPECT_LT(run.lines[1].ms, 1000);
  std::vector<Line> stats = lines_starting(run, "# stats ");
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].text, "# stats uptime_s=10 radio=missing received=0 frames=0 rejected=0");
  EXPECT_EQ(stats[1].text, "# stats uptime_s=20 radio=missing received=0 frames=0 rejected=0");
  EXPECT_NEAR(stats[1].ms - stats[0].ms, 10000, 5);
  EXPECT_TRUE(frames_of(run).empty());  // no radio, no frames; and no garbage read from a missing chip
  for (const Line& l : run.lines) EXPECT_EQ(l.text[0], '#') << l.text;
}

TEST(SensorNodeSim, SleepsBetweenSamplesAndCountsFailedSends) {
  // 3.3 V supply (battery); thermistors at mid-scale (25 °C); light at 40 %; humidity input left at 0 V.
  SimRun run = run_elf("sensor_node", std::string(BUILD_DIR) + "/sensor_node-SIGNING0/sensor_node.elf",  // v1
                       "-m 125000 -v 3300 -a 0=1650 -a 1=1650 -a 2=1320");
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_NE(run.summary.find("simulated_ms=125000"), std::string::npos);
  ASSERT_GE(run.lines.size(), 2u);
  EXPECT_EQ(run.lines[0].text, "# boot sensor_node node=1 channel=76 sample_s=60");
  EXPECT_EQ(run.lines[1].text, "# radio missing");
  std::vector<Line> sent = lines_starting(run, "# sent ");
  ASSERT_EQ(sent.size(), 3u);  // at ~0, ~60 and ~120 s: asleep in between
  std::regex fields(R"(# sent seq=(\d+) metrics=(\d+) vbat_mv=(\d+) ack=no failures=(\d+))");
  for (size_t i = 0; i < sent.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(sent[i].text, m, fields)) << sent[i].text;
    EXPECT_EQ(std::stoul(m[1]), i);
    EXPECT_EQ(std::stoul(m[2]), 3u);  // temp_in, temp_out, light; the 0 V humidity input is left out
    EXPECT_NEAR(std::stod(m[3]), 3300, 15);
    EXPECT_EQ(std::stoul(m[4]), i + 1);
    if (i) {
      long gap = sent[i].ms - sent[i - 1].ms;
      // Asleep 7 x 8 s + 4 s watchdog periods of 1024K / 512K cycles of the 128 kHz oscillator (8.192 s,
      // 4.096 s: 61.44 s), plus well under a second awake.
      EXPECT_GE(gap, 61440);
      EXPECT_LE(gap, 62000);
    }
  }
}
