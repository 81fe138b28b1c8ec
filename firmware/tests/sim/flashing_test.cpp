// `make ispload` / `make upload` with KEY_FILE= (mk/node-key.mk) against a stub avrdude that records its command
// lines and the key image it was handed: the fuse run before the erasing one, and the key image gone afterwards.
// Only the flashing command is stubbed; what a real programmer and chip do with it is the datasheet's (README).
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim_eeprom.h"

namespace {

using namespace sim;

const std::string kStubDir = std::string(BUILD_DIR) + "/tests/flash-stub";
// A node variant of its own (make signing-sketches builds it), so these runs share no build folder with other suites.
const std::string kVariant = std::string(BUILD_DIR) + "/sensor_node-NODE_ID2";
const std::string kKeyImage = kVariant + "/key.eep";

// The stub logs each command line, then the contents of every EEPROM image it was given; exits 1 on a flash write
// when STUB_FAIL_FLASH=1.
std::string stub() {
  run("mkdir -p " + kStubDir);
  std::string path = kStubDir + "/avrdude";
  std::ofstream(path) << "#!/bin/sh\n"
                         "echo \"avrdude $*\" >> " << kStubDir << "/log\n"
                         "status=0\n"
                         "for a in \"$@\"; do case $a in\n"
                         "  eeprom:w:*) f=${a#eeprom:w:}; f=${f%:i}; cat \"$f\" >> " << kStubDir << "/log ;;\n"
                         "  flash:w:*) [ \"${STUB_FAIL_FLASH:-0}\" = 1 ] && status=1 ;;\n"
                         "esac; done\n"
                         "exit $status\n";
  chmod(path.c_str(), 0755);
  std::remove((kStubDir + "/log").c_str());
  std::string keys = kStubDir + "/keys.txt";
  std::ofstream(keys) << "node2 FFEEDDCCBBAA99887766554433221100\n";
  chmod(keys.c_str(), 0600);
  return path;
}

Command make(const std::string& target, const std::string& extra = "") {
  std::string avrdude = stub();
  return run(extra + " make -s -C " + std::string(FIRMWARE_DIR) + "/sensor_node " + target + " NODE_ID=2 KEY_FILE=" +
             kStubDir + "/keys.txt AVRDUDE=" + avrdude);
}

std::vector<std::string> stub_log() {
  std::vector<std::string> lines;
  std::ifstream in(kStubDir + "/log");
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

const char kKeyRecord[] = ":10000000FFEEDDCCBBAA99887766554433221100F8";

}  // namespace

TEST(Flashing, IsploadProgramsEesaveInARunOfItsOwnThenFlashesWithTheKeyAndDeletesTheImage) {
  Command r = make("ispload ISP_PROG=usbasp");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::string> log = stub_log();
  ASSERT_EQ(log.size(), 4u) << r.output;
  // Uno high fuse 0xDE with EESAVE (bit 3) programmed; verified (no -V); no flash write, so no chip erase.
  EXPECT_NE(log[0].find(" -U hfuse:w:0xD6:m"), std::string::npos) << log[0];
  EXPECT_EQ(log[0].find(" -V"), std::string::npos) << log[0];
  EXPECT_EQ(log[0].find("flash:"), std::string::npos) << log[0];
  EXPECT_NE(log[1].find(" -U flash:w:" + kVariant + "/sensor_node.hex:i -U eeprom:w:" + kKeyImage + ":i"),
            std::string::npos) << log[1];
  EXPECT_EQ(log[1].find("eeprom:w:", log[1].find("eeprom:w:") + 1), std::string::npos) << "written twice: " << log[1];
  EXPECT_EQ(log[2], kKeyRecord);  // the image existed while avrdude ran
  EXPECT_EQ(log[3], ":00000001FF");
  EXPECT_FALSE(file_exists(kKeyImage));
}

TEST(Flashing, TheKeyImageIsDeletedWhenTheFlashingRunFails) {
  Command r = make("ispload ISP_PROG=usbasp", "STUB_FAIL_FLASH=1");
  EXPECT_NE(r.status, 0) << r.output;
  std::vector<std::string> log = stub_log();
  ASSERT_EQ(log.size(), 4u) << r.output;
  EXPECT_EQ(log[2], kKeyRecord);
  EXPECT_FALSE(file_exists(kKeyImage));
}

TEST(Flashing, UploadThroughABootloaderDeletesTheImageToo) {
  std::string port = kStubDir + "/ttyUSB-stub";
  stub();
  std::ofstream(port) << "";
  Command r = make("upload PORT=" + port + " BOOTLOADER_EEPROM=yes RESET_CMD=true COUNTER_FLOOR=99");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::string> log = stub_log();
  ASSERT_EQ(log.size(), 4u) << r.output;
  EXPECT_NE(log[0].find(" -D -c arduino -b 115200 -P " + port + " -U flash:w:"), std::string::npos) << log[0];
  EXPECT_EQ(log[1], kKeyRecord);
  EXPECT_EQ(log[2], ":040010006400000088");  // the floor 99: reservation 100
  EXPECT_FALSE(file_exists(kKeyImage));
}
