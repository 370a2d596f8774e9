#pragma once
// The child's environment, built explicitly from the parent's: env_unset removed,
// env_set applied, and result_fd_env=<result_fd> added (removed instead when the spec
// asks for no result pipe).
#include <string>
#include <vector>

#include "runner/runner.h"

namespace cudadiag::runner {

class EnvBlock {
 public:
  explicit EnvBlock(std::vector<std::string> entries);
  // Moving keeps the strings' addresses (the vector's buffer moves); copying would not.
  EnvBlock(EnvBlock&&) = default;
  EnvBlock(const EnvBlock&) = delete;
  EnvBlock& operator=(const EnvBlock&) = delete;
  const std::vector<std::string>& entries() const { return entries_; }
  // NULL-terminated array for posix_spawn; valid while this object lives.
  char* const* pointers() const { return pointers_.data(); }

 private:
  std::vector<std::string> entries_;  // "NAME=value"
  std::vector<char*> pointers_;
};

// `parent` is a NULL-terminated "NAME=value" array (normally environ).
EnvBlock child_environment(const ChildSpec& spec, char* const* parent);
EnvBlock child_environment(const ChildSpec& spec);

}  // namespace cudadiag::runner
