// A libcuda.so.1 with the device-discovery calls only, for CPU tests of host/cuda_driver
// and of the commands that ask the driver which GPUs a job may use. Put its directory on
// LD_LIBRARY_PATH (or dlopen it by path). Like the real driver, cuInit applies
// CUDA_VISIBLE_DEVICES: entries are PCI-order indices or GPU UUIDs (a unique prefix is
// enough), the list stops at the first entry that names no device, and a list that
// leaves no device makes cuInit return CUDA_ERROR_NO_DEVICE.
//   FAKE_LIBCUDA_GPUS=N        devices on the machine (default 2): GPU i has UUID
//                              GPU-fa4e0000-0000-0000-0000-0000000000<i>, bus 0000:<0x18+i>:00.0
//   FAKE_LIBCUDA_INIT_ERROR=N  cuInit returns N
//   FAKE_LIBCUDA_VERSION=N     cuDriverGetVersion's answer (default 13000, CUDA 13.0)
//   FAKE_LIBCUDA_LOG=FILE      each cuInit appends "CUDA_VISIBLE_DEVICES=<v|unset> CUDA_DEVICE_ORDER=<v|unset>"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct FakeUuid {
  unsigned char bytes[16];
};

std::vector<int> g_visible;  // ordinal -> machine index

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

std::string uuid_text(int machine_index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-fa4e0000-0000-0000-0000-0000000000%02x", machine_index);
  return buf;
}

// The machine index an entry names, or -1.
int lookup(const std::string& entry, int gpus) {
  if (entry.rfind("GPU-", 0) == 0) {
    int found = -1;
    for (int i = 0; i < gpus; ++i) {
      if (uuid_text(i).rfind(entry, 0) != 0) continue;
      if (found >= 0) return -1;  // ambiguous prefix
      found = i;
    }
    return found;
  }
  char* end = nullptr;
  const long i = std::strtol(entry.c_str(), &end, 10);
  return entry.empty() || *end != '\0' || i < 0 || i >= gpus ? -1 : static_cast<int>(i);
}

void log_init() {
  const char* path = std::getenv("FAKE_LIBCUDA_LOG");
  if (!path) return;
  if (FILE* f = std::fopen(path, "a")) {
    const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    const char* order = std::getenv("CUDA_DEVICE_ORDER");
    std::fprintf(f, "CUDA_VISIBLE_DEVICES=%s CUDA_DEVICE_ORDER=%s\n", cvd ? cvd : "unset", order ? order : "unset");
    std::fclose(f);
  }
}

bool valid(int ordinal) { return ordinal >= 0 && static_cast<size_t>(ordinal) < g_visible.size(); }

}  // namespace

FAKE_EXPORT int cuInit(unsigned int) {
  log_init();
  if (const int e = env_int("FAKE_LIBCUDA_INIT_ERROR", 0)) return e;
  const int gpus = env_int("FAKE_LIBCUDA_GPUS", 2);
  g_visible.clear();
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!cvd) {
    for (int i = 0; i < gpus; ++i) g_visible.push_back(i);
  } else {
    std::string list = cvd, entry;
    size_t pos = 0;
    while (pos <= list.size()) {
      const size_t comma = list.find(',', pos);
      entry = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      const int i = lookup(entry, gpus);
      if (i < 0) break;
      g_visible.push_back(i);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return g_visible.empty() ? 100 /* CUDA_ERROR_NO_DEVICE */ : 0;
}

FAKE_EXPORT int cuDriverGetVersion(int* v) {
  *v = env_int("FAKE_LIBCUDA_VERSION", 13000);
  return 0;
}

FAKE_EXPORT int cuGetErrorName(int rc, const char** name) {
  *name = rc == 100 ? "CUDA_ERROR_NO_DEVICE" : rc == 999 ? "CUDA_ERROR_UNKNOWN" : "CUDA_ERROR_FAKE";
  return 0;
}

FAKE_EXPORT int cuDeviceGetCount(int* n) {
  *n = static_cast<int>(g_visible.size());
  return 0;
}

FAKE_EXPORT int cuDeviceGet(int* dev, int ordinal) {
  if (!valid(ordinal)) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *dev = ordinal;
  return 0;
}

FAKE_EXPORT int cuDeviceGetName(char* name, int len, int dev) {
  if (!valid(dev)) return 101;
  std::snprintf(name, static_cast<size_t>(len), "Fake GPU %d", g_visible[static_cast<size_t>(dev)]);
  return 0;
}

FAKE_EXPORT int cuDeviceGetUuid_v2(FakeUuid* u, int dev) {
  if (!valid(dev)) return 101;
  std::memset(u->bytes, 0, sizeof u->bytes);
  u->bytes[0] = 0xfa;
  u->bytes[1] = 0x4e;
  u->bytes[15] = static_cast<unsigned char>(g_visible[static_cast<size_t>(dev)]);
  return 0;
}

FAKE_EXPORT int cuDeviceTotalMem_v2(unsigned long long* bytes, int dev) {
  if (!valid(dev)) return 101;
  *bytes = 80ull << 30;
  return 0;
}

FAKE_EXPORT int cuDeviceGetAttribute(int* v, int attr, int dev) {
  if (!valid(dev)) return 101;
  if (attr == 75) *v = 9;
  else if (attr == 76) *v = 0;
  else return 1;  // CUDA_ERROR_INVALID_VALUE
  return 0;
}

FAKE_EXPORT int cuDeviceGetPCIBusId(char* bus, int len, int dev) {
  if (!valid(dev)) return 101;
  std::snprintf(bus, static_cast<size_t>(len), "0000:%02x:00.0", 0x18 + g_visible[static_cast<size_t>(dev)]);
  return 0;
}
