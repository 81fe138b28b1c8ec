// Signed payloads on the AVR: the signed.json cases signed by the compiled library on simavr's ATmega328P (and
// the time it takes), the signing sensor node with and without a key in EEPROM, and the key image that
// `make upload KEY_FILE=` writes (scripts/node-key-eeprom).
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim_eeprom.h"
#include "sim_run.h"

namespace {

using namespace sim;

const std::string kTestDir = std::string(BUILD_DIR) + "/tests";

nlohmann::json json_file(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::vector<uint8_t> unhex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

void put(std::vector<uint8_t>& out, uint32_t value, int size) {
  for (int i = 0; i < size; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void put_block(std::vector<uint8_t>& out, const std::string& hex) {
  std::vector<uint8_t> bytes = unhex(hex);
  out.push_back(static_cast<uint8_t>(bytes.size()));
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// The signed.json cases as the records sign_vectors.ino reads.
std::vector<uint8_t> cases_image(const nlohmann::json& cases) {
  std::vector<uint8_t> image;
  for (const auto& c : cases) {
    image.push_back(1);
    std::vector<uint8_t> key = unhex(c.at("key"));
    image.insert(image.end(), key.begin(), key.end());
    put(image, c.at("node"), 1);
    put(image, c.at("seq"), 2);
    put(image, c.at("counter"), 4);
    put(image, c.at("vbat_mv"), 2);
    put(image, c.at("send_failures"), 1);
    put(image, static_cast<uint32_t>(c.at("metrics").size()), 1);
    for (const auto& m : c.at("metrics")) {
      put(image, m.at(0), 1);
      put(image, static_cast<uint16_t>(m.at(1).get<int>()), 2);
    }
  }
  image.push_back(0);
  return image;
}

// The official SHA-256 and HMAC-SHA256 vectors (tests/vectors/crypto.json) as records.
std::vector<uint8_t> crypto_image(const nlohmann::json& vectors) {
  std::vector<uint8_t> image;
  for (const auto& c : vectors.at("sha256")) {
    image.push_back(2);
    put_block(image, c.at("message"));
  }
  for (const auto& c : vectors.at("hmac_sha256")) {
    image.push_back(3);
    put_block(image, c.at("key"));
    put_block(image, c.at("data"));
  }
  image.push_back(0);
  return image;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string write_keys(const std::string& name, const std::string& text, mode_t mode = 0600) {
  std::string path = kTestDir + "/" + name;
  std::remove(path.c_str());
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
  return path;
}

Command key_image(const std::string& keys, const std::string& node, const std::string& out) {
  return run(std::string(SCRIPTS_DIR) + "/node-key-eeprom " + keys + " " + node + " " + out);
}

const char kKeys[] =
    "# test keys\n"
    "\n"
    "node1 000102030405060708090a0b0c0d0e0f\n"
    "  node3\tFFEEDDCCBBAA99887766554433221100  \n";

const std::string kSigningNode = std::string(BUILD_DIR) + "/sensor_node/sensor_node.elf";  // signs by default
const char kNodeInputs[] = "-v 3300 -a 0=1650 -a 1=1650 -a 2=1320";

}  // namespace

TEST(SignOnAvr, ComputesTheOfficialSha256AndHmacVectors) {
  nlohmann::json vectors = json_file(CRYPTO_VECTORS);
  std::string image = kTestDir + "/crypto_cases.eep";
  write_ihex(image, crypto_image(vectors));
  SimRun r = run_elf("sign_vectors-crypto", std::string(BUILD_DIR) + "/sign_vectors/sign_vectors.elf",
                     "-m 3000 -e " + image);
  ASSERT_EQ(r.exit_code, 0);
  std::vector<Line> sha = lines_starting(r, "sha ");
  std::vector<Line> mac = lines_starting(r, "mac ");
  ASSERT_EQ(sha.size(), vectors.at("sha256").size());
  ASSERT_EQ(mac.size(), vectors.at("hmac_sha256").size());
  for (size_t i = 0; i < sha.size(); ++i) {
    const auto& c = vectors.at("sha256")[i];
    EXPECT_EQ(lower(sha[i].text), "sha " + std::to_string(i) + " " + c.at("digest").get<std::string>()) << c.at("name");
  }
  for (size_t i = 0; i < mac.size(); ++i) {
    const auto& c = vectors.at("hmac_sha256")[i];
    std::string expected = "mac " + std::to_string(i) + " " + c.at("mac").get<std::string>();  // a prefix (case 5)
    EXPECT_EQ(lower(mac[i].text).substr(0, expected.size()), expected) << c.at("name");
  }
}

TEST(SignOnAvr, SignsTheSignedJsonCasesAndTakesUnderFifteenMsAPacket) {
  nlohmann::json cases = json_file(std::string(VECTORS_DIR) + "/signed.json").at("cases");
  std::string image = kTestDir + "/sign_cases.eep";
  write_ihex(image, cases_image(cases));
  SimRun r = run_elf("sign_vectors", std::string(BUILD_DIR) + "/sign_vectors/sign_vectors.elf", "-m 2000 -e " + image);
  ASSERT_EQ(r.exit_code, 0);
  std::vector<Line> got = lines_starting(r, "case ");
  ASSERT_EQ(got.size(), cases.size());
  std::regex line(R"(case (\d+) ([0-9A-F]+) us=(\d+))");
  long slowest = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(got[i].text, m, line)) << got[i].text;
    EXPECT_EQ(std::stoul(m[1]), i);
    EXPECT_EQ(m[2].str(), cases[i].at("signed").get<std::string>() + cases[i].at("tag").get<std::string>())
        << cases[i].at("name");
    slowest = std::max(slowest, std::stol(m[3]));
  }
  // micros() counts in 4 us steps; the timer interrupt runs meanwhile, as it does on the node.
  std::printf("    signing time per packet (payload v2, key prepared at boot, ATmega328P at 16 MHz): %.2f ms = "
              "%ld cycles\n", slowest / 1000.0, slowest * 16);
  EXPECT_LT(slowest, 15000);
}

TEST(SignedSensorNode, WithoutAKeySaysSoAndSendsNothing) {
  SimRun r = run_elf("sensor_node-nokey", kSigningNode, std::string("-m 3000 ") + kNodeInputs);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_GE(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0].text, "# boot sensor_node node=1 channel=76 sample_s=60 payload=v2 key=none");
  EXPECT_EQ(lines_starting(r, "# no key").size(), 1u);  // the first sample; the next is 61 s later
  EXPECT_TRUE(lines_starting(r, "# sent ").empty());
}

TEST(SignedSensorNode, WithAKeyInEepromSignsEachSampleWithTheNextCounter) {
  std::string image = kTestDir + "/node1-key.eep";
  Command made = key_image(write_keys("keys.txt", kKeys), "1", image);
  ASSERT_EQ(made.status, 0) << made.output;
  SimRun r = run_elf("sensor_node-key", kSigningNode, std::string("-m 65000 -e ") + image + " " + kNodeInputs);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_GE(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0].text, "# boot sensor_node node=1 channel=76 sample_s=60 payload=v2");
  std::vector<Line> sent = lines_starting(r, "# sent ");
  ASSERT_EQ(sent.size(), 2u);  // at ~0 and ~61 s
  std::regex fields(R"(# sent seq=(\d+) metrics=3 vbat_mv=\d+ ack=no failures=\d+ counter=(\d+))");
  for (size_t i = 0; i < sent.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(sent[i].text, m, fields)) << sent[i].text;
    EXPECT_EQ(std::stoul(m[1]), i);
    EXPECT_EQ(std::stoul(m[2]), i);  // erased reservation: the first block starts at 0
  }
}

// EEPROM as a node left it (PROTOCOL.md 8.4): the key, then the stored reservation (uint32 little-endian).
std::string node_eeprom(const std::string& name, uint32_t reservation) {
  std::vector<uint8_t> image = unhex("000102030405060708090a0b0c0d0e0f");
  put(image, reservation, 4);
  std::string path = kTestDir + "/" + name + ".eep";
  write_ihex(path, image);
  return path;
}

std::string first_sent(const std::string& name, uint32_t reservation) {
  SimRun r = run_elf(name, kSigningNode, "-m 3000 -e " + node_eeprom(name, reservation) + " " + kNodeInputs);
  EXPECT_EQ(r.exit_code, 0);
  std::vector<Line> sent = lines_starting(r, "# sent ");
  return sent.empty() ? "(none)" : sent[0].text;
}

TEST(SignedSensorNode, TakesItsFirstCounterFromTheStoredReservation) {
  std::string line = first_sent("sensor_node-reserved", 0x00012300UL);
  EXPECT_NE(line.find(" counter=74496"), std::string::npos) << line;  // 0x12300
}

TEST(SignedSensorNode, SendsNothingOnceTheCountersRunOut) {
  std::string line = first_sent("sensor_node-exhausted", 0xFFFFFF00UL);
  EXPECT_NE(line.find(" ack=no failures=1 counter=none"), std::string::npos) << line;
}

TEST(KeyImage, HoldsTheNodesKeyAtEepromOffsetZeroOnly) {
  std::string image = kTestDir + "/node3-key.eep";
  Command made = key_image(write_keys("keys.txt", kKeys), "3", image);
  ASSERT_EQ(made.status, 0) << made.output;
  EXPECT_EQ(made.output.find("FFEEDD"), std::string::npos);  // never echoed
  std::ifstream in(image);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), ":10000000FFEEDDCCBBAA99887766554433221100F8\n:00000001FF\n");
  struct stat st;
  ASSERT_EQ(stat(image.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(KeyImage, RefusesBadKeyFilesWithAClearMessage) {
  std::string out = kTestDir + "/refused.eep";
  struct Case {
    std::string keys;
    std::string node;
    std::string message;
  };
  std::string good = write_keys("keys.txt", kKeys);
  std::vector<Case> cases = {
      {kTestDir + "/no-such-keys.txt", "1", "no such readable file"},
      {good, "2", "has no line for node2"},
      {good, "0", "NODE_ID must be 1-254"},
      {write_keys("open-keys.txt", kKeys, 0644), "1", "readable by group or others (mode 644)"},
      {write_keys("short-keys.txt", "node1 0001020304050607\n"), "1", "line 1: not '<source> <32 hex digits>'"},
      {write_keys("twice-keys.txt", std::string(kKeys) + "node1 00000000000000000000000000000000\n"), "1",
       "line 5: node1 appears twice"},
  };
  for (const Case& c : cases) {
    std::remove(out.c_str());
    Command r = key_image(c.keys, c.node, out);
    EXPECT_NE(r.status, 0) << c.message;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("0001020304"), std::string::npos) << "a key in the message: " << r.output;
    std::ifstream made(out);
    EXPECT_FALSE(made.good()) << "an image was written for: " << c.message;
  }
}
