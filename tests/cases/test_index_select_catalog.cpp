#include <catch2/catch.hpp>

#include <string>

#include "cases/catalog.h"

using namespace cudadiag;
using namespace cudadiag::cases;

TEST_CASE("the index_select catalog covers the seed's layouts with derived expectations") {
  for (const char* id : {"head-slice-stride", "head-slice-copy", "head-slice-assume-contiguous",
                         "head-slice-offset-twice", "oob-index-checked", "oob-index-unchecked",
                         "negative-index-unchecked"}) {
    const CaseDef* c = find_case(std::string("index_select.") + id);
    INFO(id);
    REQUIRE(c != nullptr);
    for (const char* profile : {"default", "blocking", "nocache", "fence", "blocking+fence", "sanitizer"}) {
      INFO(profile);
      CHECK_FALSE(expectation_text(*c, profile).empty());
      CHECK_NOTHROW(Expectation::parse(expectation_text(*c, profile)));
    }
    CHECK(normalize_params(Family::index_select, c->params) == c->params);
  }
  CHECK(expectation_text(*find_case("index_select.head-slice-assume-contiguous"), "fence") == "mismatch");
  CHECK(expectation_text(*find_case("index_select.head-slice-offset-twice"), "blocking+fence") ==
        "error:memory_fault");
  CHECK(find_case("index_select.negative-index-unchecked")->fence_allocator == profiles::Allocator::fence_front);
}

TEST_CASE("an expectation says whether it allows or requires a CUDA error from its alternatives, not its spelling") {
  using cases::Expectation;
  CHECK(Expectation::parse("error:710").requires_error());
  CHECK(Expectation::parse("error|cuda_error|error:memory_fault").requires_error());
  CHECK_FALSE(Expectation::parse("silent|error:memory_fault").requires_error());
  CHECK(Expectation::parse("silent|error:memory_fault").allows_error());
  CHECK_FALSE(Expectation::parse("silent").allows_error());
  CHECK_FALSE(Expectation::parse("ok|mismatch").allows_error());
  CHECK_FALSE(Expectation::parse("").requires_error());
  CHECK_FALSE(Expectation::parse("any").allows_error());
}
