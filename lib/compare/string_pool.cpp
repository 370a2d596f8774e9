#include "compare/string_pool.h"

namespace cudadiag::compare {

Text StringPool::intern(std::string_view s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = strings_.find(s);
  if (it == strings_.end()) it = strings_.emplace(s).first;
  return &*it;
}

std::size_t StringPool::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return strings_.size();
}

}  // namespace cudadiag::compare
