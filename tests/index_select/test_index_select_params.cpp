#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "index_select/index_select_params.h"

using namespace cudadiag::index_select;
using cudadiag::report::json;

namespace {

std::string error_of(const json& j) {
  try {
    index_select_params_from_json(j);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

IndexSelectParams small(const json& overrides = json::object()) {
  json j{{"shape", {2, 8, 4, 3}}, {"heads", {1, 3}}, {"dilation", 3}};
  for (auto& [k, v] : overrides.items()) j[k] = v;
  return index_select_params_from_json(j);
}

std::uint32_t bits_at(const std::vector<std::uint8_t>& data, long long i, int bytes) {
  std::uint32_t v = 0;
  std::memcpy(&v, data.data() + i * bytes, static_cast<size_t>(bytes));
  return v;
}

}  // namespace

TEST_CASE("index_select defaults: the seed's scenario on the tail heads, last position S-1") {
  const auto p = index_select_params_from_json(json::object());
  CHECK(p.B == 2);
  CHECK(p.S == 512);
  CHECK(p.h0 == 4);
  CHECK(p.h1 == 8);
  CHECK(p.dilation == 2);
  CHECK(p.offset == 1);
  const auto idx = gather_indices(p);
  CHECK(idx.front() == 1);
  CHECK(idx.back() == 511);
  CHECK(idx.size() == 256);
  CHECK(p.layout == Layout::stride);
  CHECK(p.bounds == Bounds::checked);
}

TEST_CASE("index_select parameter validation names what is wrong") {
  CHECK(error_of({{"heads", {5, 9}}}).find("heads: 5:9 is outside 0..8") != std::string::npos);
  CHECK(error_of({{"heads", {4, 4}}}).find("heads: 4:4") != std::string::npos);
  CHECK(error_of({{"shape", {2, 0, 8, 64}}}).find("shape: S = 0") != std::string::npos);
  CHECK(error_of({{"shape", {2, 8}}}).find("shape: expected four integers") != std::string::npos);
  CHECK(error_of({{"dilation", 0}}).find("dilation: 0 is outside") != std::string::npos);
  CHECK(error_of({{"layout", "transposed"}}).find("layout: unknown 'transposed'") != std::string::npos);
  CHECK(error_of({{"indices", "random"}}).find("indices: unknown 'random'") != std::string::npos);
  CHECK(error_of({{"dtype", "fp8"}}).find("dtype: unknown 'fp8'") != std::string::npos);
  CHECK(error_of({{"index_dtype", "int16"}}).find("index_dtype: unknown") != std::string::npos);
  CHECK(error_of({{"bounds", "maybe"}}).find("bounds: unknown") != std::string::npos);
  CHECK(error_of({{"colour", "red"}}).find("unknown index_select parameter 'colour'") != std::string::npos);
  CHECK(error_of({{"shape", {1 << 16, 1 << 16, 2, 2}}}).find("2^30") != std::string::npos);
}

TEST_CASE("shape and heads flags parse or say what is wrong") {
  CHECK(parse_shape("2,512,8,64") == std::vector<long long>{2, 512, 8, 64});
  CHECK_THROWS_WITH(parse_shape("2,512,8"), Catch::Contains("four comma-separated"));
  CHECK_THROWS_WITH(parse_shape("2,x,8,64"), Catch::Contains("'x' is not an integer"));
  CHECK_THROWS_WITH(parse_shape("2,512,8,64,"), Catch::Contains("four comma-separated"));
  CHECK(parse_heads("4:8") == std::pair<long long, long long>{4, 8});
  CHECK_THROWS_WITH(parse_heads("4-8"), Catch::Contains("h0:h1"));
}

TEST_CASE("bad indices replace the last position") {
  CHECK(gather_indices(small({{"indices", "oob"}})).back() == 8);
  CHECK(gather_indices(small({{"indices", "negative"}})).back() == -1);
  CHECK(gather_indices(small()) == std::vector<long long>{1, 4, 7});
}

TEST_CASE("the reference gather picks heads h0..h1 of the indexed rows") {
  const auto p = small({{"dtype", "fp32"}});
  const auto src = random_tensor(p, p.source_elements(), 7);
  const auto idx = gather_indices(p);
  const auto out = reference_gather(p, src, idx);
  REQUIRE(static_cast<long long>(out.size()) == p.output_elements() * 4);
  // out[b=1, j=2, h=1, d=2] = src[b=1, s=7, h=2, d=2]
  const long long o = ((1 * 3 + 2) * 2 + 1) * 3 + 2;
  const long long s = ((1 * 8 + 7) * 4 + 2) * 3 + 2;
  CHECK(bits_at(out, o, 4) == bits_at(src, s, 4));
}

TEST_CASE("random tensors are fresh, never zero and never the poison") {
  for (const char* name : {"fp16", "bf16", "fp32"}) {
    const auto p = small({{"dtype", name}});
    const ElementType dtype = p.dtype;
    const auto a = random_tensor(p, 4096, 1);
    const auto b = random_tensor(p, 4096, 2);
    CHECK(a != b);
    const int bytes = p.element_bytes();
    for (long long i = 0; i < 4096; ++i) {
      const auto v = bits_at(a, i, bytes);
      const std::uint32_t poison = bytes == 2 ? 0xFFFFu : 0xFFFFFFFFu;
      REQUIRE(v != poison);
      REQUIRE(element_value(dtype, v) != 0.0);
      REQUIRE(std::isfinite(element_value(dtype, v)));
    }
  }
}

TEST_CASE("element values decode fp16, bf16 and fp32 bits") {
  CHECK(element_value(ElementType::fp16, 0x3C00) == 1.0);
  CHECK(element_value(ElementType::fp16, 0xC000) == -2.0);
  CHECK(element_value(ElementType::fp16, 0x0001) == Approx(5.960464477539063e-08));
  CHECK(element_value(ElementType::bf16, 0x3F80) == 1.0);
  CHECK(element_value(ElementType::fp32, 0x40490FDB) == Approx(3.14159265));
  CHECK(std::isnan(element_value(ElementType::fp16, 0xFFFF)));
}

TEST_CASE("comparison reports the first bad element with its index tuple") {
  const auto p = small();
  const auto src = random_tensor(p, p.source_elements(), 3);
  const auto idx = gather_indices(p);
  const auto expected = reference_gather(p, src, idx);
  auto got = expected;
  CHECK(compare_gather(p, "k", got, expected, idx).mismatches == 0);
  // Corrupt out[b=1, j=0, h=1, d=2] (element 1*3*2*3 + 0 + 1*3 + 2 = 23).
  got[23 * 2] ^= 0x01;
  const auto c = compare_gather(p, "k", got, expected, idx);
  CHECK(c.mismatches == 1);
  CHECK(c.compared == p.output_elements());
  CHECK(c.first_bad["tensor"] == "k");
  CHECK(c.first_bad["index"] == json::array({1, 0, 1, 2}));
  CHECK(c.first_bad["position"] == 1);
  CHECK(c.first_bad["index_valid"] == true);
}

TEST_CASE("rows with an invalid index count as mismatches whatever they hold") {
  const auto p = small({{"indices", "oob"}, {"bounds", "unchecked"}});
  const auto src = random_tensor(p, p.source_elements(), 3);
  const auto idx = gather_indices(p);
  const auto expected = reference_gather(p, src, idx);
  const auto c = compare_gather(p, "v", expected, expected, idx);
  // One invalid position out of three, for both batches: 2 * 2 heads * 3 = 12 elements.
  CHECK(c.invalid_rows == 12);
  CHECK(c.mismatches == 12);
  CHECK(c.first_bad["index_valid"] == false);
}

TEST_CASE("layouts choose the pointer and strides the gather gets") {
  const auto p = index_select_params_from_json(json::object());  // [2,512,8,64], heads 4:8
  const auto stride = gather_source(p);
  CHECK(stride.base_offset == 4 * 64);
  CHECK(stride.stride_s == 8 * 64);
  const auto packed = gather_source(index_select_params_from_json({{"layout", "assume-contiguous"}}));
  CHECK(packed.base_offset == 4 * 64);
  CHECK(packed.stride_s == 4 * 64);
  CHECK(packed.stride_b == 512 * 4 * 64);
  const auto twice = gather_source(index_select_params_from_json({{"layout", "offset-twice"}}));
  CHECK(twice.base_offset == 2 * 4 * 64);
  const auto copy = gather_source(index_select_params_from_json({{"layout", "copy"}}));
  CHECK(copy.from_copy);
  CHECK(copy.base_offset == 0);
}

TEST_CASE("read extents: assume-contiguous stays inside K, offset-twice and oob run past its end") {
  const long long k = 2 * 512 * 8 * 64;
  const auto packed = read_extent(index_select_params_from_json({{"layout", "assume-contiguous"}}));
  CHECK(packed.lo >= 0);
  CHECK(packed.hi < k);
  const auto twice = read_extent(index_select_params_from_json({{"layout", "offset-twice"}}));
  CHECK(twice.hi == k - 1 + 4 * 64);  // h0 * D elements past the end
  const auto oob = read_extent(index_select_params_from_json({{"indices", "oob"}, {"bounds", "unchecked"}}));
  CHECK(oob.hi >= k);
  const auto neg = read_extent(index_select_params_from_json({{"indices", "negative"}, {"bounds", "unchecked"}}));
  CHECK(neg.lo == 4 * 64 - 8 * 64);  // one row before K, plus the view offset
  const auto copy = read_extent(index_select_params_from_json({{"layout", "copy"}}));
  CHECK(copy.buffer == "k_contig");
  CHECK(copy.hi == copy.elements - 1);
}

TEST_CASE("index_select expectations per layout and allocator") {
  auto expect = [](const json& j, const char* alloc) {
    return index_select_expectation(index_select_params_from_json(j), *cudadiag::profiles::parse_allocator(alloc));
  };
  for (const char* alloc : {"pool", "direct", "fence-back", "fence-front"}) {
    INFO(alloc);
    CHECK(expect({{"layout", "stride"}}, alloc) == "ok");
    CHECK(expect({{"layout", "copy"}}, alloc) == "ok");
    CHECK(expect({{"layout", "assume-contiguous"}}, alloc) == "mismatch");
    CHECK(expect({{"indices", "oob"}, {"bounds", "checked"}}, alloc) == "error:710");
  }
  CHECK(expect({{"layout", "offset-twice"}}, "fence-back") == "error:memory_fault");
  CHECK(expect({{"layout", "offset-twice"}}, "pool") == "mismatch");
  CHECK(expect({{"layout", "offset-twice"}}, "fence-front") == "mismatch");
  CHECK(expect({{"layout", "offset-twice"}}, "direct") == "mismatch|error:memory_fault");
  CHECK(expect({{"indices", "oob"}, {"bounds", "unchecked"}}, "fence-back") == "error:memory_fault");
  CHECK(expect({{"indices", "negative"}, {"bounds", "unchecked"}}, "fence-front") == "error:memory_fault");
  CHECK(expect({{"indices", "negative"}, {"bounds", "unchecked"}}, "fence-back") == "mismatch");
  CHECK(expect({{"indices", "negative"}, {"bounds", "unchecked"}}, "pool") == "mismatch");
  // Every head sliced: the view is contiguous and packed strides are right.
  CHECK(expect({{"layout", "assume-contiguous"}, {"heads", {0, 8}}}, "fence-back") == "ok");
  // K of 3 fp16 elements is 6 bytes: the fenced buffer keeps 10 bytes of slack, so a
  // 1-element overrun stays silent (only the wrong data shows).
  CHECK(expect({{"shape", {1, 1, 3, 1}}, {"heads", {1, 3}}, {"dilation", 1}, {"layout", "offset-twice"}},
               "fence-back") == "mismatch");
}

