// The radio path under simulation: the compiled base_station.elf and sensor_node.elf (NODE_ID variants sampling
// every 2 s, and the default 60 s build) joined by the nRF24L01+ model. Expected values come from the injected
// voltages and from PROTOCOL.md 6.2, independently of the firmware; all times are simulated.
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "radio_net.h"

namespace {

using namespace sim;
using nlohmann::json;

// Samples of a 2 s node booted at 150 ms: sent at ~0.2, 2.27, 4.34, ... s.
const NodeInputs kInputs = {1650, 1200, 1980, 1500};

// HIH-4030 on a 3.3 V supply, temperature-compensated at temp_c (its datasheet formula), for ADC count `count`.
double humidity_at(double count, double temp_c) {
  return (count / 1023.0 - 0.16) / 0.0062 / (1.0546 - 0.00216 * temp_c);
}

// Each value is what the injected voltages give, to within the ADC's rounding (a count and a half).
void expect_node_values(const Frame& f, const NodeInputs& in) {
  ASSERT_EQ(f.values.size(), 5u);
  const char* keys[] = {"temp_in", "temp_out", "humidity", "light", "vbat"};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(f.values[i].first, keys[i]);
  expect_temperature(value_of(f, "temp_in"), in.temp_in, kNodeVcc);
  expect_temperature(value_of(f, "temp_out"), in.temp_out, kNodeVcc);
  double count = in.humidity * 1023.0 / kNodeVcc, t = value_of(f, "temp_in");
  EXPECT_GE(value_of(f, "humidity"), humidity_at(count - 1.5, t) - 0.05);
  EXPECT_LE(value_of(f, "humidity"), humidity_at(count + 1.5, t) + 0.05);
  expect_light(value_of(f, "light"), in.light, kNodeVcc);
  EXPECT_NEAR(value_of(f, "vbat"), kNodeVcc / 1000.0, 0.015);
}

// A payload (PROTOCOL.md 6.2, hex from the trace) as the frame the base station must print for it: seq and values.
Frame frame_of_payload(const std::string& hex) {
  std::vector<int> b;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) b.push_back(std::stoi(hex.substr(i, 2), nullptr, 16));
  static const std::map<int, std::pair<std::string, int>> metrics = {
      {1, {"temp_in", 2}}, {2, {"temp_out", 2}}, {3, {"temp_check", 2}}, {4, {"humidity", 1}}, {5, {"light", 0}}};
  Frame f;
  f.ms = 0;
  EXPECT_EQ(b.at(0), 1);  // version
  f.source = "node" + std::to_string(b.at(1));
  f.seq = b.at(2) | b.at(3) << 8;
  for (int i = 0; i < b.at(7); ++i) {
    const auto& m = metrics.at(b.at(8 + 3 * i));
    int16_t raw = (int16_t)(b.at(9 + 3 * i) | b.at(10 + 3 * i) << 8);
    f.values.push_back({m.first, raw / std::pow(10.0, m.second)});
  }
  f.values.push_back({"vbat", (b.at(4) | b.at(5) << 8) / 1000.0});
  return f;
}

std::vector<json> transmissions(const std::vector<json>& packets, const std::string& kind, const std::string& from,
                                int pkt) {
  std::vector<json> out;
  for (const json& p : packets) {
    if (p["kind"] == kind && p["from"] == from && p["pkt"] == pkt) out.push_back(p);
  }
  return out;
}

std::string rx(const json& packet, const std::string& who) {
  return packet["rx"].contains(who) ? packet["rx"][who].get<std::string>() : "(nothing)";
}

using Sends = std::vector<std::tuple<int, bool, int>>;  // (seq, acked, failures) of each "# sent" line

Sends sends(const board_t* node) {
  Sends out;
  std::regex line(R"(# sent seq=(\d+) metrics=4 vbat_mv=33\d\d ack=(yes|no) failures=(\d+))");
  for (const Line& l : RadioNet::lines(node, "# sent ")) {
    std::smatch m;
    EXPECT_TRUE(std::regex_match(l.text, m, line)) << l.text;
    out.emplace_back(std::stoi(m[1]), m[2] == "yes", std::stoi(m[3]));
  }
  return out;
}

std::vector<long> seqs(const std::vector<Frame>& frames) {
  std::vector<long> out;
  for (const Frame& f : frames) out.push_back(f.seq);
  return out;
}

// The base station and node 1 (booted at 150 ms, sampling every 2 s) run for 5 simulated seconds: samples 0, 1, 2.
struct OneNode {
  explicit OneNode(const faults_t& faults) : net(faults), base(net.base()), node(net.node(1, 150, kInputs)) {
    net.run_until_ms(5000);
  }
  RadioNet net;
  board_t* base;
  board_t* node;
};

faults_t drop(const char* spec, int ack) {
  faults_t f{};
  f.seed = 1;
  EXPECT_EQ(faults_add_drop(&f, spec, ack), 0) << spec;
  return f;
}

}  // namespace

TEST(RadioSim, EndToEndFramesCarryTheInjectedVoltagesWithoutGaps) {
  RadioNet net;
  board_t* base = net.base();
  board_t* node = net.node(1, 150, kInputs);
  net.run_until_ms(11000);
  ASSERT_GE(RadioNet::lines(base).size(), 2u);
  EXPECT_EQ(RadioNet::lines(base)[1].text, "# radio ok");
  EXPECT_EQ(RadioNet::lines(node, "# radio")[0].text, "# radio ok");
  std::vector<Frame> frames = RadioNet::frames(base);
  EXPECT_EQ(seqs(frames), (std::vector<long>{0, 1, 2, 3, 4, 5}));
  for (const Frame& f : frames) {
    EXPECT_EQ(f.source, "node1");
    expect_node_values(f, kInputs);
  }
  Sends expected_sends;
  for (int i = 0; i < 6; ++i) expected_sends.emplace_back(i, true, 0);
  EXPECT_EQ(sends(node), expected_sends);
  // What went over the air is exactly what came out of the base station.
  std::vector<json> packets = net.packets();
  for (size_t i = 0; i < frames.size(); ++i) {
    std::vector<json> tx = transmissions(packets, "data", "node1", (int)i);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(rx(tx[0], "base"), "delivered");
    Frame sent = frame_of_payload(tx[0]["payload"]);
    EXPECT_EQ(sent.seq, frames[i].seq);
    EXPECT_EQ(sent.values, frames[i].values);
    EXPECT_EQ(tx[0]["addr"], "54454c4501");  // RF_ADDRESS_PREFIX << 8 | NODE_ID
    EXPECT_EQ(tx[0]["ch"], 76);
    EXPECT_EQ(tx[0]["kbps"], 250);
  }
  EXPECT_EQ(net.stats().delivered, 6u);
  EXPECT_EQ(net.stats().lost + net.stats().collisions + net.stats().max_rt + net.stats().dup_dropped, 0u);
}

TEST(RadioSim, ADroppedPacketIsRetransmittedAndArrivesOnce) {
  OneNode run(drop("1:1", 0));
  RadioNet& net = run.net;
  EXPECT_EQ(seqs(RadioNet::frames(run.base)), (std::vector<long>{0, 1, 2}));
  EXPECT_EQ(sends(run.node), (Sends{{0, true, 0}, {1, true, 0}, {2, true, 0}}));
  std::vector<json> tx = transmissions(net.packets(), "data", "node1", 1);
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx[0]["fault"], "scripted");
  EXPECT_EQ(rx(tx[0], "base"), "lost");
  EXPECT_EQ(tx[1]["attempt"], 1);
  EXPECT_EQ(rx(tx[1], "base"), "delivered");
  EXPECT_EQ(tx[1]["pid"], tx[0]["pid"]);  // a retransmission keeps its packet id
  EXPECT_EQ(net.stats().lost, 1u);
  EXPECT_EQ(net.stats().delivered, 3u);
  EXPECT_EQ(net.stats().max_rt, 0u);
}

TEST(RadioSim, AllRetriesLostTheNodeCountsAFailureAndTheSeqHasAGap) {
  OneNode run(drop("1:1:all", 0));
  RadioNet& net = run.net;
  EXPECT_EQ(seqs(RadioNet::frames(run.base)), (std::vector<long>{0, 2}));
  EXPECT_EQ(sends(run.node), (Sends{{0, true, 0}, {1, false, 1}, {2, true, 1}}));
  std::vector<Line> failures = RadioNet::lines(run.base, "# node1 ");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].text, "# node1 send_failures=1");  // carried by seq 2's payload
  std::vector<json> tx = transmissions(net.packets(), "data", "node1", 1);
  ASSERT_EQ(tx.size(), 16u);  // the first transmission and 15 retries (ARC)
  for (size_t i = 0; i < tx.size(); ++i) {
    EXPECT_EQ(tx[i]["attempt"], (int)i);
    EXPECT_EQ(rx(tx[i], "base"), "lost");
  }
  // ARD = 1.5 ms from one end to the next start (SETUP_RETR 0x5F).
  EXPECT_NEAR(tx[1]["t_us"].get<double>() - tx[0]["end_us"].get<double>(), 1500, 1);
  EXPECT_EQ(net.stats().max_rt, 1u);
  EXPECT_EQ(net.stats().lost, 16u);
}

TEST(RadioSim, ALostAckIsRetransmittedAndDroppedAtTheRadioByPacketId) {
  OneNode run(drop("1:1", 1));
  RadioNet& net = run.net;
  EXPECT_EQ(seqs(RadioNet::frames(run.base)), (std::vector<long>{0, 1, 2}));
  EXPECT_EQ(sends(run.node), (Sends{{0, true, 0}, {1, true, 0}, {2, true, 0}}));
  std::vector<json> packets = net.packets();
  std::vector<json> data = transmissions(packets, "data", "node1", 1), acks = transmissions(packets, "ack", "base", 1);
  ASSERT_EQ(data.size(), 2u);
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(rx(data[0], "base"), "delivered");
  EXPECT_EQ(acks[0]["fault"], "scripted");
  EXPECT_EQ(rx(acks[0], "node1"), "lost");
  EXPECT_EQ(rx(data[1], "base"), "dup_dropped");  // same PID and CRC as the packet before it
  EXPECT_EQ(rx(acks[1], "node1"), "acked");
  EXPECT_EQ(net.stats().dup_dropped, 1u);
  EXPECT_EQ(net.stats().acks_lost, 1u);
}

// 20 % of data packets and 20 % of ACKs lost at random: retries get every sample through exactly once, and every
// packet the base station's radio takes (new or repeated) is acknowledged on the air.
TEST(RadioSim, RandomLossOfPacketsAndAcksStillDeliversEverySampleOnce) {
  faults_t faults{};
  faults.seed = 3;
  faults.loss = faults.ack_loss = 0.2;
  RadioNet net(faults);
  board_t* base = net.base();
  net.node(1, 150, kInputs);
  net.node(2, 1150, kInputs);
  net.run_until_ms(20500);
  for (const char* source : {"node1", "node2"}) {
    EXPECT_EQ(seqs(RadioNet::frames(base, source)), (std::vector<long>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})) << source;
  }
  size_t taken = 0, acks = 0;
  for (const json& p : net.packets()) {
    if (p["kind"] == "ack") ++acks;
    if (p["kind"] == "data" && (rx(p, "base") == "delivered" || rx(p, "base") == "dup_dropped")) ++taken;
  }
  EXPECT_EQ(acks, taken);
  EXPECT_EQ(net.stats().delivered, 20u);
  EXPECT_GT(net.stats().lost, 0u);
  EXPECT_GT(net.stats().acks_lost, 0u);
  EXPECT_EQ(net.stats().dup_dropped, net.stats().acks_lost);  // each lost ACK brought one repeat, dropped
  EXPECT_EQ(net.stats().max_rt, 0u);
}

TEST(RadioSim, CorruptedPacketsFailTheCrcAndAreSentAgain) {
  faults_t faults{};
  faults.seed = 4;
  faults.corrupt = 0.3;
  OneNode run(faults);
  EXPECT_EQ(seqs(RadioNet::frames(run.base)), (std::vector<long>{0, 1, 2}));
  size_t crc_errors = 0;
  for (const json& p : run.net.packets()) {
    if (p["fault"] == "corrupt") {
      EXPECT_EQ(rx(p, p["kind"] == "data" ? "base" : "node1"), "crc_error");
    }
    crc_errors += p["fault"] == "corrupt" && p["kind"] == "data";
  }
  EXPECT_GT(crc_errors, 0u);
  EXPECT_EQ(run.net.stats().lost, crc_errors);
}

// Five nodes 2 ms apart: the base station prints a frame per packet, ~7 ms each at 115200 baud once its 64-byte
// serial buffer is full; meanwhile three packets fill its RX FIFO, the fifth is dropped without an ACK, and node 5
// retries until there is room.
TEST(RadioSim, AFullRxFifoDropsWithoutAckAndTheNodeRetries) {
  RadioNet net;
  board_t* base = net.base();
  for (int id = 1; id <= 5; ++id) net.node(id, 150 + 2.0 * id, kInputs);
  net.run_until_ms(1000);
  for (int id = 1; id <= 5; ++id) {
    EXPECT_EQ(seqs(RadioNet::frames(base, "node" + std::to_string(id))), (std::vector<long>{0})) << id;
  }
  std::vector<json> packets = net.packets();
  std::vector<json> tx = transmissions(packets, "data", "node5", 0);
  ASSERT_GE(tx.size(), 2u);
  EXPECT_EQ(rx(tx[0], "base"), "rx_full");
  EXPECT_EQ(transmissions(packets, "ack", "base", 0).size(), 5u);  // one per node, none for a dropped packet
  for (size_t i = 1; i + 1 < tx.size(); ++i) EXPECT_EQ(rx(tx[i], "base"), "rx_full");
  EXPECT_EQ(rx(tx.back(), "base"), "delivered");
  EXPECT_EQ(net.stats().max_rt, 0u);
}

// A node that restarts (its MCU resets; the radio stays powered and keeps counting packet ids) sends seq 0 again
// with the same content under a new packet id: the radio cannot tell, so the duplicate reaches the serial line
// and only the gateway can drop it. Had the radio restarted too, its packet id would start over and repeat the
// last one's: then the receiving radio drops the repeat itself.
TEST(RadioSim, ARestartedNodesRepeatedSeqZeroReachesTheSerialLineUnlessItsPacketIdRepeatsToo) {
  for (bool radio_restarts : {false, true}) {
    SCOPED_TRACE(radio_restarts ? "MCU and radio restart" : "MCU restarts");
    RadioNet net;
    board_t* base = net.base();
    board_t* node = net.node(1, 150, kInputs);
    net.run_until_ms(500);
    ASSERT_EQ(sends(node).size(), 1u);
    if (radio_restarts) board_set_radio(node, 0);
    board_reset(node);
    if (radio_restarts) board_set_radio(node, 1);
    net.run_until_ms(1000);
    EXPECT_EQ(RadioNet::lines(node, "# boot ").size(), 2u);
    EXPECT_EQ(sends(node), (Sends{{0, true, 0}, {0, true, 0}}));
    std::vector<Line> frames = RadioNet::lines(base, "$");
    std::vector<json> tx = net.packets();
    std::vector<json> first = transmissions(tx, "data", "node1", 0), second = transmissions(tx, "data", "node1", 1);
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(second.size(), 1u);
    const json& repeat = second[0];
    EXPECT_EQ(repeat["payload"], first[0]["payload"]);
    if (radio_restarts) {
      EXPECT_EQ(repeat["pid"], first[0]["pid"]);
      EXPECT_EQ(rx(repeat, "base"), "dup_dropped");
      ASSERT_EQ(frames.size(), 1u);
    } else {
      EXPECT_NE(repeat["pid"], first[0]["pid"]);
      EXPECT_EQ(rx(repeat, "base"), "delivered");
      ASSERT_EQ(frames.size(), 2u);
      EXPECT_EQ(frames[1].text, frames[0].text);
    }
  }
}

TEST(RadioSim, SixNodesOnPipesZeroToFiveDeliverEverySample) {
  RadioNet net;
  board_t* base = net.base();
  std::vector<board_t*> nodes;
  for (int id = 1; id <= 6; ++id) {
    NodeInputs in = {1500u + 60 * id, 1700u - 40 * id, 600u + 300 * id, 1400u + 50 * id};
    nodes.push_back(net.node(id, 100 + 17 * id, in));
  }
  net.run_until_ms(7000);
  for (int id = 1; id <= 6; ++id) {
    SCOPED_TRACE("node" + std::to_string(id));
    std::vector<Frame> frames = RadioNet::frames(base, "node" + std::to_string(id));
    EXPECT_EQ(seqs(frames), (std::vector<long>{0, 1, 2, 3}));
    NodeInputs in = {1500u + 60 * id, 1700u - 40 * id, 600u + 300 * id, 1400u + 50 * id};
    for (const Frame& f : frames) expect_node_values(f, in);
  }
  EXPECT_TRUE(RadioNet::lines(base, "# reject").empty());  // each on its own pipe: node id == pipe + 1
  std::vector<json> packets = net.packets();
  for (int id = 1; id <= 6; ++id) {
    std::vector<json> tx = transmissions(packets, "data", "node" + std::to_string(id), 0);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0]["addr"].get<std::string>().substr(8), "0" + std::to_string(id));
  }
  EXPECT_EQ(net.stats().delivered, 24u);
  EXPECT_EQ(net.stats().collisions, 0u);
}

// Nodes that boot at the same instant transmit at the same instant and retransmit after the same ARD, so they
// collide on every attempt. Real watchdogs (+-10 %) pull them apart after a sample or two; simavr's is exact, so
// here they stay together: the collisions are the point of this test.
TEST(RadioSim, NodesBootingTogetherCollideOnEveryAttempt) {
  RadioNet net;
  board_t* base = net.base();
  std::vector<board_t*> nodes;
  for (int id = 1; id <= 6; ++id) nodes.push_back(net.node(id, 150, kInputs));
  net.run_until_ms(3000);
  EXPECT_TRUE(RadioNet::frames(base).empty());
  for (board_t* node : nodes) {
    EXPECT_EQ(sends(node), (Sends{{0, false, 1}, {1, false, 2}}));
  }
  std::vector<json> packets = net.packets();
  for (int id = 1; id <= 6; ++id) {
    std::vector<json> tx = transmissions(packets, "data", "node" + std::to_string(id), 0);
    ASSERT_EQ(tx.size(), 16u);
    for (const json& p : tx) EXPECT_TRUE(p["collision"].get<bool>());
  }
  EXPECT_EQ(net.stats().delivered, 0u);
  EXPECT_EQ(net.stats().max_rt, 12u);
}

TEST(RadioSim, ASleepingNodeSamplesEvery61sWithItsRadioPoweredDown) {
  RadioNet net;
  board_t* base = net.base();
  board_t* node = net.node(1, 150, kInputs, kSixtySecondNodeElf);
  struct Probe {
    board_t* node;
    long asleep_ms, radio_on_while_asleep;
  } probe = {node, 0, 0};
  net.sim()->every_ms_ctx = &probe;
  net.sim()->every_ms = [](void* ctx) {
    Probe* p = static_cast<Probe*>(ctx);
    if (!board_sleeping(p->node)) return;
    ++p->asleep_ms;
    if (p->node->radio.state != NRF_POWER_DOWN) ++p->radio_on_while_asleep;
  };
  net.run_until_ms(300000);
  std::vector<Frame> frames = RadioNet::frames(base);
  EXPECT_EQ(seqs(frames), (std::vector<long>{0, 1, 2, 3, 4}));
  for (size_t i = 1; i < frames.size(); ++i) {
    // 7 x 8 s + 4 s watchdog periods of the 128 kHz oscillator (8.192 s, 4.096 s: 61.44 s) plus the time awake
    EXPECT_GE(frames[i].ms - frames[i - 1].ms, 61440);
    EXPECT_LE(frames[i].ms - frames[i - 1].ms, 62000);
  }
  EXPECT_GT(probe.asleep_ms, 290000);
  EXPECT_EQ(probe.radio_on_while_asleep, 0);
  EXPECT_LT(nrf24_powered_ticks(&node->radio) / TICKS_PER_MS, 100u);  // ~7 ms per sample: power-up and send
}

TEST(RadioSim, TheBaseStationReportsARadioMissingAtBootAndOneLostLater) {
  RadioNet net;
  board_t* late = net.base(false);
  net.run_until_ms(12000);
  board_set_radio(late, 1);  // plugged in while running
  net.run_until_ms(21000);
  std::vector<Line> lines = RadioNet::lines(late);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1].text, "# radio missing");
  EXPECT_EQ(lines[2].text, "# stats uptime_s=10 radio=missing received=0 frames=0 rejected=0");
  EXPECT_EQ(lines[3].text, "# radio ok");
  EXPECT_EQ(lines[4].text, "# stats uptime_s=20 radio=ok received=0 frames=0 rejected=0");

  RadioNet net2;
  board_t* base = net2.base();
  net2.run_until_ms(5000);
  board_set_radio(base, 0);  // pulled out (or browned out) while running
  net2.run_until_ms(11000);
  lines = RadioNet::lines(base);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[1].text, "# radio ok");
  EXPECT_EQ(lines[lines.size() - 2].text, "# radio lost");  // at the next status check
  EXPECT_NEAR(lines.back().ms, 10000, 50);
  // Until then the sketch keeps polling a bus that reads 0: FIFO_STATUS 0 says a payload waits, R_RX_PL_WID 0 makes
  // it a corrupt one, and each is rejected (a real module's floating MISO may read 0 as well).
  size_t rejects = lines.size() - 4;
  for (size_t i = 2; i < 2 + rejects; ++i) EXPECT_EQ(lines[i].text, "# reject payload_size pipe=0 detail=0");
  EXPECT_EQ(lines.back().text,
            "# stats uptime_s=10 radio=missing received=0 frames=0 rejected=" + std::to_string(rejects));
}

TEST(RadioSim, TheCommandPrintsFramesAndEndsWithTheSummaryLine) {
  std::string err = std::string(BUILD_DIR) + "/tests/radio_sim.stderr";
  std::string command = std::string(BUILD_DIR) + "/tests/radio_sim --nodes 2 --sample-s 2 --seconds 5 --seed 7 " +
                        kBaseElf + " " + node_elf(1, 2) + " " + node_elf(2, 2) + " 2>" + err;
  FILE* out = popen(command.c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::map<std::string, std::vector<long>> seqs_by_node;
  char buf[512];
  while (fgets(buf, sizeof buf, out)) {
    std::string text = buf;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    Frame f;
    if (text[0] == '$' && parse_frame({0, text}, f)) seqs_by_node[f.source].push_back(f.seq);
  }
  ASSERT_EQ(pclose(out), 0);
  // Both nodes boot within the first 2.1 s and sample every 2.05 s: 2 or 3 samples each, all delivered.
  size_t frames = 0;
  for (const char* source : {"node1", "node2"}) {
    std::vector<long> seqs = seqs_by_node[source];
    EXPECT_TRUE(seqs == (std::vector<long>{0, 1}) || seqs == (std::vector<long>{0, 1, 2})) << source;
    frames += seqs.size();
  }
  std::ifstream in(err);
  std::string last;
  for (std::string l; std::getline(in, l);) last = l;
  EXPECT_EQ(last, "simulated_ms=5000 delivered=" + std::to_string(frames) +
                      " lost=0 dup_dropped=0 acks_lost=0 collisions=0 max_rt=0 forged=0 replayed=0");
  command = std::string(BUILD_DIR) + "/tests/radio_sim --nodes 1 --seconds 1 --drop-data 7:1 " + kBaseElf + " " +
            node_elf(1, 2) + " 2>/dev/null";
  EXPECT_EQ(WEXITSTATUS(std::system(command.c_str())), 1);  // node 7 does not exist
}
