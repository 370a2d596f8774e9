#include <catch2/catch.hpp>

#include "tma/printout.h"
#include "tma/sweep.h"
#include "tma/tma_json.h"
#include "tma/validator.h"
#include "util/errors.h"

using namespace cudadiag::tma;

namespace {

Descriptor seed_base() {
  const std::string log =
      "TMA Desc Addr:   0x7ffd054484c0\nformat         9\ndim            3\ngmem_address   0x7f4c49e08800\n"
      "globalDim      (128,1,32,1,1)\nglobalStrides  (2,2,256,0,0)\nboxDim         (64,128,1,1,1)\n"
      "elementStrides (1,1,1,1,1)\ninterleave     0\nswizzle        3\nl2Promotion    2\noobFill        0\n";
  return parse_printout(log, "seed").at(0).descriptor;
}

}  // namespace

TEST_CASE("sweep axes parse ranges, lists and names", "[tma][sweep]") {
  const auto a = parse_sweep_axis("seq-len=0..3,8");
  CHECK(a.name == cudadiag::tma::SweepParam::seq_len);
  CHECK(a.values == std::vector<std::string>{"0", "1", "2", "3", "8"});
  CHECK(parse_sweep_axis("dtype=bf16,half").values == std::vector<std::string>{"bf16", "fp16"});
  CHECK_THROWS_AS(parse_sweep_axis("seq-len"), cudadiag::UsageError);
  CHECK_THROWS_WITH(parse_sweep_axis("batch=1..2"), Catch::Contains("unknown parameter 'batch'"));
  CHECK_THROWS_WITH(parse_sweep_axis("seq-len=5..2"), Catch::Contains("backwards"));
  CHECK_THROWS_WITH(parse_sweep_axis("seq-len=1,x"), Catch::Contains("'x'"));
  CHECK_THROWS_WITH(parse_sweep_axis("dtype=bf17"), Catch::Contains("bf17"));
}

TEST_CASE("the seed's sweep: seq 0 and 1 fail, 2..8 work (as-is); canonical fixes 1", "[tma][sweep]") {
  const auto base = seed_base();
  CHECK(memory_order(base) == std::vector<unsigned>{2, 1});
  const std::vector<SweepAxis> axes{parse_sweep_axis("seq-len=0..8")};
  const auto points = build_sweep(base, axes, SweepOptions{});
  REQUIRE(points.size() == 9);
  CHECK(points[1].label == "seq-len=1");
  CHECK(points[1].descriptor.strides == std::vector<std::uint64_t>{2, 256});  // as in the seed
  CHECK(points[2].descriptor.strides == std::vector<std::uint64_t>{8192, 256});
  CHECK(validate(points[0].descriptor).has("tma.global_dim.nonzero"));
  CHECK(validate(points[1].descriptor).has("tma.global_stride.multiple_of_16"));
  for (size_t i = 2; i < points.size(); ++i) {
    INFO(points[i].label);
    CHECK(validate(points[i].descriptor).valid());
  }
  SweepOptions canonical;
  canonical.size1 = Size1Stride::canonical;
  const auto fixed = build_sweep(base, axes, canonical);
  CHECK(fixed[1].descriptor.strides == std::vector<std::uint64_t>{8192, 256});
  CHECK(validate(fixed[1].descriptor).valid());
}

TEST_CASE("sweeps combine axes; heads change the outer strides; dtype the element size", "[tma][sweep]") {
  const auto base = seed_base();
  const auto points = build_sweep(base, {parse_sweep_axis("heads=8,32"), parse_sweep_axis("dtype=bf16,fp32")},
                                  SweepOptions{});
  REQUIRE(points.size() == 4);
  CHECK(points[0].label == "heads=8 dtype=bf16");
  CHECK(points[3].values["dtype"] == "fp32");
  CHECK(points[3].descriptor.data_type == DataType::float32);
  CHECK(points[3].descriptor.strides[1] == 512);   // 128 fp32
  CHECK(points[3].descriptor.strides[0] == 4);     // size-1 seq: one element, as a framework reports
  // 64 fp32 = 256 bytes: too wide for the 128B swizzle.
  CHECK(validate(points[3].descriptor).has("tma.swizzle.inner_box_span"));
  CHECK_THROWS_WITH(build_sweep(base, {parse_sweep_axis("seq-len=1")}, SweepOptions{5, 2, Size1Stride::as_is}),
                    Catch::Contains("--seq-dim"));
}

TEST_CASE("descriptor JSON round trip, names or numbers", "[tma][json]") {
  const auto base = seed_base();
  const auto j = to_json(base);
  CHECK(j["dtype"] == "bf16");
  CHECK(j["swizzle"] == "128B");
  CHECK(j["address"] == "0x7f4c49e08800");
  const auto back = descriptor_from_json(j);
  CHECK(back.dims == base.dims);
  CHECK(back.strides == base.strides);
  CHECK(back.address == base.address);
  CHECK(back.swizzle == base.swizzle);
  auto odd = j;
  odd["swizzle"] = 9;
  CHECK(static_cast<int>(descriptor_from_json(odd).swizzle) == 9);
  CHECK(to_json(descriptor_from_json(odd))["swizzle"] == 9);
  odd["dtype"] = "bf17";
  CHECK_THROWS_WITH(descriptor_from_json(odd), Catch::Contains("dtype"));
  auto missing = j;
  missing.erase("box");
  CHECK_THROWS_WITH(descriptor_from_json(missing), Catch::Contains("box: missing"));
}

TEST_CASE("verdict JSON lists findings with rule, field, index", "[tma][json]") {
  const auto v = validate(seed_base());
  const auto j = to_json(v);
  CHECK(j["valid"] == false);
  CHECK(j["errors"] == 1);
  bool found = false;
  for (const auto& f : j["findings"])
    if (f["rule"] == "tma.global_stride.multiple_of_16") {
      found = true;
      CHECK(f["field"] == "globalStrides");
      CHECK(f["index"] == 0);
      CHECK(f["value"] == "2");
    }
  CHECK(found);
  CHECK_THAT(format_findings(v), Catch::Contains("globalStrides[0] = 2"));
}

TEST_CASE("sweep: seq-len and heads on one dimension, or an axis twice, are refused", "[tma][sweep]") {
  Descriptor base;
  base.data_type = DataType::bfloat16;
  base.rank = 3;
  base.dims = {128, 2, 32};
  base.strides = {8192, 256};
  base.box = {64, 128, 1};
  base.element_strides = {1, 1, 1};
  const auto seq = parse_sweep_axis("seq-len=1..2");
  const auto heads = parse_sweep_axis("heads=8,32");
  CHECK_THROWS_WITH(build_sweep(base, {seq, heads}, SweepOptions{1, 1, Size1Stride::as_is}),
                    Catch::Contains("both set dimension 1"));
  CHECK_THROWS_WITH(build_sweep(base, {seq, seq}, SweepOptions{}), Catch::Contains("given twice"));
  CHECK(build_sweep(base, {seq, heads}, SweepOptions{1, 2, Size1Stride::as_is}).size() == 4);
}
