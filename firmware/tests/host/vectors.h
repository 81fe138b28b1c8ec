// Reads the shared protocol vectors (firmware/protocol/vectors/*.json) at test time.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

inline nlohmann::json load_vectors(const std::string& name) {
  std::ifstream in(std::string(VECTORS_DIR) + "/" + name);
  if (!in) throw std::runtime_error("cannot open vector file " + name);
  return nlohmann::json::parse(in).at("cases");
}
