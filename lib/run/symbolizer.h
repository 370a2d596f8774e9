#pragma once
// Names the return addresses of an allocation site (lib/run/allocation.h) from the loaded
// objects the interposer recorded: the object holding the address, and the function of its
// own symbol table (.symtab, else .dynsym) holding `address - bias`, demangled. The parent
// reads the files after the program ended; a file is read only when it is a regular file
// that every user may read or that belongs to this user (a program run by root must not
// make it read another user's files), and each file is read once.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/allocation_origin.h"
#include "run/allocation.h"

namespace cudadiag::run {

class Symbolizer {
 public:
  explicit Symbolizer(std::vector<ModuleRecord> modules);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  report::OriginHostFrame frame(std::uint64_t return_address);

 private:
  struct Image;
  const Image* image(const std::string& path);
  std::vector<ModuleRecord> modules_;
  std::map<std::string, std::unique_ptr<Image>> images_;
};

// Where `a` was made, from the site its record names; empty when it names none (or the
// site's record was lost).
report::AllocationOrigin allocation_origin(const InterposerLog& log, const AllocationRecord& a, Symbolizer& symbols);

}  // namespace cudadiag::run
