#pragma once
// Exceptions that map onto exit codes. Throw UsageError for anything the user can
// fix in their input (flags, files); the message must name what is wrong and where.
#include <stdexcept>
#include <string>

#include "util/exit_codes.h"

namespace cudadiag {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input file problems: the message names the file and the place (line, JSON path).
class InputError : public UsageError {
 public:
  InputError(const std::string& file, const std::string& where, const std::string& what)
      : UsageError(file + (where.empty() ? "" : ": " + where) + ": " + what) {}
};

class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cudadiag
