// EEPROM images (Intel HEX, as avrdude and sim_uno -e/-o read and write them) and shell commands, for the
// simulator suites that provision nodes.
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sim {

struct Command {
  int status;
  std::string output;  // stdout and stderr
};

inline Command run(const std::string& command) {
  Command result{-1, ""};
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return result;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) result.output += buf;
  int status = pclose(p);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Intel HEX, 16 data bytes a record, as avr-objcopy writes .eep files.
inline void write_ihex(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path);
  for (size_t at = 0; at < bytes.size(); at += 16) {
    size_t n = std::min<size_t>(16, bytes.size() - at);
    unsigned sum = static_cast<unsigned>(n + (at >> 8) + (at & 0xFF));
    char head[16];
    std::snprintf(head, sizeof head, ":%02X%04X00", static_cast<unsigned>(n), static_cast<unsigned>(at));
    out << head;
    for (size_t i = 0; i < n; ++i) {
      char b[3];
      std::snprintf(b, sizeof b, "%02X", bytes[at + i]);
      out << b;
      sum += bytes[at + i];
    }
    char check[4];
    std::snprintf(check, sizeof check, "%02X\n", (256 - sum % 256) % 256);
    out << check;
  }
  out << ":00000001FF\n";
}

// The 1024 EEPROM bytes an image sets (data records only; the rest erased, FF). Empty if a record is malformed.
inline std::vector<uint8_t> read_ihex(const std::string& path) {
  std::vector<uint8_t> eeprom(1024, 0xFF);
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.size() < 11 || line[0] != ':') return {};
    unsigned n = std::stoul(line.substr(1, 2), nullptr, 16), at = std::stoul(line.substr(3, 4), nullptr, 16);
    if (line.substr(7, 2) != "00") continue;
    if (line.size() < 11 + 2 * n || at + n > eeprom.size()) return {};
    for (unsigned i = 0; i < n; ++i) eeprom[at + i] = static_cast<uint8_t>(std::stoul(line.substr(9 + 2 * i, 2), nullptr, 16));
  }
  return eeprom;
}

inline uint32_t le32_at(const std::vector<uint8_t>& bytes, size_t at) {
  return bytes[at] | bytes[at + 1] << 8 | bytes[at + 2] << 16 | static_cast<uint32_t>(bytes[at + 3]) << 24;
}

}  // namespace sim
