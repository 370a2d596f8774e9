#include <catch2/catch.hpp>

#include "host/devices.h"

using namespace cudadiag::host;
using cudadiag::report::json;

TEST_CASE("PCI bus ids of NVML and CUDA normalise to one form") {
  CHECK(normalize_pci_bus_id("00000000:3B:00.0") == "0000:3b:00.0");
  CHECK(normalize_pci_bus_id("0000:3b:00.0") == "0000:3b:00.0");
  CHECK(normalize_pci_bus_id("00000001:AF:00.0") == "0001:af:00.0");
  CHECK(normalize_pci_bus_id("") == "");
}

TEST_CASE("devices are matched by UUID, then PCI bus id; NVML-only ones are kept") {
  const json nvml = json::array({
      json{{"index", 0}, {"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-aaaa"}, {"serial", "1650"},
           {"pci_bus_id", "00000000:1B:00.0"}, {"temperature_c", 41}},
      json{{"index", 1}, {"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-bbbb"}, {"serial", "1651"},
           {"pci_bus_id", "00000000:3B:00.0"}, {"temperature_c", 43}},
      json{{"index", 2}, {"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-cccc"},
           {"pci_bus_id", "00000000:5B:00.0"}},
  });
  // CUDA_VISIBLE_DEVICES=1,0 with a MIG-style UUID on ordinal 1: matched by PCI id.
  const json cuda = json::array({
      json{{"index", 0}, {"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-bbbb"}, {"pci_bus_id", "0000:3b:00.0"},
           {"compute_capability", "9.0"}},
      json{{"index", 1}, {"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "MIG-zzzz"}, {"pci_bus_id", "0000:1b:00.0"},
           {"compute_capability", "9.0"}},
  });
  const auto d = merge_devices(nvml, cuda);
  REQUIRE(d.size() == 3);
  CHECK(d[0]["index"] == 0);
  CHECK(d[0]["uuid"] == "GPU-bbbb");
  CHECK(d[0]["serial"] == "1651");
  CHECK(d[0]["nvml"]["temperature_c"] == 43);
  CHECK(d[0]["cuda"]["compute_capability"] == "9.0");
  CHECK(d[0]["visible_to_cuda"] == true);
  CHECK(d[1]["index"] == 1);
  CHECK(d[1]["nvml"]["uuid"] == "GPU-aaaa");
  CHECK(d[1]["pci_bus_id"] == "0000:1b:00.0");
  CHECK_FALSE(d[2].contains("index"));
  CHECK(d[2]["uuid"] == "GPU-cccc");
  CHECK(d[2]["visible_to_cuda"] == false);
  CHECK(d[2]["cuda"].is_null());
  CHECK_FALSE(d[2].contains("serial"));
}

TEST_CASE("without a CUDA probe, NVML devices are listed and visibility is not claimed") {
  const json nvml = json::array({json{{"name", "NVIDIA H200"}, {"uuid", "GPU-1"}, {"pci_bus_id", "00000000:00:06.0"}}});
  const auto d = merge_devices(nvml, nullptr);
  REQUIRE(d.size() == 1);
  CHECK_FALSE(d[0].contains("visible_to_cuda"));
  CHECK(d[0]["pci_bus_id"] == "0000:00:06.0");
  CHECK(merge_devices(json::array(), json::array()).empty());
}
