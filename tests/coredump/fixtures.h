#pragma once
// The real dumps under tests/coredump/data (captured on an H100 by
// scripts/device/capture-coredumps.sh; README.md there) and what goes with them: the
// program's output, and nvdisasm's listing of the faulting kernel stored as text, so the
// address logic is tested where no nvdisasm is installed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "coredump/disassembler.h"

namespace cudadiag::test {

inline std::string coredump_data(const std::string& name) {
  return std::string(CUDADIAG_SOURCE_DIR) + "/tests/coredump/data/" + name;
}

inline std::string slurp_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A disassembler that answers with the stored listing of the fixture's kernel.
inline coredump::DisassembleFn stored_listing(const std::string& fixture) {
  const std::string text = slurp_file(coredump_data(fixture + ".sass.txt"));
  return [text](coredump::Bytes, const coredump::FunctionSymbol&) { return coredump::Listing{text, ""}; };
}

// "buffer=0x7faa1be00000" in the program's output -> the address.
inline std::uint64_t printed_address(const std::string& fixture, const std::string& key) {
  const std::string out = slurp_file(coredump_data(fixture + ".out"));
  const auto at = out.find(key + "=0x");
  REQUIRE(at != std::string::npos);
  return std::stoull(out.substr(at + key.size() + 3), nullptr, 16);
}

}  // namespace cudadiag::test
