#pragma once
// Keeps the first and last `limit/2` bytes of a stream and counts what fell in
// between, so a child that floods its output neither blocks nor grows our memory.
#include <cstddef>
#include <string>

#include "runner/runner.h"

namespace cudadiag::runner {

class BoundedCapture {
 public:
  explicit BoundedCapture(size_t limit);
  void append(const char* data, size_t n);
  Capture finish() const;

 private:
  size_t head_limit_;
  size_t tail_limit_;
  std::string head_;
  std::string ring_;       // tail bytes, circular once full
  size_t ring_start_ = 0;  // oldest byte of ring_ when full
  unsigned long long total_ = 0;
};

}  // namespace cudadiag::runner
