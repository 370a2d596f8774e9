#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "sanitizer/memcheck.h"
#include "sanitizer/xml.h"

using namespace cudadiag::sanitizer;

namespace {
std::string read_data(const std::string& name) {
  std::ifstream in(std::string(CUDADIAG_TEST_DATA) + "/sanitizer/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("memcheck: real H200 out-of-bounds write", "[sanitizer]") {
  auto r = parse_memcheck_xml(read_data("real_h200_memcheck_oob_write.xml"));
  REQUIRE(r.findings.size() == 2);
  const auto& f = r.findings[0];
  CHECK(f.record_kind == "Precise");
  CHECK(f.level == "Error");
  CHECK(f.message == "Invalid __global__ write of size 4 bytes is out of bounds");
  CHECK(f.direction == "write");
  CHECK(f.space == "__global__");
  CHECK(f.access_size == 4);
  CHECK(f.error == "out of bounds");
  CHECK(f.address == "0x7f5190800fa0");
  CHECK(f.kernel == "oob_write");
  CHECK(f.pc == "0xc0");
  CHECK(f.file == "/work/main/.device-carry/probe.cu");
  CHECK(f.line == 8);
  REQUIRE(f.thread.has_value());
  CHECK((*f.thread)[0] == 232);
  REQUIRE(f.block.has_value());
  CHECK((*f.block)[0] == 3);
  CHECK(f.host_frames.size() == 8);
  CHECK(f.host_frames[0].function == "cuLaunchKernel");
  CHECK_FALSE(f.nearest.has_value());  // the XML does not carry it

  const auto& api = r.findings[1];
  REQUIRE(api.api.has_value());
  CHECK(api.api->call == "cudaDeviceSynchronize");
  CHECK(api.api->code == 719);
  CHECK(api.api->error_name == "cudaErrorLaunchFailure");
  CHECK(api.api->description == "unspecified launch failure");

  // The text output does carry the distance ("4,000" with a thousands separator).
  attach_text_allocations(r, read_data("real_h200_memcheck_oob_write.txt"));
  REQUIRE(r.findings[0].nearest.has_value());
  CHECK(r.findings[0].nearest->distance_bytes == 1);
  CHECK(r.findings[0].nearest->relation == "after");
  CHECK(r.findings[0].nearest->address == "0x7f5190800000");
  CHECK(r.findings[0].nearest->size == 4000);
  CHECK_FALSE(r.findings[1].nearest.has_value());

  const auto j = to_json(r);
  CHECK(j["errors"] == 2);
  CHECK(j["first"] == "Invalid __global__ write of size 4 bytes is out of bounds in oob_write");
  CHECK(j["findings"][0]["location"] == "/work/main/.device-carry/probe.cu:8");
  CHECK(j["findings"][0]["thread"] == nlohmann::ordered_json::array({232, 0, 0}));
  CHECK(j["findings"][0]["nearest_allocation"]["distance_bytes"] == 1);
  CHECK(j["findings"][1]["api"]["code"] == 719);
}

TEST_CASE("memcheck: real H200 out-of-bounds read and device assert", "[sanitizer]") {
  const auto rd = parse_memcheck_xml(read_data("real_h200_memcheck_oob_read.xml"));
  REQUIRE_FALSE(rd.findings.empty());
  CHECK(rd.findings[0].direction == "read");
  CHECK_FALSE(rd.findings[0].address.empty());

  const auto as = parse_memcheck_xml(read_data("real_h200_memcheck_assert.xml"));
  REQUIRE_FALSE(as.findings.empty());
  CHECK(as.findings[0].record_kind == "Imprecise");
  CHECK(as.findings[0].message == "Warp assert");
  CHECK(as.findings[0].thread.has_value());
  // __assertfail is the device function; the kernel is the caller frame
  CHECK(as.findings[0].kernel == "dassert(int)");
  CHECK(as.findings[0].device_function == "__assertfail");

  const auto clean = parse_memcheck_xml(read_data("real_h200_memcheck_misaligned.xml"));
  CHECK(clean.findings.empty());
  CHECK(to_json(clean)["errors"] == 0);
}

TEST_CASE("memcheck: synthetic samples with alternative field names", "[sanitizer]") {
  const auto w = parse_memcheck_xml(read_data("synthetic_oob_write.xml"));
  REQUIRE(w.findings.size() == 2);
  CHECK(w.findings[0].message == "Invalid __global__ write of size 4 bytes");
  REQUIRE(w.findings[0].nearest.has_value());
  CHECK(w.findings[0].nearest->distance_bytes == 4);
  CHECK(w.findings[0].nearest->size == 1024);
  CHECK(w.findings[0].host_frames[1].function ==
        "cudadiag::faults::run_oob_write(cudadiag::gpu::Session&, int)");
  CHECK(w.findings[1].api->code == 719);

  const auto u = parse_memcheck_xml(read_data("synthetic_underrun_read.xml"));
  REQUIRE(u.findings.size() == 1);
  CHECK(u.error_count == 1);
  CHECK(u.findings[0].address == "0x7f00cafe0ff8");
  CHECK(u.findings[0].access_size == 8);
  CHECK(u.findings[0].direction == "read");
  REQUIRE(u.findings[0].nearest.has_value());
  CHECK(u.findings[0].nearest->relation == "before");
  CHECK(u.findings[0].nearest->distance_bytes == 8);

  const auto m = parse_memcheck_xml(read_data("synthetic_misaligned.xml"));
  REQUIRE(m.findings.size() == 1);
  CHECK(m.findings[0].kernel == "fa_forward_kernel<64, 64, 4>");
  CHECK(m.findings[0].line == 112);
  CHECK((*m.findings[0].thread)[2] == 1);

  CHECK(parse_memcheck_xml(read_data("synthetic_clean.xml")).findings.empty());
}

TEST_CASE("memcheck: truncated XML is an error naming the place", "[sanitizer]") {
  try {
    parse_memcheck_xml(read_data("synthetic_truncated.xml"));
    FAIL("truncated XML accepted");
  } catch (const XmlError& e) {
    CHECK(e.line() > 1);
    CHECK_THAT(std::string(e.what()), Catch::Contains("line " + std::to_string(e.line())));
  }
}

TEST_CASE("memcheck: nearest cudadiag buffer named from the launch's buffers", "[sanitizer]") {
  auto r = parse_memcheck_xml(read_data("real_h200_memcheck_oob_write.xml"));
  // 0x7f5190800fa0 = 1 byte past a 4000-byte buffer at 0x7f5190800000
  attach_nearest_buffers(r, {{"in", 0x7f5190700000ULL, 4000}, {"out", 0x7f5190800000ULL, 4000}});
  REQUIRE(r.findings[0].nearest.has_value());
  CHECK(r.findings[0].nearest->buffer == "out");
  CHECK(r.findings[0].nearest->distance_bytes == 1);
  CHECK(r.findings[0].nearest->relation == "after");
  CHECK(r.findings[0].nearest->size == 4000);

  auto inside = parse_memcheck_xml(read_data("real_h200_memcheck_oob_write.xml"));
  attach_nearest_buffers(inside, {{"slab", 0x7f5190000000ULL, 64ULL << 20}});
  CHECK(inside.findings[0].nearest->relation == "inside");
}

TEST_CASE("memcheck: free-text sentences", "[sanitizer]") {
  const auto n = parse_nearest_allocation(
      "Access to 0x10 is out of bounds and is 16 bytes before the nearest allocation at 0x20 of size 1,048,576 bytes");
  REQUIRE(n.has_value());
  CHECK(n->distance_bytes == 16);
  CHECK(n->relation == "before");
  CHECK(n->address == "0x20");
  CHECK(n->size == 1048576);
  CHECK_FALSE(parse_nearest_allocation("nothing here").has_value());

  const auto a = parse_api_error(
      "Program hit cudaErrorIllegalAddress (error 700) due to \"an illegal memory access was "
      "encountered\" on CUDA API call to cudaMemcpy.");
  REQUIRE(a.has_value());
  CHECK(a->code == 700);
  CHECK(a->call == "cudaMemcpy");
  CHECK(a->error_name == "cudaErrorIllegalAddress");
  CHECK_FALSE(parse_api_error("no api error").has_value());
}

TEST_CASE("memcheck: access text of a message", "[sanitizer]") {
  auto a = parse_access_text("Invalid __global__ write of size 4 bytes");
  CHECK(a.space == "__global__");
  CHECK(a.direction == "write");
  CHECK(a.size == 4);
  a = parse_access_text("Invalid __shared__ read of size 16 bytes");
  CHECK(a.space == "__shared__");
  CHECK(a.direction == "read");
  CHECK(a.size == 16);
  a = parse_access_text("Misaligned Shared or Local Address");
  CHECK(a.direction.empty());
  CHECK_FALSE(a.size);
  a = parse_access_text("Invalid __global__ read of size x bytes");
  CHECK_FALSE(a.size);
  a = parse_access_text("of size " + std::string(1000, '9'));  // bounded, no overflow trap
  CHECK(a.size);
}

namespace {

// memcheck's XML as a two-rank NCCL job leaves it: `api` records of the API errors NCCL
// handles (probing its own kernels), then the faulting kernel's access (the real H200
// record), then a record of the error the program hit at its next synchronisation.
std::string nccl_noise_xml(int api_records) {
  const std::string real = read_data("real_h200_memcheck_oob_write.xml");
  const auto first = real.find("<record>");
  const auto second = real.find("<record>", first + 1);
  const auto end = real.find("</ComputeSanitizerOutput>");
  REQUIRE(first != std::string::npos);
  REQUIRE(second != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::string noise;
  for (int i = 0; i < api_records; ++i)
    noise +=
        "  <record>\n    <kind>Api</kind>\n    <what>\n      <text>Program hit cudaErrorNoKernelImageForDevice (error "
        "209) due to &quot;no kernel image is available for execution on the device&quot; on CUDA API call to "
        "cudaFuncGetAttributes.</text>\n      <api>cudaFuncGetAttributes</api>\n      "
        "<error>cudaErrorNoKernelImageForDevice</error>\n      <result>209</result>\n    </what>\n    <hostStack>\n"
        "      <frame>\n        <func>ncclInitKernelsForDevice(int, unsigned long*)</func>\n        "
        "<module>libnccl.so.2</module>\n      </frame>\n    </hostStack>\n  </record>\n";
  return real.substr(0, first) + noise + real.substr(first, end - first) + real.substr(end);
}

}  // namespace

TEST_CASE("memcheck: API errors a program handled are counted, a few kept; memory findings all kept", "[sanitizer]") {
  const std::string xml = nccl_noise_xml(100);
  const auto r = parse_memcheck_xml(xml);
  CHECK(r.api_errors == 101);  // NCCL's hundred and the program's cudaDeviceSynchronize
  REQUIRE(r.findings.size() == static_cast<std::size_t>(kKeptApiErrors) + 1);
  for (long long i = 0; i < kKeptApiErrors; ++i) {
    REQUIRE(r.findings[static_cast<std::size_t>(i)].api);
    CHECK(r.findings[static_cast<std::size_t>(i)].api->call == "cudaFuncGetAttributes");
    CHECK(r.findings[static_cast<std::size_t>(i)].api->code == 209);
  }
  const auto& access = r.findings.back();
  CHECK_FALSE(access.api);
  CHECK(access.message == "Invalid __global__ write of size 4 bytes is out of bounds");
  CHECK(access.kernel == "oob_write");

  const auto j = to_json(r);
  CHECK(j["errors"] == 102);
  CHECK(j["api_errors"] == 101);
  CHECK(j["api_errors_kept"] == kKeptApiErrors);
  CHECK(j["findings"].size() == 4u);
  CHECK(j["first"] == "Invalid __global__ write of size 4 bytes is out of bounds in oob_write");
  // The report of such a run stays small: what is kept does not grow with the noise.
  const auto small = to_json(parse_memcheck_xml(nccl_noise_xml(10))).dump();
  const auto large = j.dump();
  CHECK(xml.size() > 50000);
  CHECK(large.size() < 8000);
  CHECK(large.size() - small.size() < 16);  // the counts' digits only

  // Fewer API errors than kept: all of them stay.
  const auto few = parse_memcheck_xml(read_data("real_h200_memcheck_oob_write.xml"));
  CHECK(few.api_errors == 1);
  CHECK(few.findings.size() == 2);
  CHECK(to_json(few)["api_errors"] == 1);
}
