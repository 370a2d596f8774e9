// --devices on a host with several GPUs, from an NVML snapshot (the parent never calls CUDA).
#include <catch2/catch.hpp>

#include "suite/device_selection.h"
#include "util/errors.h"

using namespace cudadiag;
using report::json;

namespace {

json eight_gpus() {
  json devices = json::array();
  for (int i = 0; i < 8; ++i)
    devices.push_back(json{{"index", i}, {"uuid", "GPU-" + std::to_string(i)}, {"name", "NVIDIA H200"}});
  return json{{"nvml", {{"available", true}}}, {"devices", devices}};
}

}  // namespace

TEST_CASE("devices: all, a list, one", "[devices]") {
  std::string why;
  CHECK(suite::select_devices(eight_gpus(), "all", &why).size() == 8);
  const auto two = suite::select_devices(eight_gpus(), "0,1", &why);
  REQUIRE(two.size() == 2);
  CHECK(two[1].uuid == "GPU-1");
  const auto odd = suite::select_devices(eight_gpus(), "7,3,7", &why);  // duplicates once, order kept
  REQUIRE(odd.size() == 2);
  CHECK(odd[0].index == 7);
  CHECK(odd[1].index == 3);
  CHECK(suite::select_devices(eight_gpus(), "0", &why).size() == 1);
}

TEST_CASE("devices: bad lists name what is wrong", "[devices]") {
  std::string why;
  CHECK_THROWS_WITH(suite::select_devices(eight_gpus(), "8", &why), Catch::Contains("no device 8") &&
                                                                        Catch::Contains("indices 0..7"));
  CHECK_THROWS_WITH(suite::select_devices(eight_gpus(), "0,x", &why), Catch::Contains("'x' is not a device index"));
  CHECK_THROWS_WITH(suite::select_devices(eight_gpus(), "-1", &why), Catch::Contains("'-1'"));
  CHECK_THROWS_AS(suite::select_devices(eight_gpus(), ",", &why), UsageError);
}

TEST_CASE("devices: no GPU says why; jobs scale with the GPUs and the CPUs", "[devices]") {
  std::string why;
  CHECK(suite::select_devices(json{{"nvml", {{"available", false}, {"reason", "no libnvidia-ml"}}}}, "all", &why).empty());
  CHECK(why == "no NVIDIA driver: no libnvidia-ml");
  CHECK(suite::default_jobs(1, 16) == 8);
  CHECK(suite::default_jobs(8, 128) == 64);
  CHECK(suite::default_jobs(8, 16) == 16);
  CHECK(suite::default_jobs(0, 2) == 2);
  CHECK(suite::default_jobs(1, 0) == 1);
}
