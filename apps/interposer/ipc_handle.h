#pragma once
// CUDA IPC of fenced memory: the driver's legacy cuIpcGetMemHandle does not take memory
// made with cuMemCreate, so for a fenced buffer the interposer hands out a handle of its
// own, in the 64 bytes of a CUipcMemHandle. It names the exporting process and the
// buffer; the importing process's interposer asks the exporter's hand-over socket for
// the buffer's memory as a file descriptor (SCM_RIGHTS), imports it and maps it against
// a guard of its own. What the two processes send each other is here too. Plain structs:
// both sides are the interposer (the same build, the same machine).
#include <cuda.h>

#include <cstdint>
#include <cstring>

namespace cudadiag::interposer {

inline constexpr std::uint64_t kIpcMagic = 0x0031435049464443ull;  // "CDFIPC1\0"

struct FencedIpcHandle {
  std::uint64_t magic;        // kIpcMagic: any other handle is the driver's
  std::int32_t pid;           // the exporting process: its socket is named after it
  std::int32_t device;        // the exporter's device ordinal of the buffer's memory
  std::uint64_t nonce;        // the exporter's socket's random part: a handle of an earlier process
                              // with the same pid reaches no socket
  std::uint64_t seq;          // the exporter's allocation record (AllocationSlot::seq)
  std::uint64_t address;      // the buffer in the exporter
  std::uint64_t bytes;        // its size
  std::uint64_t offset;       // address - the start of its mapped memory
  std::uint64_t mapped_size;  // the memory's size (whole granules)
};
static_assert(sizeof(FencedIpcHandle) == sizeof(CUipcMemHandle));

// The handle in a CUipcMemHandle, when it is one of ours.
inline bool fenced_handle_of(const CUipcMemHandle& h, FencedIpcHandle& out) noexcept {
  std::memcpy(&out, &h, sizeof out);
  return out.magic == kIpcMagic && out.pid > 0;
}

inline CUipcMemHandle as_driver_handle(const FencedIpcHandle& h) noexcept {
  CUipcMemHandle out;
  std::memcpy(&out, &h, sizeof out);
  return out;
}

// The importer's request over the exporter's socket.
struct IpcRequest {
  std::uint64_t magic;    // kIpcMagic
  std::uint64_t nonce;    // the handle's
  std::uint64_t address;  // the handle's
  std::uint64_t seq;      // the handle's
};

// What the exporter answers; the memory's file descriptor comes with it (SCM_RIGHTS) when
// status is 0.
struct IpcReply {
  std::uint64_t magic = kIpcMagic;
  std::int32_t status = 0;    // 0, or the CUresult of cuMemExportToShareableHandle, or kIpcUnknownBuffer
  std::int32_t side = 0;      // ring::Side of the buffer's guard in the exporter
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;
  std::uint64_t mapped_size = 0;
  std::int32_t device = -1;
  std::int32_t reserved = 0;
};

// The exporter has no exported buffer at that address with that record (freed since).
inline constexpr std::int32_t kIpcUnknownBuffer = -1;

// The abstract socket name of process `pid`'s hand-over socket (no file: nothing to clean
// up, nothing another user can replace), NUL-led; its length.
inline std::size_t ipc_socket_name(std::int32_t pid, std::uint64_t nonce, char (&out)[64]) noexcept {
  static const char kHex[] = "0123456789abcdef";
  std::memset(out, 0, sizeof out);
  char* p = out + 1;  // out[0] stays NUL: the abstract namespace
  const char prefix[] = "cudadiag-ipc-";
  std::memcpy(p, prefix, sizeof prefix - 1);
  p += sizeof prefix - 1;
  char digits[12];
  int n = 0;
  std::uint32_t v = static_cast<std::uint32_t>(pid);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *p++ = digits[--n];
  *p++ = '-';
  for (int shift = 60; shift >= 0; shift -= 4) *p++ = kHex[(nonce >> shift) & 0xf];
  return static_cast<std::size_t>(p - out);
}

}  // namespace cudadiag::interposer
