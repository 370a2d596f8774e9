#include "taxonomy/taxonomy.h"

#include <array>

namespace cudadiag::taxonomy {
namespace {

constexpr std::array<ErrorEntry, 1> kTable{{
    {700, "cudaErrorIllegalAddress", 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "memory_fault", true,
     "a kernel accessed memory it does not own", "re-run with the fence allocator or compute-sanitizer"},
}};

}  // namespace

std::span<const ErrorEntry> all() { return kTable; }

const ErrorEntry* find_runtime(int code) {
  for (const auto& e : kTable)
    if (e.code == code) return &e;
  return nullptr;
}

const ErrorEntry* find_driver(int code) {
  for (const auto& e : kTable)
    if (e.driver_code == code) return &e;
  return nullptr;
}

const ErrorEntry* find_by_name(std::string_view name) {
  for (const auto& e : kTable)
    if (e.name == name || e.driver_name == name) return &e;
  return nullptr;
}

}  // namespace cudadiag::taxonomy
