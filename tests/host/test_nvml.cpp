// NVML is exercised through a fake Api table: the real library is absent here, and the
// fake lets each field answer success, NOT_SUPPORTED or be missing.
#include <catch2/catch.hpp>

#include <cstring>

#include "host/nvml.h"

using namespace cudadiag::host;
using namespace cudadiag::host::nvml;

namespace {

int g_init_rc = kSuccess;
int g_shutdowns = 0;
DeviceSt* const kDev0 = reinterpret_cast<DeviceSt*>(0x1000);
DeviceSt* const kDev1 = reinterpret_cast<DeviceSt*>(0x2000);

Return copy_str(char* buf, unsigned int len, const char* s) {
  if (std::strlen(s) + 1 > len) return kInsufficientSize;
  std::strcpy(buf, s);
  return kSuccess;
}

Api fake_nvml_api() {
  Api a;
  a.init_v2 = [] { return g_init_rc; };
  a.shutdown = [] { ++g_shutdowns; return kSuccess; };
  a.error_string = [](Return rc) -> const char* { return rc == kNotSupported ? "Not Supported" : "Some Error"; };
  a.system_get_driver_version = [](char* b, unsigned int n) { return copy_str(b, n, "580.65.06"); };
  a.system_get_cuda_driver_version_v2 = [](int* v) { *v = 13000; return kSuccess; };
  a.device_get_count_v2 = [](unsigned int* n) { *n = 2; return kSuccess; };
  a.device_get_handle_by_index_v2 = [](unsigned int i, Device* d) { *d = i == 0 ? kDev0 : kDev1; return kSuccess; };
  a.device_get_name = [](Device, char* b, unsigned int n) { return copy_str(b, n, "NVIDIA H100 80GB HBM3"); };
  a.device_get_uuid = [](Device d, char* b, unsigned int n) {
    return copy_str(b, n, d == kDev0 ? "GPU-0000-aaaa" : "GPU-1111-bbbb");
  };
  a.device_get_serial = [](Device d, char* b, unsigned int n) {
    return d == kDev0 ? copy_str(b, n, "1654024074112") : kNotSupported;
  };
  a.device_get_pci_info_v3 = [](Device, PciInfo* p) {
    std::memset(p, 0x7f, sizeof *p);  // the reader must rely on busId being terminated
    std::strcpy(p->busId, "00000000:3B:00.0");
    return kSuccess;
  };
  a.device_get_ecc_mode = [](Device, int* cur, int* pending) { *cur = 1; *pending = 1; return kSuccess; };
  a.device_get_total_ecc_errors = [](Device d, int type, int counter, unsigned long long* n) {
    if (d == kDev1) return kNotSupported;
    *n = (type == kMemoryErrorUncorrected ? 2 : 5) + (counter == kAggregateEcc ? 100 : 0);
    return kSuccess;
  };
  a.device_get_retired_pages = [](Device, int cause, unsigned int* count, unsigned long long* addrs) {
    REQUIRE(addrs == nullptr);
    *count = cause == kRetiredDoubleBit ? 3 : 0;
    return cause == kRetiredDoubleBit ? kInsufficientSize : kSuccess;
  };
  a.device_get_remapped_rows = [](Device, unsigned int* c, unsigned int* u, unsigned int* p, unsigned int* f) {
    *c = 1; *u = 0; *p = 1; *f = 0;
    return kSuccess;
  };
  a.device_get_persistence_mode = [](Device, int* m) { *m = 1; return kSuccess; };
  a.device_get_mig_mode = [](Device, unsigned int*, unsigned int*) { return kNotSupported; };
  a.device_get_compute_mode = [](Device, int* m) { *m = 3; return kSuccess; };
  a.device_get_clock_info = [](Device, int type, unsigned int* mhz) {
    if (type == kClockSm) { *mhz = 1980; return kSuccess; }
    return kNotSupported;
  };
  a.device_get_temperature = [](Device, int, unsigned int* t) { *t = 41; return kSuccess; };
  a.device_get_power_usage = [](Device, unsigned int* mw) { *mw = 72500; return kSuccess; };
  a.device_get_memory_info = nullptr;  // a driver without the symbol
  return a;
}

}  // namespace

TEST_CASE("snapshot reads driver and per-device facts") {
  g_init_rc = kSuccess;
  g_shutdowns = 0;
  const auto s = snapshot(fake_nvml_api());
  CHECK(s["nvml"]["available"] == true);
  CHECK(s["driver"]["version"] == "580.65.06");
  CHECK(s["driver"]["nvml_cuda_driver_version"] == 13000);
  CHECK(s["driver"]["nvml_cuda_driver_version_string"] == "13.0");
  REQUIRE(s["devices"].size() == 2);
  const auto& d = s["devices"][0];
  CHECK(d["index"] == 0);
  CHECK(d["name"] == "NVIDIA H100 80GB HBM3");
  CHECK(d["uuid"] == "GPU-0000-aaaa");
  CHECK(d["serial"] == "1654024074112");
  CHECK(d["pci_bus_id"] == "00000000:3B:00.0");
  CHECK(d["ecc_mode"]["current"] == "enabled");
  CHECK(d["ecc_errors"]["volatile"]["corrected"] == 5);
  CHECK(d["ecc_errors"]["volatile"]["uncorrected"] == 2);
  CHECK(d["ecc_errors"]["aggregate"]["uncorrected"] == 102);
  CHECK(d["retired_pages"]["single_bit"] == 0);
  CHECK(d["retired_pages"]["double_bit"] == 3);
  CHECK(d["remapped_rows"]["pending"] == true);
  CHECK(d["remapped_rows"]["failure"] == false);
  CHECK(d["persistence_mode"] == "enabled");
  CHECK(d["compute_mode"] == "exclusive_process");
  CHECK(d["clocks_mhz"]["sm"] == 1980);
  CHECK(d["clocks_mhz"]["mem"].is_null());
  CHECK(d["temperature_c"] == 41);
  CHECK(d["power_w"].get<double>() == Approx(72.5));
  CHECK(g_shutdowns == 1);
}

TEST_CASE("NOT_SUPPORTED and missing symbols become null with a reason") {
  g_init_rc = kSuccess;
  const auto s = snapshot(fake_nvml_api());
  const auto& d0 = s["devices"][0];
  CHECK(d0["mig_mode"].is_null());
  CHECK(d0["unavailable"]["mig_mode"] == "Not Supported (3)");
  CHECK(d0["memory"].is_null());
  CHECK(d0["unavailable"]["memory"].get<std::string>().find("symbol missing") != std::string::npos);
  const auto& d1 = s["devices"][1];
  CHECK(d1["serial"].is_null());
  CHECK(d1["ecc_errors"].is_null());
  CHECK(d1["unavailable"]["ecc_errors"] == "Not Supported (3)");
}

TEST_CASE("a failing nvmlInit is reported, not thrown") {
  g_init_rc = kDriverNotLoaded;
  g_shutdowns = 0;
  auto api = fake_nvml_api();
  api.error_string = nullptr;  // fallback names
  const auto s = snapshot(api);
  CHECK(s["nvml"]["available"] == false);
  CHECK(s["nvml"]["reason"] == "nvmlInit_v2: Driver Not Loaded (9)");
  CHECK(s["devices"].empty());
  CHECK(g_shutdowns == 0);
  g_init_rc = kSuccess;
}

TEST_CASE("an NVML without the core symbols is unavailable") {
  Api empty;
  const auto s = snapshot(empty);
  CHECK(s["nvml"]["available"] == false);
  CHECK(s["nvml"]["reason"].get<std::string>().find("nvmlInit_v2") != std::string::npos);
}

TEST_CASE("loading a missing library fails with the loader's message") {
  Api api;
  std::string reason;
  CHECK_FALSE(load(api, reason, "libnvidia-ml-does-not-exist.so.1"));
  CHECK(reason.find("libnvidia-ml-does-not-exist.so.1") != std::string::npos);
  CHECK(api.init_v2 == nullptr);
}

TEST_CASE("nvml_snapshot on this machine never throws and says whether NVML is there") {
  const auto s = nvml_snapshot();
  REQUIRE(s["nvml"].contains("available"));
  if (s["nvml"]["available"] == false) CHECK(s["nvml"]["reason"].is_string());
  CHECK(s["devices"].is_array());
}

TEST_CASE("several GPUs: the path and NVLink between every pair, and each GPU's active links") {
  g_init_rc = kSuccess;
  auto api = fake_nvml_api();
  api.device_get_topology_common_ancestor = [](Device a, Device b, int* level) {
    REQUIRE(a != b);
    *level = 40;  // NVML_TOPOLOGY_NODE
    return kSuccess;
  };
  api.device_get_p2p_status = [](Device, Device, int caps, int* status) {
    REQUIRE(caps == kP2pCapsNvlink);
    *status = kP2pStatusOk;
    return kSuccess;
  };
  api.device_get_nvlink_state = [](Device d, unsigned int link, int* active) {
    if (d == kDev1) return kNotSupported;
    *active = link < 6 ? 1 : 0;  // links 0..5 up
    return kSuccess;
  };
  const auto s = snapshot(api);
  REQUIRE(s.contains("topology"));
  REQUIRE(s["topology"].size() == 1);
  const auto& pair = s["topology"][0];
  CHECK(pair["a"] == 0);
  CHECK(pair["b"] == 1);
  CHECK(pair["path"] == "same_numa_node");
  CHECK(pair["nvlink"] == true);
  CHECK(s["devices"][0]["nvlink_active_links"] == 6);
  CHECK(s["devices"][1]["nvlink_active_links"].is_null());
  CHECK(s["devices"][1]["unavailable"].contains("nvlink_active_links"));

  // A driver without the topology symbols: the pair is listed, its facts are null.
  const auto plain = snapshot(fake_nvml_api());
  REQUIRE(plain["topology"].size() == 1);
  CHECK(plain["topology"][0]["path"].is_null());
  CHECK(plain["topology"][0]["nvlink"].is_null());
  CHECK(topology_level_name(10) == std::string("single_switch"));
  CHECK(topology_level_name(7) == std::string("unknown"));
}
