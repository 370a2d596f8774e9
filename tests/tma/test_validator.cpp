#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "tma/rule_table.h"
#include "tma/validator.h"

using namespace cudadiag::tma;

namespace {

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

const Finding* find(const Verdict& v, const std::string& rule) {
  for (const auto& f : v.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

Descriptor seed_seq1() {
  Descriptor d;
  d.data_type = DataType::bfloat16;
  d.rank = 3;
  d.address = 0x7f4c49e08800;
  d.dims = {128, 1, 32};
  d.strides = {2, 256};
  d.box = {64, 128, 1};
  d.element_strides = {1, 1, 1};
  d.swizzle = Swizzle::b128;
  d.l2_promotion = L2Promotion::b128;
  return d;
}

}  // namespace

TEST_CASE("rule table: the validator finds exactly the expected errors per row", "[tma][validator]") {
  const auto& table = rule_table();
  REQUIRE(table.size() >= 30);
  for (const auto& row : table) {
    INFO(row.name << ": " << summary(row.descriptor));
    const auto v = validate(row.descriptor);
    for (const auto& f : v.findings) INFO(f.rule << " " << f.message);
    CHECK(as_set(v.rule_ids(Severity::error)) == as_set(row.errors));
    CHECK(v.valid() == row.errors.empty());
    const auto warnings = as_set(v.rule_ids(Severity::warning));
    for (const auto& w : row.warnings) CHECK(warnings.count(w) == 1);
  }
}

TEST_CASE("rule table covers every rule id", "[tma][validator]") {
  std::set<std::string> seen;
  for (const auto& row : rule_table()) {
    seen.insert(row.errors.begin(), row.errors.end());
    seen.insert(row.warnings.begin(), row.warnings.end());
  }
  for (const auto& id : error_rule_ids()) {
    if (id == "tma.arrays.length") continue;  // not expressible to the driver; tested below
    INFO(id);
    CHECK(seen.count(id) == 1);
  }
  for (const auto& id : warning_rule_ids()) {
    INFO(id);
    CHECK(seen.count(id) == 1);
  }
  // No row names a rule the validator does not know.
  for (const auto& id : seen) {
    INFO(id);
    const bool known = std::count(error_rule_ids().begin(), error_rule_ids().end(), id) +
                           std::count(warning_rule_ids().begin(), warning_rule_ids().end(), id) ==
                       1;
    CHECK(known);
  }
}

TEST_CASE("the seed's seq_len 1 descriptor: stride of the size-1 dimension", "[tma][validator]") {
  const auto v = validate(seed_seq1());
  REQUIRE_FALSE(v.valid());
  const auto* f = find(v, "tma.global_stride.multiple_of_16");
  REQUIRE(f != nullptr);
  CHECK(f->field == "globalStrides");
  CHECK(f->index == 0);
  CHECK(f->value == "2");
  CHECK(f->severity == Severity::error);
  CHECK_THAT(f->message, Catch::Contains("dimension 1"));

  const auto* s = find(v, "tma.size1_stride.noncanonical");
  REQUIRE(s != nullptr);
  CHECK(s->index == 0);
  CHECK(s->severity == Severity::warning);
  CHECK_THAT(s->message, Catch::Contains("dimension 1 has extent 1"));
  CHECK_THAT(s->fix, Catch::Contains("256 bytes"));
  CHECK_THAT(s->fix, Catch::Contains("canonicalise"));

  // The other stride (256) is fine: exactly one error.
  CHECK(v.errors() == 1);
}

TEST_CASE("seq_len 2 (or a canonical size-1 stride) is accepted", "[tma][validator]") {
  auto d = seed_seq1();
  d.strides[0] = 256;
  CHECK(validate(d).valid());
  CHECK_FALSE(validate(d).has("tma.size1_stride.noncanonical"));
  d.dims[1] = 2;
  d.strides[0] = 8192;
  CHECK(validate(d).valid());
}

TEST_CASE("a size-1 dimension whose stride is legal raises no size-1 finding", "[tma][validator]") {
  auto d = seed_seq1();
  d.strides[0] = 4096;  // not the dense value, but a multiple of 16: harmless
  const auto v = validate(d);
  CHECK(v.valid());
  CHECK_FALSE(v.has("tma.size1_stride.noncanonical"));
}

TEST_CASE("array lengths that do not fit the rank are reported, not read past", "[tma][validator]") {
  auto d = seed_seq1();
  d.strides = {256};
  const auto v = validate(d);
  REQUIRE(v.has("tma.arrays.length"));
  CHECK(find(v, "tma.arrays.length")->field == "globalStrides");
  CHECK(v.errors() == 1);  // nothing per-index checked on a broken shape
  d = seed_seq1();
  d.box.push_back(1);
  CHECK(validate(d).has("tma.arrays.length"));
}

TEST_CASE("every finding carries field, value, message and fix", "[tma][validator]") {
  for (const auto& row : rule_table()) {
    for (const auto& f : validate(row.descriptor).findings) {
      INFO(row.name << " " << f.rule);
      CHECK_FALSE(f.field.empty());
      CHECK_FALSE(f.value.empty());
      CHECK_FALSE(f.message.empty());
      CHECK_FALSE(f.fix.empty());
    }
  }
}

TEST_CASE("boundary values", "[tma][validator]") {
  Descriptor d;
  d.data_type = DataType::uint8;
  d.rank = 2;
  d.dims = {256, 16};
  d.strides = {256};
  d.box = {256, 1};
  d.element_strides = {1, 8};
  CHECK(validate(d).valid());
  d.element_strides[1] = 9;
  CHECK(validate(d).has("tma.element_stride.range"));
  d.element_strides[1] = 1;
  d.strides[0] = 272;  // 17 x 16: still fine
  CHECK(validate(d).valid());
  d.strides[0] = 264;
  CHECK(validate(d).has("tma.global_stride.multiple_of_16"));
}

TEST_CASE("swizzle bound uses the inner box in bytes", "[tma][validator]") {
  Descriptor d;
  d.data_type = DataType::float32;
  d.rank = 2;
  d.dims = {64, 64};
  d.strides = {256};
  d.box = {32, 8};  // 128 bytes
  d.element_strides = {1, 1};
  d.swizzle = Swizzle::b128;
  CHECK(validate(d).valid());
  d.swizzle = Swizzle::b64;
  const auto v = validate(d);
  REQUIRE(v.has("tma.swizzle.inner_box_span"));
  CHECK_THAT(find(v, "tma.swizzle.inner_box_span")->fix, Catch::Contains("boxDim[0] <= 16"));
  d.swizzle = Swizzle::b128_atom_32b;
  CHECK(validate(d).valid());
}
