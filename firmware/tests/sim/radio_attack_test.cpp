// radio-sim's attacker (tests/sim/radio/attack.c) against version-1 nodes, which nothing protects: what it forges
// and replays reaches the serial line. Against signing nodes and the gateway: firmware/tests/test_signed_radio.py.
// Also the keys file reader and the EEPROM provisioning behind radio-sim --keys.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <simavr/avr_eeprom.h>

#include "radio_net.h"

extern "C" {
#include "radio/attack.h"
#include "radio/keys.h"
}

using namespace sim;
using nlohmann::json;

namespace {

const NodeInputs kInputs = {1650, 1200, 1980, 1500};

struct Attacked {
  lockstep_t* sim;
  attack_t attack;
};

std::string frame_text(const Frame& f) {
  std::string text = f.source + "," + std::to_string(f.seq);
  for (const auto& v : f.values) text += "," + v.first + "=" + std::to_string(v.second);
  return text;
}

std::string write_file(const std::string& name, const std::string& text, mode_t mode) {
  std::string path = std::string(BUILD_DIR) + "/tests/" + name;
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
  return path;
}

}  // namespace

TEST(RadioAttack, WithoutSigningForgedAndReplayedPayloadsReachTheSerialLine) {
  RadioNet net;
  board_t* base = net.base();
  net.node(1, 150, kInputs);
  net.node(2, 1150, kInputs);
  static Attacked attacked;
  attacked = Attacked{net.sim(), attack_t{}};
  ASSERT_EQ(attack_parse(&attacked.attack, "forge,replay"), 0);
  attack_start(&attacked.attack, &net.sim()->air, 2, 3, 2000 * TICKS_PER_MS);
  net.sim()->every_ms_ctx = &attacked;
  net.sim()->every_ms = [](void* ctx) {
    Attacked* a = static_cast<Attacked*>(ctx);
    attack_tick(&a->attack, &a->sim->air, lockstep_now(a->sim));
  };
  net.run_until_ms(11000);
  std::vector<Frame> frames = RadioNet::frames(base);
  std::set<std::string> seen;
  std::vector<long> node1_seqs;
  uint64_t forged = 0, replayed = 0;
  for (const Frame& f : frames) {
    if (f.values[0].first == "temp_in" && f.values[0].second == 20.0) {
      ++forged;  // the forger's warm night
    } else if (!seen.insert(frame_text(f)).second) {
      ++replayed;
    } else if (f.source == "node1") {
      node1_seqs.push_back(f.seq);
    }
  }
  EXPECT_EQ(forged, net.stats().forged);
  EXPECT_EQ(replayed, net.stats().replayed);
  EXPECT_GE(forged, 2u);
  EXPECT_GE(replayed, 2u);
  EXPECT_EQ(node1_seqs, (std::vector<long>{0, 1, 2, 3, 4, 5}));  // every genuine one there, once (every 2.07 s)
  size_t attack_packets = 0;
  for (const json& p : net.packets()) {
    if (p["from"] != "attacker") continue;
    ++attack_packets;
    EXPECT_TRUE(p["attack"] == "forge" || p["attack"] == "replay") << p;
    EXPECT_FALSE(p["collision"].get<bool>()) << p;  // it waits for a quiet channel
    EXPECT_EQ(p["rx"]["base"], "delivered") << p;
  }
  EXPECT_EQ(attack_packets, forged + replayed);
}

TEST(RadioAttack, TheKeysFileIsOwnerOnlyWellFormedAndNeverEchoed) {
  uint8_t keys[KEYS_MAX_NODE + 1][KEY_SIZE] = {};
  int have[KEYS_MAX_NODE + 1] = {};
  std::string good = write_file("keys-good.txt",
                                "# farm keys\n\n  node1 000102030405060708090a0b0c0d0e0f\n"
                                "room\t00000000000000000000000000000000\nnode3 F0E1D2C3B4A5968778695A4B3C2D1E0F\r\n",
                                0600);
  ASSERT_EQ(keys_load(good.c_str(), keys, have), 0);
  EXPECT_EQ(std::vector<int>(have + 1, have + 7), (std::vector<int>{1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(keys[1][15], 0x0F);
  EXPECT_EQ(keys[3][0], 0xF0);

  std::string open = write_file("keys-open.txt", "node1 000102030405060708090a0b0c0d0e0f\n", 0644);
  testing::internal::CaptureStderr();
  EXPECT_EQ(keys_load(open.c_str(), keys, have), -1);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("group or others may read it"), std::string::npos);

  const std::string first = "node1 000102030405060708090a0b0c0d0e0f\n";
  // Line 2 too short a key, a source again, a third field.
  const std::vector<std::string> seconds = {"node2 0011\n", first, "node2 00112233445566778899aabbccddeeff x\n"};
  for (const std::string& second : seconds) {
    std::string path = write_file("keys-bad.txt", first + second, 0600);
    testing::internal::CaptureStderr();
    EXPECT_EQ(keys_load(path.c_str(), keys, have), -1);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("line 2"), std::string::npos) << err;
    EXPECT_EQ(err.find("0011"), std::string::npos) << err;  // never a key's text
    EXPECT_EQ(err.find("0001"), std::string::npos) << err;
  }
}

TEST(RadioAttack, AKeyWrittenIntoANodesEepromSurvivesItsReset) {
  RadioNet net;
  net.base();
  board_t* node = net.node(1, 150, kInputs);
  const uint8_t key[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  ASSERT_EQ(board_write_eeprom(node, 0, key, sizeof key), 0);
  net.run_until_ms(500);
  board_reset(node);
  net.run_until_ms(1000);
  uint8_t back[20];
  avr_eeprom_desc_t get = {back, 0, sizeof back};
  avr_ioctl(node->avr, AVR_IOCTL_EEPROM_GET, &get);
  EXPECT_EQ(std::memcmp(back, key, sizeof key), 0);
  EXPECT_EQ(std::vector<uint8_t>(back + 16, back + 20), std::vector<uint8_t>(4, 0xFF));  // the rest stays erased
}
