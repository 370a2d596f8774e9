// The slim dumps (data/slim: the driver's own modules emptied, fuzz seeds) give the same
// site as the full ones: the site depends only on the tables and the kernel's image.
#include <catch2/catch.hpp>

#include "coredump/fault_site.h"
#include "coredump/fault_site_json.h"
#include "fixtures.h"

using namespace cudadiag::coredump;
using cudadiag::test::coredump_data;
using cudadiag::test::stored_listing;

TEST_CASE("slim dumps read to the same site as the full ones") {
  for (const char* name : {"use_after_free", "far_write", "gather_bad_index", "misaligned16", "device_assert"}) {
    INFO(name);
    auto full = to_json(read_fault_site(coredump_data(std::string(name) + ".nvcudmp"), stored_listing(name), "none"));
    auto slim = to_json(read_fault_site(coredump_data(std::string("slim/") + name + ".nvcudmp"), stored_listing(name), "none"));
    for (auto* j : {&full, &slim}) {
      j->erase("file");
      j->erase("file_bytes");
    }
    CHECK(slim == full);
  }
}
