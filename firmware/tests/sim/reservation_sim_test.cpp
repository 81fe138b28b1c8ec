// The counter reservation across flashing and power cuts (PROTOCOL.md 8.4): the counter floor that
// scripts/node-key-eeprom writes with a key, and the node's reservation write cut between any two of its EEPROM byte
// writes (sim_uno -E), after which the node's counters stay above every counter it sent before the cut.
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim_eeprom.h"
#include "sim_run.h"

namespace {

using namespace sim;

const std::string kTestDir = std::string(BUILD_DIR) + "/tests";
const std::string kSigningNode = std::string(BUILD_DIR) + "/sensor_node/sensor_node.elf";  // node 1, 60 s samples
const char kNodeInputs[] = "-v 3300 -a 0=1650 -a 1=1650 -a 2=1320";
const char kKey[] = "000102030405060708090a0b0c0d0e0f";
const size_t kReservationOffset = 16;

std::string keys_file() {
  std::string path = kTestDir + "/reservation-keys.txt";
  std::remove(path.c_str());
  std::ofstream(path) << "node1 " << kKey << "\nnode2 FFEEDDCCBBAA99887766554433221100\n";
  chmod(path.c_str(), 0600);
  return path;
}

Command key_image(const std::string& args) { return run(std::string(SCRIPTS_DIR) + "/node-key-eeprom " + args); }

// Node 1's key and a stored reservation, as a node's EEPROM holds them.
std::string node_eeprom(const std::string& name, uint32_t reservation) {
  std::vector<uint8_t> image;
  for (size_t i = 0; i < 32; i += 2) image.push_back(static_cast<uint8_t>(std::stoul(std::string(kKey).substr(i, 2), nullptr, 16)));
  for (int i = 0; i < 4; ++i) image.push_back(static_cast<uint8_t>(reservation >> (8 * i)));
  std::string path = kTestDir + "/" + name + ".eep";
  write_ihex(path, image);
  return path;
}

// The counters of the node's "# sent ... counter=N" lines, in order.
std::vector<uint32_t> counters_sent(const SimRun& r) {
  std::vector<uint32_t> out;
  std::regex counter(R"( counter=(\d+)$)");
  for (const Line& l : lines_starting(r, "# sent ")) {
    std::smatch m;
    if (std::regex_search(l.text, m, counter)) out.push_back(static_cast<uint32_t>(std::stoul(m[1])));
  }
  return out;
}

}  // namespace

TEST(CounterFloor, TheKeyImageSetsTheReservationJustAboveTheGatewaysLastCounter) {
  std::string image = kTestDir + "/reservation-floor.eep";
  std::remove(image.c_str());
  Command made = key_image("--counter-floor 74495 " + keys_file() + " 2 " + image);
  ASSERT_EQ(made.status, 0) << made.output;
  // The key record as without a floor, then bytes 16-19: 74496 = 0x00012300, little-endian.
  EXPECT_EQ(file_text(image),
            ":10000000FFEEDDCCBBAA99887766554433221100F8\n:0400100000230100C8\n:00000001FF\n");
  struct stat st;
  ASSERT_EQ(stat(image.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(made.output.find("FFEEDD"), std::string::npos);  // the key is never echoed
  std::remove(image.c_str());
  made = key_image("--counter-floor=0 " + keys_file() + " 2 " + image);
  ASSERT_EQ(made.status, 0) << made.output;
  EXPECT_EQ(le32_at(read_ihex(image), kReservationOffset), 1u);
}

TEST(CounterFloor, RefusesAFloorItCannotWrite) {
  std::string image = kTestDir + "/reservation-refused.eep";
  struct Case {
    std::string args;
    int status;
    std::string message;
  };
  std::string keys = keys_file();
  std::vector<Case> cases = {
      {"--counter-floor 12x " + keys + " 1 " + image, 1, "counter floor must be a whole number"},
      {"--counter-floor -1 " + keys + " 1 " + image, 1, "counter floor must be a whole number"},
      {"--counter-floor 4278189823 " + keys + " 1 " + image, 1, "leaves the node no counters"},
      {"--counter-floor", 2, "--counter-floor needs a value"},
      {"--floor 5 " + keys + " 1 " + image, 2, "unknown option --floor"},
  };
  for (const Case& c : cases) {
    std::remove(image.c_str());
    Command r = key_image(c.args);
    EXPECT_EQ(r.status, c.status) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
    EXPECT_FALSE(file_exists(image)) << "an image was written for: " << c.args;
  }
  Command help = key_image("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("usage: node-key-eeprom [--counter-floor N]"), std::string::npos);
  // The highest floor still leaves the node one block.
  ASSERT_EQ(key_image("--counter-floor 4278189822 " + keys + " 1 " + image).status, 0);
}

TEST(CounterFloor, TheNodesFirstCounterIsAboveTheFloor) {
  std::string image = kTestDir + "/reservation-floor1.eep", after = kTestDir + "/reservation-floor1-after.eep";
  Command made = key_image("--counter-floor 123455 " + keys_file() + " 1 " + image);
  ASSERT_EQ(made.status, 0) << made.output;
  SimRun r = run_elf("reservation-floor", kSigningNode, "-m 3000 -o " + after + " -e " + image + " " + kNodeInputs);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(counters_sent(r), std::vector<uint32_t>{123456});
  EXPECT_EQ(le32_at(read_ihex(after), kReservationOffset), 123456u + 256);
}

// A node has sent counter 0x00FFFE00 (its reservation 0x00FFFF00 stored); it is switched off and on, and its boot
// raises the reservation to 0x01000000: three byte writes (0x00 -> 0x01, 0xFF -> 0x00, 0xFF -> 0x00; the lowest byte
// stays 0x00). The power is cut right after each of them in turn; the node then boots from what the EEPROM holds.
TEST(TornReservationWrite, EveryCutBetweenTwoByteWritesLeavesTheNextCountersAboveAllSent) {
  std::string first_life = kTestDir + "/torn-life1.eep";
  SimRun life1 = run_elf("torn-life1", kSigningNode,
                         "-m 3000 -o " + first_life + " -e " + node_eeprom("torn-start", 0x00FFFE00UL) + " " + kNodeInputs);
  ASSERT_EQ(life1.exit_code, 0);
  std::vector<uint32_t> sent = counters_sent(life1);
  ASSERT_EQ(sent, std::vector<uint32_t>{0x00FFFE00UL});
  ASSERT_EQ(le32_at(read_ihex(first_life), kReservationOffset), 0x00FFFF00UL);

  // What the reservation holds after k byte writes: most significant changed byte first.
  const std::vector<uint32_t> torn = {0x01FFFF00UL, 0x0100FF00UL, 0x01000000UL};
  for (size_t k = 1; k <= torn.size(); ++k) {
    SCOPED_TRACE("power cut after byte write " + std::to_string(k));
    std::string cut_image = kTestDir + "/torn-cut" + std::to_string(k) + ".eep";
    SimRun cut = run_elf("torn-cut" + std::to_string(k), kSigningNode,
                         "-m 3000 -E " + std::to_string(k) + " -o " + cut_image + " -e " + first_life + " " + kNodeInputs);
    ASSERT_EQ(cut.exit_code, 0);
    EXPECT_NE(cut.summary.find("state=eeprom eeprom_writes=" + std::to_string(k)), std::string::npos) << cut.summary;
    EXPECT_TRUE(counters_sent(cut).empty());  // a counter of the new block waits for the whole write
    std::vector<uint8_t> eeprom = read_ihex(cut_image);
    ASSERT_EQ(eeprom.size(), 1024u);
    uint32_t stored = le32_at(eeprom, kReservationOffset);
    EXPECT_EQ(stored, torn[k - 1]);
    EXPECT_GT(stored, sent.back());

    SimRun next = run_elf("torn-next" + std::to_string(k), kSigningNode, "-m 3000 -e " + cut_image + " " + kNodeInputs);
    ASSERT_EQ(next.exit_code, 0);
    std::vector<uint32_t> after = counters_sent(next);
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0], torn[k - 1]);  // the boot starts at what the torn reservation reads
    EXPECT_GT(after[0], sent.back());
  }
  // The update takes exactly those three writes: a run not cut makes no fourth before its first send.
  SimRun whole = run_elf("torn-whole", kSigningNode, "-m 3000 -E 4 -e " + first_life + " " + kNodeInputs);
  EXPECT_NE(whole.summary.find("state=time eeprom_writes=3"), std::string::npos) << whole.summary;
  EXPECT_EQ(counters_sent(whole), std::vector<uint32_t>{0x00FFFF00UL});
}
