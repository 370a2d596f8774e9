#include "runner/bounded_capture.h"

#include <algorithm>

namespace cudadiag::runner {

BoundedCapture::BoundedCapture(size_t limit)
    : head_limit_(limit / 2), tail_limit_(limit - limit / 2) {}

void BoundedCapture::append(const char* data, size_t n) {
  total_ += n;
  const size_t to_head = std::min(n, head_limit_ - head_.size());
  head_.append(data, to_head);
  data += to_head;
  n -= to_head;
  if (n == 0 || tail_limit_ == 0) return;
  // Only the last tail_limit_ bytes of this chunk can survive.
  if (n >= tail_limit_) {
    ring_.assign(data + (n - tail_limit_), tail_limit_);
    ring_start_ = 0;
    return;
  }
  const size_t room = tail_limit_ - ring_.size();
  const size_t appended = std::min(n, room);
  ring_.append(data, appended);
  data += appended;
  n -= appended;
  // The ring is full: overwrite the oldest bytes.
  while (n > 0) {
    const size_t chunk = std::min(n, tail_limit_ - ring_start_);
    ring_.replace(ring_start_, chunk, data, chunk);
    ring_start_ = (ring_start_ + chunk) % tail_limit_;
    data += chunk;
    n -= chunk;
  }
}

Capture BoundedCapture::finish() const {
  Capture c;
  c.head = head_;
  c.tail = ring_.substr(ring_start_) + ring_.substr(0, ring_start_);
  c.total_bytes = total_;
  c.dropped_bytes = total_ - c.head.size() - c.tail.size();
  return c;
}

std::string Capture::text() const {
  if (dropped_bytes == 0) return head + tail;
  return head + "\n[... " + std::to_string(dropped_bytes) + " bytes dropped ...]\n" + tail;
}

}  // namespace cudadiag::runner
