// What a TMA load does to tf32 and _ftz elements, and the probe inputs that tell the
// candidate conversions apart on a device.
#include <cstring>

#include <catch2/catch.hpp>

#include "tma/conversion_probe.h"
#include "tma/element_conversion.h"
#include "tma/load_reference.h"

using namespace cudadiag::tma;

namespace {
constexpr Tf32Rounding kAll[] = {Tf32Rounding::truncate, Tf32Rounding::nearest_even, Tf32Rounding::nearest_away};
}

TEST_CASE("tf32 rounding: the three candidates on ties, halves and signs", "[tma][conversion]") {
  // The H100's answer for a random element: the low 13 bits dropped.
  CHECK(to_tf32(0x3553af05u, Tf32Rounding::truncate) == 0x3553a000u);
  CHECK(to_tf32(0x3553af05u, Tf32Rounding::nearest_even) == 0x3553a000u);
  // A tie with an even kept bit: nearest-even stays, nearest-away goes up.
  CHECK(to_tf32(0x3f801000u, Tf32Rounding::truncate) == 0x3f800000u);
  CHECK(to_tf32(0x3f801000u, Tf32Rounding::nearest_even) == 0x3f800000u);
  CHECK(to_tf32(0x3f801000u, Tf32Rounding::nearest_away) == 0x3f802000u);
  // A tie with an odd kept bit: both nearest roundings go up.
  CHECK(to_tf32(0x3f803000u, Tf32Rounding::nearest_even) == 0x3f804000u);
  CHECK(to_tf32(0x3f803000u, Tf32Rounding::nearest_away) == 0x3f804000u);
  CHECK(to_tf32(0x3f803000u, Tf32Rounding::truncate) == 0x3f802000u);
  // Just below and above half.
  for (const auto r : {Tf32Rounding::nearest_even, Tf32Rounding::nearest_away}) {
    CHECK(to_tf32(0x3f800fffu, r) == 0x3f800000u);
    CHECK(to_tf32(0x3f801001u, r) == 0x3f802000u);
  }
  // Negative values round by magnitude.
  CHECK(to_tf32(0xbf801001u, Tf32Rounding::nearest_even) == 0xbf802000u);
  CHECK(to_tf32(0xbf801000u, Tf32Rounding::nearest_away) == 0xbf802000u);
  CHECK(to_tf32(0xbf801fffu, Tf32Rounding::truncate) == 0xbf800000u);
}

TEST_CASE("tf32 rounding: carries into the exponent, subnormals, infinities and NaN", "[tma][conversion]") {
  CHECK(to_tf32(0x007ff000u, Tf32Rounding::nearest_even) == 0x00800000u);  // to the smallest normal
  CHECK(to_tf32(0x00001000u, Tf32Rounding::nearest_even) == 0x00000000u);
  CHECK(to_tf32(0x00001000u, Tf32Rounding::nearest_away) == 0x00002000u);
  CHECK(to_tf32(0x7f7ff000u, Tf32Rounding::nearest_even) == 0x7f800000u);  // to infinity
  CHECK(to_tf32(0xff7ff000u, Tf32Rounding::nearest_away) == 0xff800000u);
  CHECK(to_tf32(0x7f7fffffu, Tf32Rounding::truncate) == 0x7f7fe000u);
  for (const auto r : kAll) {
    CHECK(to_tf32(0x7f800000u, r) == 0x7f800000u);
    CHECK(to_tf32(0x7f800001u, r) == 0x7f800001u);  // NaN stays NaN (not infinity)
    CHECK(to_tf32(0x80000000u, r) == 0x80000000u);
  }
}

TEST_CASE("loaded bits: _ftz flushes subnormals to a signed zero, plain types convert only to tf32",
          "[tma][conversion]") {
  const ConversionModel flush{Tf32Rounding::nearest_even, true}, keep{Tf32Rounding::nearest_even, false};
  CHECK(loaded_bits(DataType::float32_ftz, 0x007fffffu, flush) == 0u);
  CHECK(loaded_bits(DataType::float32_ftz, 0x807fffffu, flush) == 0x80000000u);
  CHECK(loaded_bits(DataType::float32_ftz, 0x007fffffu, keep) == 0x007fffffu);
  CHECK(loaded_bits(DataType::float32_ftz, 0x3f801234u, flush) == 0x3f801234u);
  CHECK(loaded_bits(DataType::tfloat32_ftz, 0x007ff000u, flush) == 0u);
  CHECK(loaded_bits(DataType::tfloat32_ftz, 0x007ff000u, keep) == 0x00800000u);
  CHECK(loaded_bits(DataType::tfloat32, 0x007ff000u, flush) == 0x00800000u);  // not an _ftz type
  CHECK(converts_on_load(DataType::tfloat32));
  CHECK_FALSE(converts_on_load(DataType::float32));
  CHECK(parse_tf32_rounding("nearest_away") == Tf32Rounding::nearest_away);
  CHECK_FALSE(parse_tf32_rounding("up").has_value());
}

TEST_CASE("check_load expects tf32 in shared memory for a tf32 tensor", "[tma][conversion]") {
  const auto d = conversion_probe_descriptor(DataType::tfloat32, 64, 32);
  const auto p = plan_load(d);
  REQUIRE(p.possible);
  const auto inputs = conversion_probe_inputs(64, 1);
  std::vector<std::uint8_t> src(p.source_bytes), boxes(p.boxes * p.box_bytes);
  std::memcpy(src.data(), inputs.data(), src.size());
  // What the device did in the field: the source bytes unchanged is a mismatch now...
  std::memcpy(boxes.data(), src.data(), src.size());
  CHECK(check_load(d, p, src, boxes).mismatches > 0);
  // ...and the rounded values pass.
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::uint32_t v = loaded_bits(DataType::tfloat32, inputs[i], ConversionModel{});
    std::memcpy(boxes.data() + 4 * i, &v, 4);
  }
  const auto ok = check_load(d, p, src, boxes);
  CHECK(ok.mismatches == 0);
  CHECK(ok.elements == 64);
  // A wrong element names the conversion it expected.
  boxes[0] ^= 0x20;
  CHECK_THAT(check_load(d, p, src, boxes).first_mismatch, Catch::Contains("(tf32 of 0x"));
}

TEST_CASE("probe inputs tell every candidate apart, for every converting type", "[tma][conversion]") {
  const auto inputs = conversion_probe_inputs(512, 7);
  REQUIRE(inputs.size() == 512);
  for (const auto type : {DataType::tfloat32, DataType::tfloat32_ftz, DataType::float32_ftz}) {
    const auto d = conversion_probe_descriptor(type, inputs.size(), 256);
    const auto p = plan_load(d);
    REQUIRE(p.possible);
    std::vector<std::uint8_t> src(p.source_bytes);
    std::memcpy(src.data(), inputs.data(), src.size());
    for (const auto truth_rounding : kAll) {
      for (const bool truth_flush : {true, false}) {
        const ConversionModel truth{truth_rounding, truth_flush};
        std::vector<std::uint8_t> boxes(p.boxes * p.box_bytes);
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          const std::uint32_t v = loaded_bits(type, inputs[i], truth);
          std::memcpy(boxes.data() + 4 * i, &v, 4);
        }
        INFO(to_string(type) << " with truth " << describe(truth));
        for (const auto& fit : fit_conversion_models(d, p, src, boxes)) {
          // A candidate fits exactly when it agrees with the truth on what matters for the
          // type: the rounding for tf32, flushing for the _ftz types.
          const bool same_rounding = fit.model.tf32_rounding == truth.tf32_rounding || type == DataType::float32_ftz;
          const bool same_flush = fit.model.ftz_flushes_subnormals == truth.ftz_flushes_subnormals ||
                                  type == DataType::tfloat32;
          INFO("candidate " << describe(fit.model));
          CHECK((fit.mismatches == 0) == (same_rounding && same_flush));
        }
      }
    }
  }
}

TEST_CASE("loaded bits: the default model gives what an H100 loaded in tma-tf32-probe", "[tma]") {
  // Rows of scripts/device/tma-tf32-probe.sh on an H100 (driver 580.159.04): input, then
  // what fp32_ftz, tf32 and tf32_ftz elements held in shared memory after the load.
  struct Row {
    std::uint32_t in, fp32_ftz, tf32, tf32_ftz;
  };
  const Row rows[] = {
      {0x3f801000u, 0x3f801000u, 0x3f800000u, 0x3f800000u},  // a tie, kept bit even: down
      {0x3f803000u, 0x3f803000u, 0x3f804000u, 0x3f804000u},  // a tie, kept bit odd: up
      {0xbf801001u, 0xbf801001u, 0xbf802000u, 0xbf802000u},  // just above half an ulp
      {0x00003000u, 0x00003000u, 0x00004000u, 0x00004000u},  // a subnormal rounds, not flushed
      {0x807ff000u, 0x807ff000u, 0x80800000u, 0x80800000u},  // rounds up to the smallest normal
      {0x007fffffu, 0x007fffffu, 0x00800000u, 0x00800000u},
      {0x7f7ff000u, 0x7f7ff000u, 0x7f800000u, 0x7f800000u},  // the largest finite rounds to infinity
      {0x7f7fefffu, 0x7f7fefffu, 0x7f7fe000u, 0x7f7fe000u},
      {0x80000001u, 0x80000001u, 0x80000000u, 0x80000000u},
  };
  const ConversionModel model;
  for (const auto& r : rows) {
    CAPTURE(r.in);
    CHECK(loaded_bits(DataType::float32_ftz, r.in, model) == r.fp32_ftz);
    CHECK(loaded_bits(DataType::tfloat32, r.in, model) == r.tf32);
    CHECK(loaded_bits(DataType::tfloat32_ftz, r.in, model) == r.tf32_ftz);
  }
}
