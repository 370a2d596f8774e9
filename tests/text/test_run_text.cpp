// `cudadiag run`'s own text on this machine (no GPU needed): what a person reads first.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

#include "tests/support/temp_dir.h"
#include "views.h"

using namespace cudadiag::test;

TEST_CASE("a plain non-zero exit reads 'exited N', never 'crashed'", "[text][run]") {
  TempDir dir;
  const Run r = run_binary({"run", "--rungs", "native", "--", "sh", "-c", "exit 3"}, dir.path);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(std::regex_search(r.out, std::regex("\nprogram\\.native +native +exited 3 ")));
  CHECK(r.out.find("program.native [native]: exited 3") != std::string::npos);
  CHECK(r.out.find("crashed") == std::string::npos);
}

namespace {

// The text with wrapped lines joined back (newline + indent -> one space), cut into
// clauses at newlines and "; ": what a reader takes as one statement each.
std::vector<std::string> clauses(const std::string& text) {
  const std::string joined = std::regex_replace(text, std::regex("\n +(?![-|] )"), " ");
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < joined.size()) {
    std::size_t end = joined.find_first_of("\n;", start);
    if (end == std::string::npos) end = joined.size();
    std::string c = joined.substr(start, end - start);
    c.erase(0, c.find_first_not_of(" -"));
    if (!c.empty()) out.push_back(c);
    start = end + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("a clean run says so in at most 25 lines, each reason once", "[text][run]") {
  TempDir dir;
  const Run r = run_binary({"run", "--", "/bin/true"}, dir.path);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  const auto lines = std::count(r.out.begin(), r.out.end(), '\n');
  CHECK(lines <= 25);
  // No internal key reaches the reader without -v.
  for (const char* key : {"plan.stop_at_first", "evidence_result", "fence.cuda_unused", "detail "})
    CHECK(r.out.find(key) == std::string::npos);
  // A statement of any length is said once (short ones, like "ok", may repeat).
  const auto all = clauses(r.out);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].size() < 40) continue;
    INFO(all[i]);
    CHECK(std::count(all.begin(), all.end(), all[i]) == 1);
  }
  // With -v the run's own section is there.
  const Run v = run_binary({"run", "-v", "--", "/bin/true"}, dir.path);
  CHECK(v.out.find("plan.stop_at_first") != std::string::npos);
}
