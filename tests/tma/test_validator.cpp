#include <algorithm>
#include <optional>
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
  // Unknown target (the host), sm_90 (the H100 the table was checked on) and sm_100.
  for (const std::optional<int> cc : {std::optional<int>{}, std::optional<int>{90}, std::optional<int>{100}}) {
    for (const auto& row : table) {
      INFO(row.name << " (target " << (cc ? std::to_string(*cc) : std::string("unknown")) << "): "
                    << summary(row.descriptor));
      const auto v = validate(row.descriptor, cc);
      for (const auto& f : v.findings) INFO(f.rule << " " << f.message);
      const auto want = expected_errors(row, cc);
      CHECK(as_set(v.rule_ids(Severity::error)) == as_set(want));
      CHECK(v.valid() == want.empty());
      const auto warnings = as_set(v.rule_ids(Severity::warning));
      for (const auto& w : expected_warnings(row, cc)) CHECK(warnings.count(w) == 1);
    }
  }
}

TEST_CASE("rule table: on sm_90 every packed row is invalid, the others keep their verdict", "[tma][validator]") {
  size_t packed = 0;
  for (const auto& row : rule_table()) {
    INFO(row.name);
    CHECK(row.needs_sm100 == is_packed(row.descriptor.data_type));
    if (!row.needs_sm100) {
      CHECK(expected_errors(row, 90) == row.errors);
      continue;
    }
    ++packed;
    CHECK_FALSE(validate(row.descriptor, 90).valid());
    CHECK(validate(row.descriptor, 90).has("tma.data_type.packed_requires_sm100"));
  }
  CHECK(packed >= 2);
  const auto& table = rule_table();
  const auto it = std::find_if(table.begin(), table.end(),
                               [](const TableRow& r) { return r.name == "valid.packed.u4_align16b"; });
  REQUIRE(it != table.end());
  CHECK(validate(it->descriptor).valid());         // unknown target: a warning only
  CHECK(validate(it->descriptor, 100).valid());    // Blackwell
  CHECK_FALSE(validate(it->descriptor, 90).valid());
}

TEST_CASE("rule table covers every rule id", "[tma][validator]") {
  std::set<std::string> seen;
  for (const auto& row : rule_table()) {
    for (const auto& id : expected_errors(row, 90)) seen.insert(id);
    for (const auto& id : expected_warnings(row, std::nullopt)) seen.insert(id);
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
    auto findings = validate(row.descriptor).findings;
    const auto sm90 = validate(row.descriptor, 90).findings;
    findings.insert(findings.end(), sm90.begin(), sm90.end());
    for (const auto& f : findings) {
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

TEST_CASE("interleave 32B with swizzle none: a warning, the driver accepts it", "[tma][validator]") {
  Descriptor d;
  d.data_type = DataType::bfloat16;
  d.rank = 4;
  d.dims = {16, 64, 4, 2};
  d.strides = {32, 2048, 8192};
  d.box = {16, 32, 2, 1};
  d.element_strides = {1, 1, 1, 1};
  d.interleave = Interleave::b32;
  d.swizzle = Swizzle::none;
  const auto v = validate(d);
  CHECK(v.valid());
  const auto* f = find(v, "tma.interleave32.requires_swizzle32");
  REQUIRE(f != nullptr);
  CHECK(f->severity == Severity::warning);
  CHECK(f->field == "swizzle");
  CHECK(f->value == "none");
  d.swizzle = Swizzle::b32;
  CHECK_FALSE(validate(d).has("tma.interleave32.requires_swizzle32"));
}

TEST_CASE("packed types and the target compute capability", "[tma][validator]") {
  Descriptor d;
  d.data_type = DataType::u4x16_align16b;
  d.rank = 2;
  d.dims = {256, 4};
  d.strides = {128};
  d.box = {128, 4};
  d.element_strides = {1, 1};

  SECTION("unknown target: a warning that names sm_100, still valid") {
    const auto v = validate(d);
    CHECK(v.valid());
    const auto* f = find(v, "tma.data_type.packed_target_unknown");
    REQUIRE(f != nullptr);
    CHECK(f->severity == Severity::warning);
    CHECK(f->field == "tensorDataType");
    CHECK_THAT(f->message, Catch::Contains("10.0"));
    CHECK_FALSE(v.has("tma.data_type.packed_requires_sm100"));
  }
  SECTION("sm_90: a violation") {
    const auto v = validate(d, 90);
    CHECK_FALSE(v.valid());
    CHECK(v.errors() == 1);
    const auto* f = find(v, "tma.data_type.packed_requires_sm100");
    REQUIRE(f != nullptr);
    CHECK(f->severity == Severity::error);
    CHECK_THAT(f->message, Catch::Contains("sm_90"));
    CHECK_THAT(f->fix, Catch::Contains("sm_100"));
    CHECK_FALSE(v.has("tma.data_type.packed_target_unknown"));
  }
  SECTION("sm_100 and sm_120: accepted, no target finding") {
    for (int cc : {100, 120}) {
      const auto v = validate(d, cc);
      CHECK(v.valid());
      CHECK_FALSE(v.has("tma.data_type.packed_requires_sm100"));
      CHECK_FALSE(v.has("tma.data_type.packed_target_unknown"));
    }
  }
  SECTION("unpacked types are not affected by the target") {
    d.data_type = DataType::uint8;
    d.strides = {256};
    for (std::optional<int> cc : {std::optional<int>{}, std::optional<int>{80}, std::optional<int>{90}}) {
      const auto v = validate(d, cc);
      CHECK(v.valid());
      CHECK(v.findings.empty());
    }
  }
}
