#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "attention/attention_config.h"

using namespace cudadiag::attention;

namespace {

AttentionConfig valid() {
  AttentionConfig c;
  fill_default_strides(c);
  return c;
}

bool has_reason(const std::vector<std::string>& why, const std::string& needle) {
  return std::any_of(why.begin(), why.end(), [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}

}  // namespace

TEST_CASE("attention smem follows the kernel layout", "[attention]") {
  AttentionConfig c = valid();
  c.block_m = 64, c.block_n = 64, c.head_dim = 64;
  // Q 64 rows + K,V two stages of 64 rows, each row 64+8 halves.
  CHECK(attention_smem_bytes(c) == (64 + 4 * 64) * 72 * 2);
  c.block_m = 128, c.block_n = 128, c.head_dim = 128;
  CHECK(attention_smem_bytes(c) == 174080);
}

TEST_CASE("valid configurations pass, including every seed tile", "[attention]") {
  for (auto [m, n, w] : {std::tuple{64, 64, 4}, {128, 32, 8}, {80, 64, 8}, {80, 64, 4}, {64, 64, 8}}) {
    AttentionConfig c = valid();
    c.block_m = m, c.block_n = n, c.warps = w;
    for (int d : {64, 128})
      for (const DType dt : {DType::fp16, DType::bf16}) {
        c.head_dim = d;
        c.dtype = dt;
        c.strides = {};
        fill_default_strides(c);
        INFO(m << "x" << n << " w" << w << " d" << d << " " << to_string(dt));
        CHECK(validate_attention(c, kSmemOptinA100).empty());
      }
  }
}

TEST_CASE("every invalid reason is reported", "[attention]") {
  SECTION("head_dim") {
    auto c = valid();
    c.head_dim = 96;
    CHECK(has_reason(validate_attention(c, kSmemOptinH100), "head_dim 96 is not compiled"));
  }
  SECTION("batch, heads, seq_len") {
    auto c = valid();
    c.batch = 0, c.heads = -1, c.seq_len = 0;
    const auto why = validate_attention(c, kSmemOptinH100);
    CHECK(has_reason(why, "batch 0 must be >= 1"));
    CHECK(has_reason(why, "heads -1 must be >= 1"));
    CHECK(has_reason(why, "seq_len 0 must be >= 1"));
  }
  SECTION("block_m not a multiple of 16") {
    auto c = valid();
    c.block_m = 72;
    const auto why = validate_attention(c, kSmemOptinH100);
    CHECK(has_reason(why, "block_m 72 is not a positive multiple of 16"));
    CHECK(has_reason(why, "block_m 72 is not compiled"));
  }
  SECTION("block_m a multiple of 16 but not compiled") {
    auto c = valid();
    c.block_m = 48;
    const auto why = validate_attention(c, kSmemOptinH100);
    CHECK(why.size() == 1);
    CHECK(has_reason(why, "block_m 48 is not compiled"));
  }
  SECTION("block_n and warps") {
    auto c = valid();
    c.block_n = 48, c.warps = 3;
    const auto why = validate_attention(c, kSmemOptinH100);
    CHECK(has_reason(why, "block_n 48 is not compiled"));
    CHECK(has_reason(why, "warps 3 is not compiled"));
  }
  SECTION("threads per block") {
    auto c = valid();
    c.warps = 64;
    CHECK(has_reason(validate_attention(c, kSmemOptinH100), "threads per block 2048 outside 1..1024"));
  }
  SECTION("shared memory against the device limit") {
    auto c = valid();
    c.block_m = 128, c.block_n = 128, c.head_dim = 128, c.dtype = DType::bf16, c.warps = 8;
    c.strides = {};
    fill_default_strides(c);
    CHECK(validate_attention(c, kSmemOptinH100).empty());  // 174080 <= 232448
    const auto why = validate_attention(c, kSmemOptinA100);
    REQUIRE(why.size() == 1);
    CHECK(why[0] == "shared memory 174080 bytes exceeds the device's opt-in limit of 166912 bytes");
  }
  SECTION("strides not 16-byte aligned, negative, overlapping") {
    auto c = valid();
    c.strides[1].seq = 68;    // 136 bytes
    c.strides[2].head = -64;
    c.strides[3].seq = 56;    // < head_dim 64
    const auto why = validate_attention(c, kSmemOptinH100);
    CHECK(has_reason(why, "k stride seq 68 elements is not a multiple of 16 bytes"));
    CHECK(has_reason(why, "v stride head -64 is negative"));
    CHECK(has_reason(why, "o seq stride 56 is smaller than head_dim"));
  }
  SECTION("padded, aligned strides are fine") {
    auto c = valid();
    c.strides[0].seq = 72;  // 144 bytes
    c.strides[0].head = 72 * 64;
    c.strides[0].batch = 72 * 64;
    CHECK(validate_attention(c, kSmemOptinH100).empty());
  }
  SECTION("the misalign knob is exempt, a negative value is not") {
    auto c = valid();
    c.misalign_bytes = 8;
    CHECK(validate_attention(c, kSmemOptinH100).empty());
    c.misalign_bytes = -8;
    CHECK(has_reason(validate_attention(c, kSmemOptinH100), "misalign_bytes -8 must be >= 0"));
  }
}

TEST_CASE("attention params round-trip through JSON with defaults", "[attention]") {
  auto c = attention_config_from_json(json{{"seq_len", 100}, {"dtype", "bf16"}, {"causal", true}, {"drop_barrier", true}});
  CHECK(c.seq_len == 100);
  CHECK(c.dtype == DType::bf16);
  CHECK(c.causal);
  CHECK(c.drop_barrier);
  CHECK(c.block_m == 64);
  CHECK(c.strides[0].seq == 64);
  CHECK(c.strides[0].head == 100 * 64);
  const auto back = attention_config_from_json(attention_params_to_json(c));
  CHECK(attention_params_to_json(back) == attention_params_to_json(c));
  CHECK(tensor_extent_elems(c, 1) == 100 * 64);
}

TEST_CASE("attention params reject wrong types and unknown keys", "[attention]") {
  CHECK_THROWS_WITH(attention_config_from_json(json{{"seq_len", "long"}}), Catch::Contains("seq_len"));
  CHECK_THROWS_WITH(attention_config_from_json(json{{"causal", 1}}), Catch::Contains("causal"));
  CHECK_THROWS_WITH(attention_config_from_json(json{{"blockm", 64}}), Catch::Contains("'blockm'"));
  CHECK_THROWS_WITH(attention_config_from_json(json{{"strides", {{"x", {1, 2, 3}}}}}), Catch::Contains("'x'"));
  CHECK_THROWS_WITH(attention_config_from_json(json{{"strides", {{"q", {1, 2}}}}}), Catch::Contains("strides.q"));
}

TEST_CASE("attention params: malformed values are refused, never wrapped", "[attention]") {
  CHECK_THROWS_WITH(attention_config_from_json(json{{"seq_len", 2147483648LL}}),
                    Catch::StartsWith("seq_len: 2147483648 is outside"));
  CHECK_THROWS_WITH(attention_config_from_json(json{{"block_m", -64}}), Catch::StartsWith("block_m: -64 must be at least 1"));
  CHECK_THROWS_WITH(attention_config_from_json(json{{"warps", 0}}), Catch::StartsWith("warps: 0 must be at least 1"));
  CHECK_THROWS_WITH(attention_config_from_json(json{{"race_rate", 1.5}}), Catch::StartsWith("race_rate:"));
  CHECK_THROWS_WITH(attention_config_from_json(json{{"seq_len", 2000000000}, {"heads", 2000000000}}),
                    Catch::Contains("too large"));
  // Well-formed but not compiled: a finding for the device check, not a malformed value.
  const auto c = attention_config_from_json(json{{"block_m", 48}});
  CHECK(malformed_attention(c).empty());
  CHECK_FALSE(validate_attention(c, kSmemOptinH100).empty());
}

TEST_CASE("FLOPs and tolerances", "[attention]") {
  AttentionConfig c = valid();
  c.batch = 4, c.heads = 8, c.seq_len = 4096, c.head_dim = 128;
  CHECK(attention_flops(c) == Approx(4.0 * 32 * 4096.0 * 4096.0 * 128));
  c.causal = true;
  CHECK(attention_flops(c) == Approx(2.0 * 32 * 4096.0 * 4096.0 * 128));
  CHECK(attention_tolerance(DType::fp16) < attention_tolerance(DType::bf16));
}

TEST_CASE("expected outcome per knob and allocator", "[attention]") {
  auto c = valid();
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::pool) == "ok");
  c.misalign_bytes = 8;
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::pool) == "error:misaligned");
  c.misalign_bytes = 16;  // still aligned: nothing to catch
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::pool) == "ok");
  c.misalign_bytes = 0;
  c.no_tail_mask = true;
  c.seq_len = 128;  // a multiple of block_n: no tail, nothing read past the end
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::fence_back) == "ok");
  c.seq_len = 100;
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::pool) == "silent");
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::direct) == "silent");
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::fence_back) == "error:memory_fault");
  c.drop_barrier = true;
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::pool) == "any");
  c.no_tail_mask = false;
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::pool) == "ok|mismatch");
  c.drop_barrier = false;
  c.smem_overflow = true;
  CHECK(attention_expectation(c, cudadiag::profiles::Allocator::pool) == "mismatch|error");
}

TEST_CASE("the race knob's window and rate: in the params only with drop_barrier, validated", "[attention]") {
  AttentionConfig c = valid();
  CHECK_FALSE(attention_params_to_json(c).contains("race_window"));
  c.drop_barrier = true;
  c.race_window = 5000;
  c.race_rate = 0.25;
  const json j = attention_params_to_json(c);
  CHECK(j.at("race_window") == 5000);
  CHECK(j.at("race_rate") == 0.25);
  const auto back = attention_config_from_json(j);
  CHECK(back.race_window == 5000);
  CHECK(back.race_rate == 0.25);
  CHECK(validate_attention(back, kSmemOptinH100).empty());
  c.race_rate = 1.5;
  CHECK(has_reason(validate_attention(c, kSmemOptinH100), "race_rate"));
  c.race_rate = 0.5;
  c.race_window = -1;
  CHECK(has_reason(validate_attention(c, kSmemOptinH100), "race_window -1"));
  CHECK_THROWS_WITH(attention_config_from_json(json{{"race_rate", "often"}}), Catch::Contains("race_rate"));
  // Seeds travel in the case spec (repeat/seeds.h), not in the parameters.
  CHECK_THROWS_WITH(attention_config_from_json(json{{"replay_seed", 7}}),
                    Catch::Contains("unknown attention parameter 'replay_seed'"));
}

TEST_CASE("the wgmma engine: its one tile shape, no fault knob but misalign, its own smem", "[attention]") {
  AttentionConfig c = valid();
  c.engine = Engine::wgmma;
  c.head_dim = 128, c.block_m = 128, c.block_n = 64, c.warps = 8;
  c.strides = {};
  fill_default_strides(c);
  CHECK(validate_attention(c, kSmemOptinH100).empty());
  CHECK(attention_smem_bytes(c) == 1024 + 128 * 128 * 2 + 2 * 2 * 64 * 128 * 2);
  CHECK(attention_params_to_json(c).at("engine") == "wgmma");
  CHECK(attention_config_from_json(attention_params_to_json(c)).engine == Engine::wgmma);
  CHECK(case_id_of(c) == "attention.fp16.d128.bm128-bn64-w8.wgmma");
  c.misalign_bytes = 8;
  CHECK(validate_attention(c, kSmemOptinH100).empty());
  c.drop_barrier = true;
  CHECK(has_reason(validate_attention(c, kSmemOptinH100), "no fault knob"));
  c.drop_barrier = false;
  c.warps = 4;
  c.block_n = 32;
  const auto why = validate_attention(c, kSmemOptinH100);
  CHECK(has_reason(why, "8 warps only"));
  CHECK(has_reason(why, "block_n {64, 128} only"));
  c = valid();
  CHECK_FALSE(attention_params_to_json(c).contains("engine"));
  CHECK(case_id_of(c) == "attention.fp16.d64.bm64-bn64-w4");
  CHECK_THROWS_WITH(attention_config_from_json(json{{"engine", "tensor"}}),
                    Catch::Contains("engine: expected one of mma, wgmma"));
}

TEST_CASE("an element type other than fp16 and bf16 is refused where the parameters are read", "[attention]") {
  CHECK_THROWS_WITH(attention_config_from_json(json{{"dtype", "fp8"}}),
                    Catch::Contains("dtype 'fp8' is not supported (fp16, bf16)"));
  CHECK(attention_params_to_json(attention_config_from_json(json{{"dtype", "bf16"}}))["dtype"] == "bf16");
}
