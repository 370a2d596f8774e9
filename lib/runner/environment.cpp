#include "runner/environment.h"

#include <algorithm>
#include <cstring>

extern char** environ;

namespace cudadiag::runner {

EnvBlock::EnvBlock(std::vector<std::string> entries) : entries_(std::move(entries)) {
  for (auto& e : entries_) pointers_.push_back(e.data());
  pointers_.push_back(nullptr);
}

EnvBlock child_environment(const ChildSpec& spec, char* const* parent) {
  auto overridden = [&](const std::string& name) {
    return name == spec.result_fd_env || spec.env_set.count(name) > 0 ||
           std::find(spec.env_unset.begin(), spec.env_unset.end(), name) != spec.env_unset.end();
  };
  std::vector<std::string> entries;
  for (char* const* p = parent; p && *p; ++p) {
    const char* eq = std::strchr(*p, '=');
    if (!eq) continue;  // malformed entry: not passed on
    if (!overridden(std::string(*p, static_cast<size_t>(eq - *p)))) entries.emplace_back(*p);
  }
  for (const auto& [name, value] : spec.env_set) {
    if (name == spec.result_fd_env) continue;  // the runner owns this one
    entries.push_back(name + "=" + value);
  }
  if (spec.result_pipe) entries.push_back(spec.result_fd_env + "=" + std::to_string(spec.result_fd));
  return EnvBlock(std::move(entries));
}

EnvBlock child_environment(const ChildSpec& spec) { return child_environment(spec, environ); }

}  // namespace cudadiag::runner
