// The words of a child's ending: each one names one ending, and reads back as it.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "runner/ending.h"

using namespace cudadiag::runner;

TEST_CASE("ending: every ending has its own word and reads back as itself", "[ending]") {
  const Ending all[] = {Ending::result, Ending::exit_code, Ending::signal,
                        Ending::timeout, Ending::no_result, Ending::spawn_failed};
  std::set<std::string> words;
  for (const Ending e : all) {
    const std::string word(to_string(e));
    CHECK(word != "?");
    words.insert(word);
    CHECK(parse_ending(word) == e);
  }
  CHECK(words.size() == std::size(all));
  CHECK(std::string(to_string(Ending::exit_code)) == "exit");
  CHECK_FALSE(parse_ending("exit_code"));
  CHECK_FALSE(parse_ending(""));
}
