#pragma once
// Every fuzz target defines the libFuzzer entry point. The same function is linked
// into a libFuzzer binary (scripts/fuzz.sh, clang, ASan+UBSan) and into a replay
// binary (replay_main.cpp, the normal build) that ctest runs over the committed corpus.
//
// A target returns normally for every input: an input error the tool reports with
// exit 2 (InputError, UsageError, XmlError) is caught inside; anything else escaping
// (an exception that would be exit 4, a crash, undefined behaviour) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

inline std::string_view fuzz_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}
