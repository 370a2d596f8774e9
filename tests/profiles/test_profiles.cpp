#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiles/profile.h"
#include "profiles/sanitizer_tool.h"

using namespace cudadiag::profiles;

TEST_CASE("base profiles set the documented environment and allocator", "[profiles]") {
  const auto d = parse_profile("default");
  CHECK(d.env_set.empty());
  CHECK(d.allocator == AllocatorRule::keep);
  CHECK(allocator_for(d, Allocator::fence_back) == Allocator::pool);

  const auto b = parse_profile("blocking");
  CHECK(b.env_set.at("CUDA_LAUNCH_BLOCKING") == "1");
  CHECK(allocator_for(b, Allocator::fence_back) == Allocator::pool);

  const auto n = parse_profile("nocache");
  CHECK(allocator_for(n, Allocator::fence_back) == Allocator::direct);
  CHECK(n.env_set.at("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1");

  const auto f = parse_profile("fence");
  CHECK(allocator_for(f, Allocator::fence_back) == Allocator::fence_back);
  CHECK(allocator_for(f, Allocator::fence_front) == Allocator::fence_front);
  CHECK_FALSE(f.sanitizer);

  const auto s = parse_profile("sanitizer");
  CHECK(s.sanitizer);
  // memcheck sees CUDA allocations only: the sanitizer runs with one cudaMalloc per buffer
  CHECK(allocator_for(s, Allocator::fence_front) == Allocator::direct);
}

TEST_CASE("profiles compose with '+'", "[profiles]") {
  const auto bf = parse_profile("blocking+fence");
  CHECK(bf.name == "blocking+fence");
  CHECK(bf.env_set.at("CUDA_LAUNCH_BLOCKING") == "1");
  CHECK(allocator_for(bf, Allocator::fence_front) == Allocator::fence_front);

  const auto bs = parse_profile(" blocking + sanitizer ");
  CHECK(bs.name == "blocking+sanitizer");
  CHECK(bs.sanitizer);
  CHECK(bs.env_set.count("CUDA_LAUNCH_BLOCKING") == 1);

  // default contributes nothing when combined
  CHECK(parse_profile("default+fence").name == "fence");
  CHECK(parse_profile("fence+sanitizer").allocator == AllocatorRule::fence);
  CHECK(parse_profile("blocking+sanitizer").allocator == AllocatorRule::direct);
}

TEST_CASE("bad profiles are rejected with the offending names", "[profiles]") {
  CHECK_THROWS_WITH(parse_profile("blocking+turbo"), Catch::Contains("'turbo'"));
  CHECK_THROWS_WITH(parse_profile("foo+bar"), Catch::Contains("'foo', 'bar'"));
  CHECK_THROWS_WITH(parse_profile("fence+fence"), Catch::Contains("twice"));
  CHECK_THROWS_WITH(parse_profile("nocache+fence"), Catch::Contains("allocator"));
  CHECK_THROWS_WITH(parse_profile("blocking+"), Catch::Contains("empty part"));
  CHECK_THROWS_AS(parse_profile(""), std::invalid_argument);
}

TEST_CASE("profile lists", "[profiles]") {
  const auto list = parse_profile_list("default,blocking+fence,nocache");
  REQUIRE(list.size() == 3);
  CHECK(list[1].name == "blocking+fence");
  CHECK_THROWS_WITH(parse_profile_list("fence,default+fence"), Catch::Contains("twice"));
  CHECK_THROWS_WITH(parse_profile_list("fence,"), Catch::Contains("empty entry"));
  CHECK_THROWS_WITH(parse_profile_list("fence,nope"), Catch::Contains("'nope'"));
}

TEST_CASE("compute-sanitizer is searched on PATH, CUDA_HOME and /usr/local/cuda", "[profiles]") {
  auto env = [](const char* name) -> const char* {
    const std::string n = name;
    if (n == "PATH") return "/opt/a/bin:/opt/cuda-13/bin";
    if (n == "CUDA_HOME") return "/opt/cudahome";
    return nullptr;
  };
  std::set<std::string> present;
  auto exists = [&](const std::string& p) { return present.count(p) > 0; };

  auto t = find_compute_sanitizer(env, exists);
  CHECK_FALSE(t.found);
  CHECK_THAT(t.reason, Catch::Contains("not found"));

  present = {"/usr/local/cuda/compute-sanitizer/compute-sanitizer", "/opt/cudahome/bin/compute-sanitizer"};
  t = find_compute_sanitizer(env, exists);
  REQUIRE(t.found);
  CHECK(t.path == "/opt/cudahome/bin/compute-sanitizer");  // CUDA_HOME before /usr/local/cuda

  present.insert("/opt/cuda-13/bin/compute-sanitizer");
  CHECK(find_compute_sanitizer(env, exists).path == "/opt/cuda-13/bin/compute-sanitizer");  // PATH first

  present = {"/opt/cuda-13/bin/../compute-sanitizer/compute-sanitizer"};
  CHECK(find_compute_sanitizer(env, exists).found);  // next to nvcc
}

TEST_CASE("sanitizer argv saves XML to the given file", "[profiles]") {
  const auto a = sanitizer_argv("/x/compute-sanitizer", "/tmp/out.xml");
  REQUIRE(a.size() >= 6);
  CHECK(a[0] == "/x/compute-sanitizer");
  bool has_xml = false, has_save = false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "--xml") has_xml = true;
    if (a[i] == "--save" && i + 1 < a.size() && a[i + 1] == "/tmp/out.xml") has_save = true;
  }
  CHECK(has_xml);
  CHECK(has_save);
}

TEST_CASE("sanitizer argv adds --padding only when asked", "[profiles]") {
  const auto plain = sanitizer_argv("/x/compute-sanitizer", "/tmp/out.xml");
  for (const auto& s : plain) CHECK(s != "--padding");
  const auto padded = sanitizer_argv("/x/compute-sanitizer", "/tmp/out.xml", 65536);
  REQUIRE(padded.size() == plain.size() + 2);
  // The option comes right after the tool selection, before --xml/--save.
  CHECK(padded[1] == "--tool");
  CHECK(padded[2] == "memcheck");
  CHECK(padded[3] == "--padding");
  CHECK(padded[4] == "65536");
  CHECK(std::vector<std::string>(padded.begin() + 5, padded.end()) ==
        std::vector<std::string>(plain.begin() + 3, plain.end()));
}
