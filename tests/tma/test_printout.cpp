#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "tma/printout.h"
#include "tma/validator.h"
#include "util/errors.h"

using namespace cudadiag::tma;

namespace {

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(CUDADIAG_TEST_DATA) + "/tma/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::string& text) {
  try {
    parse_printout(text, "x.log");
  } catch (const cudadiag::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("the seed's printout: three blocks, each with its encode error", "[tma][printout]") {
  const auto blocks = parse_printout(read_data("flashinfer_seqlen1.log"), "flashinfer_seqlen1.log");
  REQUIRE(blocks.size() == 3);
  const auto& b = blocks[0];
  CHECK(b.line == 2);
  CHECK(b.desc_address == "0x7ffd054484c0");
  CHECK(b.descriptor.data_type == DataType::bfloat16);
  CHECK(b.descriptor.rank == 3);
  CHECK(b.descriptor.address == 0x7f4c49e08800ULL);
  CHECK(b.descriptor.dims == std::vector<std::uint64_t>{128, 1, 32});
  // The printed element stride (2) is dropped: the driver gets (2, 256).
  CHECK(b.printed_strides == std::vector<std::uint64_t>{2, 2, 256, 0, 0});
  CHECK(b.descriptor.strides == std::vector<std::uint64_t>{2, 256});
  CHECK(b.descriptor.box == std::vector<std::uint32_t>{64, 128, 1});
  CHECK(b.descriptor.element_strides == std::vector<std::uint32_t>{1, 1, 1});
  CHECK(b.descriptor.interleave == Interleave::none);
  CHECK(b.descriptor.swizzle == Swizzle::b128);
  CHECK(b.descriptor.l2_promotion == L2Promotion::b128);
  CHECK(b.descriptor.oob_fill == OobFill::none);
  REQUIRE(b.encode_result.has_value());
  CHECK(*b.encode_result == 1);
  CHECK(b.error_line == 14);
  CHECK(blocks[1].descriptor.dims == std::vector<std::uint64_t>{128, 1, 8});
  CHECK(blocks[2].descriptor.address == 0x7f4c49e08000ULL);
  CHECK(blocks[2].error_line == 40);
}

TEST_CASE("the seed's printout diagnosed: stride of the size-1 dimension", "[tma][printout]") {
  for (const auto& b : parse_printout(read_data("flashinfer_seqlen1.log"), "seed")) {
    const auto v = validate(b.descriptor);
    CHECK_FALSE(v.valid());
    CHECK(v.rule_ids(Severity::error) == std::vector<std::string>{"tma.global_stride.multiple_of_16"});
    CHECK(v.has("tma.size1_stride.noncanonical"));
    for (const auto& f : v.findings)
      if (f.rule == "tma.global_stride.multiple_of_16") CHECK(f.index == 0);
  }
}

TEST_CASE("seq_len 2 printout with a log prefix parses and is valid", "[tma][printout]") {
  const auto blocks = parse_printout(read_data("seqlen2_ok.log"), "seqlen2_ok.log");
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].descriptor.strides == std::vector<std::uint64_t>{8192, 256});
  CHECK_FALSE(blocks[0].encode_result.has_value());
  CHECK(validate(blocks[0].descriptor).valid());
}

TEST_CASE("a truncated block is rejected naming the line", "[tma][printout]") {
  const auto msg = error_of(read_data("truncated.log"));
  CHECK_THAT(msg, Catch::Contains("x.log: line 9"));
  CHECK_THAT(msg, Catch::Contains("elementStrides"));
  // Ending at end of file.
  const auto eof = error_of("TMA Desc Addr: 0x1\nformat 9\ndim 3\n");
  CHECK_THAT(eof, Catch::Contains("ends early"));
  CHECK_THAT(eof, Catch::Contains("gmem_address"));
}

TEST_CASE("a malformed number is rejected naming the line", "[tma][printout]") {
  const auto msg = error_of(read_data("malformed_number.log"));
  CHECK_THAT(msg, Catch::Contains("line 5"));
  CHECK_THAT(msg, Catch::Contains("1x"));
  CHECK_THAT(error_of("TMA Desc Addr: 0x1\nformat nine\n"), Catch::Contains("line 2"));
  CHECK_THAT(error_of("TMA Desc Addr: 0x1\nformat 9\ndim 7\n"), Catch::Contains("'dim' must be 1..5"));
  CHECK_THAT(error_of("TMA Desc Addr: 0x1\nformat 9\ndim 3\ngmem_address zz\n"),
             Catch::Contains("hexadecimal"));
  const std::string short_tuple =
      "TMA Desc Addr: 0x1\nformat 9\ndim 3\ngmem_address 0x100\nglobalDim (128,1)\n";
  CHECK_THAT(error_of(short_tuple), Catch::Contains("fewer than dim = 3"));
}

TEST_CASE("text without blocks gives nothing; unknown enum numbers are kept", "[tma][printout]") {
  CHECK(parse_printout("hello\nworld\n", "x").empty());
  const std::string odd =
      "TMA Desc Addr: 0x1\nformat 21\ndim 1\ngmem_address 0x100\nglobalDim (64)\nglobalStrides (4)\n"
      "boxDim (16)\nelementStrides (1)\ninterleave 0\nswizzle 9\nl2Promotion 0\noobFill 0\n";
  const auto b = parse_printout(odd, "x");
  REQUIRE(b.size() == 1);
  CHECK(static_cast<int>(b[0].descriptor.data_type) == 21);
  CHECK(b[0].descriptor.strides.empty());
  const auto v = validate(b[0].descriptor);
  CHECK(v.has("tma.data_type.valid"));
  CHECK(v.has("tma.swizzle.valid"));
}

namespace {

// The seq_len 2 block with one line replaced.
std::string block_with(const std::string& key, const std::string& value) {
  std::string text = read_data("seqlen2_ok.log");
  const auto at = text.find("[rank0]: " + key + " ");
  REQUIRE(at != std::string::npos);
  const auto end = text.find('\n', at);
  return text.replace(at, end - at, "[rank0]: " + key + " " + value);
}

}  // namespace

TEST_CASE("values wider than the driver's 32-bit fields are refused with line and field", "[tma][printout]") {
  // Cast down they would read as another, valid descriptor (bf16, stride 1, no swizzle).
  CHECK_THAT(error_of(block_with("format", "4294967305")),
             Catch::StartsWith("x.log: line 3: 'format': 4294967305 is out of range (at most 2147483647)"));
  CHECK_THAT(error_of(block_with("elementStrides", "(4294967297,1,1,1,1)")),
             Catch::StartsWith("x.log: line 9: 'elementStrides': 4294967297 is out of range (at most 4294967295)"));
  CHECK_THAT(error_of(block_with("boxDim", "(64,4294967424,1,1,1)")),
             Catch::StartsWith("x.log: line 8: 'boxDim': 4294967424 is out of range"));
  CHECK_THAT(error_of(block_with("swizzle", "4294967296")),
             Catch::StartsWith("x.log: line 11: 'swizzle': 4294967296 is out of range"));
  CHECK_THAT(error_of(block_with("interleave", "2147483648")), Catch::Contains("line 10: 'interleave'"));
  CHECK_THAT(error_of(block_with("l2Promotion", "99999999999")), Catch::Contains("line 12: 'l2Promotion'"));
  CHECK_THAT(error_of(block_with("oobFill", "4294967297")), Catch::Contains("line 13: 'oobFill'"));
  CHECK_THAT(error_of(block_with("dim", "4294967299")), Catch::Contains("line 4: 'dim'"));
  // Past 64 bits: not a number at all.
  CHECK_THAT(error_of(block_with("globalDim", "(18446744073709551616,2,32,1,1)")),
             Catch::Contains("line 6: 'globalDim'"));
  // At the limits they are read, and the validator judges them.
  const auto blocks = parse_printout(block_with("format", "2147483647"), "x.log");
  REQUIRE(blocks.size() == 1);
  CHECK_FALSE(validate(blocks[0].descriptor).valid());
  CHECK(parse_printout(block_with("boxDim", "(64,4294967295,1,1,1)"), "x.log")[0].descriptor.box[1] ==
        4294967295u);
}
