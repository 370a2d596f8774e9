// Two processes sharing device memory over CUDA IPC, as torch.multiprocessing does, run
// against the fake driver (tests/interposer/fake_driver) with and without the interposer.
// The exporter allocates, fills and hands the buffer to a child it spawns (posix_spawn of
// itself, its environment inherited); the child maps it, reads it, writes it with a
// launch, and the exporter checks what it wrote. Each process prints what it did.
//
//   ipc_probe legacy [overrun]  cuMemAlloc, cuIpcGetMemHandle; the child cuIpcOpenMemHandle,
//                               fills the buffer (one byte past its end with `overrun`),
//                               cuIpcCloseMemHandle
//   ipc_probe retain            cuMemAlloc, cuMemRetainAllocationHandle and
//                               cuMemExportToShareableHandle; the child imports the file
//                               descriptor (inherited), maps it and fills it. Then the buffer
//                               is freed and another of its size allocated
//   ipc_probe own               memory the program maps itself (cuMemCreate exportable,
//                               cuMemMap), handed to the child the same way
//   ipc_probe own-legacy        cuIpcGetMemHandle of memory the program mapped itself: the
//                               driver refuses VMM memory
// A failing call prints "FAILED: <call> returned <code> (<name>)" and exits 1; the
// exporter ends as its child ended.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "end_like.h"
#include "probe_driver.h"

extern char** environ;

namespace {

using probe::g_gpa;
using probe::get;


struct Api {
  PFN_cuInit_v2000 init = get<PFN_cuInit_v2000>("cuInit");
  PFN_cuMemAlloc_v3020 alloc = get<PFN_cuMemAlloc_v3020>("cuMemAlloc");
  PFN_cuMemFree_v3020 free = get<PFN_cuMemFree_v3020>("cuMemFree");
  PFN_cuIpcGetMemHandle_v4010 get_handle = get<PFN_cuIpcGetMemHandle_v4010>("cuIpcGetMemHandle");
  PFN_cuIpcOpenMemHandle_v11000 open_handle = get<PFN_cuIpcOpenMemHandle_v11000>("cuIpcOpenMemHandle");
  PFN_cuIpcCloseMemHandle_v4010 close_handle = get<PFN_cuIpcCloseMemHandle_v4010>("cuIpcCloseMemHandle");
  PFN_cuMemRetainAllocationHandle_v11000 retain = get<PFN_cuMemRetainAllocationHandle_v11000>("cuMemRetainAllocationHandle");
  PFN_cuMemExportToShareableHandle_v10020 export_fd =
      get<PFN_cuMemExportToShareableHandle_v10020>("cuMemExportToShareableHandle");
  PFN_cuMemImportFromShareableHandle_v10020 import_fd =
      get<PFN_cuMemImportFromShareableHandle_v10020>("cuMemImportFromShareableHandle");
  PFN_cuMemCreate_v10020 create = get<PFN_cuMemCreate_v10020>("cuMemCreate");
  PFN_cuMemRelease_v10020 release = get<PFN_cuMemRelease_v10020>("cuMemRelease");
  PFN_cuMemAddressReserve_v10020 reserve = get<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve");
  PFN_cuMemAddressFree_v10020 address_free = get<PFN_cuMemAddressFree_v10020>("cuMemAddressFree");
  PFN_cuMemMap_v10020 map = get<PFN_cuMemMap_v10020>("cuMemMap");
  PFN_cuMemUnmap_v10020 unmap = get<PFN_cuMemUnmap_v10020>("cuMemUnmap");
  PFN_cuMemSetAccess_v10020 set_access = get<PFN_cuMemSetAccess_v10020>("cuMemSetAccess");
  PFN_cuModuleLoadData_v2000 load = get<PFN_cuModuleLoadData_v2000>("cuModuleLoadData");
  PFN_cuModuleGetFunction_v2000 function = get<PFN_cuModuleGetFunction_v2000>("cuModuleGetFunction");
  PFN_cuLaunchKernel_v4000 launch = get<PFN_cuLaunchKernel_v4000>("cuLaunchKernel");
};

constexpr std::size_t kBytes = 4000;
constexpr std::size_t kOwnBytes = 64 * 1024;  // one granule of the fake driver

const char* error_name(int rc) {
  switch (rc) {
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    default: return "error";
  }
}

int fail(const char* role, const char* what, int rc) {
  std::printf("%s: FAILED: %s returned %d (%s)\n", role, what, rc, error_name(rc));
  return 1;
}

CUresult fill(const Api& api, CUdeviceptr p, unsigned long n, int value) {
  const CUfunction f = probe::fill_bytes(api);
  if (!f) return CUDA_ERROR_NOT_FOUND;
  return probe::fill(api, f, p, n, value);
}

std::string to_hex(const void* data, std::size_t n) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<const unsigned char*>(data)[i];
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

bool from_hex(const std::string& text, void* out, std::size_t n) {
  if (text.size() != 2 * n) return false;
  for (std::size_t i = 0; i < n; ++i)
    static_cast<unsigned char*>(out)[i] = static_cast<unsigned char>(std::stoul(text.substr(2 * i, 2), nullptr, 16));
  return true;
}

// Runs this program again with `args` and the same environment; its wait status.
int run_child(const char* self, const std::string& a1, const std::string& a2, const std::string& a3) {
  std::fflush(stdout);
  char* argv[] = {const_cast<char*>(self), const_cast<char*>(a1.c_str()), const_cast<char*>(a2.c_str()),
                  const_cast<char*>(a3.c_str()), nullptr};
  pid_t child = 0;
  if (posix_spawn(&child, self, nullptr, nullptr, argv, environ) != 0) return -1;
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// Ends as the child ended (or failed to start).
int exporter_ends_like(int status) { return status < 0 ? 1 : end_like(status, "exporter: "); }

int exporter_checks(CUdeviceptr p, std::size_t n) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  std::printf("exporter: the child wrote the buffer: %s\n", b[0] == 9 && b[n - 1] == 9 ? "yes" : "no");
  return 0;
}

int export_legacy(const Api& api, const char* self, const std::string& mode) {
  CUdeviceptr p = 0;
  if (int rc = api.alloc(&p, kBytes)) return fail("exporter", "cuMemAlloc", rc);
  if (int rc = fill(api, p, kBytes, 7)) return fail("exporter", "cuLaunchKernel", rc);
  CUipcMemHandle h{};
  if (int rc = api.get_handle(&h, p)) return fail("exporter", "cuIpcGetMemHandle", rc);
  const int status = run_child(self, "import-legacy", to_hex(&h, sizeof h), mode);
  if (status != 0) return exporter_ends_like(status);
  exporter_checks(p, kBytes);
  if (int rc = api.free(p)) return fail("exporter", "cuMemFree", rc);
  std::printf("exporter: done\n");
  return 0;
}

int import_legacy(const Api& api, const std::string& hex, const std::string& mode) {
  CUipcMemHandle h{};
  if (!from_hex(hex, &h, sizeof h)) return fail("importer", "reading the handle", 0);
  CUdeviceptr p = 0;
  if (int rc = api.open_handle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)) return fail("importer", "cuIpcOpenMemHandle", rc);
  CUdeviceptr again = 0;
  if (int rc = api.open_handle(&again, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
    return fail("importer", "cuIpcOpenMemHandle (again)", rc);
  std::printf("importer: opened twice at one address: %s\n", again == p ? "yes" : "no");
  std::printf("importer: first byte %d\n", reinterpret_cast<const unsigned char*>(p)[0]);
  const unsigned long n = kBytes + (mode == "overrun" ? 1 : 0);
  if (int rc = fill(api, p, n, 9)) return fail("importer", "cuLaunchKernel", rc);
  if (int rc = api.close_handle(again)) return fail("importer", "cuIpcCloseMemHandle", rc);
  if (int rc = api.close_handle(p)) return fail("importer", "cuIpcCloseMemHandle", rc);
  std::printf("importer: closed; a third close: %d\n", static_cast<int>(api.close_handle(p)));
  return 0;
}

// Maps `h` (`size` bytes) at a new address range with access for device 0.
CUresult map_memory(const Api& api, CUmemGenericAllocationHandle h, std::size_t size, CUdeviceptr& base) {
  if (CUresult rc = api.reserve(&base, size, 0, 0, 0)) return rc;
  if (CUresult rc = api.map(base, size, 0, h, 0)) return rc;
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = 0;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return api.set_access(base, size, &access, 1);
}

// The inherited descriptor: imported, mapped, filled.
int import_fd(const Api& api, const std::string& fd_text) {
  const int fd = std::atoi(fd_text.c_str());
  struct stat st {};
  if (fstat(fd, &st) != 0) return fail("importer", "fstat of the descriptor", 0);
  const auto size = static_cast<std::size_t>(st.st_size);
  CUmemGenericAllocationHandle h = 0;
  if (int rc = api.import_fd(&h, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return fail("importer", "cuMemImportFromShareableHandle", rc);
  close(fd);
  CUdeviceptr base = 0;
  if (int rc = map_memory(api, h, size, base)) return fail("importer", "mapping the imported memory", rc);
  std::memset(reinterpret_cast<void*>(base), 9, size);
  if (int rc = api.unmap(base, size)) return fail("importer", "cuMemUnmap", rc);
  api.release(h);
  api.address_free(base, size);
  std::printf("importer: mapped %zu bytes and filled them\n", size);
  return 0;
}

// Hands the memory of `handle` to a child as an inherited file descriptor.
int share_fd(const Api& api, const char* self, CUmemGenericAllocationHandle handle) {
  int fd = -1;
  if (int rc = api.export_fd(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
    return fail("exporter", "cuMemExportToShareableHandle", rc);
  fcntl(fd, F_SETFD, 0);  // the child inherits it
  const int status = run_child(self, "import-fd", std::to_string(fd), "-");
  close(fd);
  return status;
}

int export_retained(const Api& api, const char* self) {
  CUdeviceptr p = 0;
  if (int rc = api.alloc(&p, kBytes)) return fail("exporter", "cuMemAlloc", rc);
  CUmemGenericAllocationHandle h = 0;
  if (int rc = api.retain(&h, reinterpret_cast<void*>(p))) {
    std::printf("exporter: cuMemRetainAllocationHandle: %d (not VMM memory)\n", rc);
    return 0;
  }
  const int status = share_fd(api, self, h);
  if (status != 0) return exporter_ends_like(status);
  exporter_checks(p, kBytes);
  api.release(h);
  if (int rc = api.free(p)) return fail("exporter", "cuMemFree", rc);
  CUdeviceptr q = 0;
  if (int rc = api.alloc(&q, kBytes)) return fail("exporter", "cuMemAlloc", rc);
  std::printf("exporter: a new buffer of its size holds what the child wrote: %s\n",
              reinterpret_cast<const unsigned char*>(q)[0] == 9 ? "yes" : "no");
  api.free(q);
  std::printf("exporter: done\n");
  return 0;
}

int export_own(const Api& api, const char* self, bool legacy) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h = 0;
  if (int rc = api.create(&h, kOwnBytes, &prop, 0)) return fail("exporter", "cuMemCreate", rc);
  CUdeviceptr base = 0;
  if (int rc = map_memory(api, h, kOwnBytes, base)) return fail("exporter", "mapping its memory", rc);
  if (legacy) {
    CUipcMemHandle ipc{};
    std::printf("exporter: cuIpcGetMemHandle of mapped memory: %d\n", static_cast<int>(api.get_handle(&ipc, base)));
  } else {
    const int status = share_fd(api, self, h);
    if (status != 0) return exporter_ends_like(status);
    exporter_checks(base, kOwnBytes);
  }
  if (int rc = api.unmap(base, kOwnBytes)) return fail("exporter", "cuMemUnmap", rc);
  api.release(h);
  api.address_free(base, kOwnBytes);
  std::printf("exporter: done\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "legacy";
  const char* what = nullptr;
  int rc = 0;
  if (!probe::open_driver(what, rc)) return fail("probe", what, rc);
  const Api api;
  if (int rc = api.init(0)) return fail("probe", "cuInit", rc);
  if (mode == "legacy") return export_legacy(api, argv[0], argc > 2 ? argv[2] : "in-bounds");
  if (mode == "import-legacy" && argc > 3) return import_legacy(api, argv[2], argv[3]);
  if (mode == "import-fd" && argc > 2) return import_fd(api, argv[2]);
  if (mode == "retain") return export_retained(api, argv[0]);
  if (mode == "own" || mode == "own-legacy") return export_own(api, argv[0], mode == "own-legacy");
  std::printf("unknown mode %s\n", mode.c_str());
  return 2;
}
