#pragma once
// The hand-over socket of CUDA IPC under the fence: a Unix socket in the abstract
// namespace named after the exporting process and a random nonce (ipc_handle.h), served
// by one thread started on the first export. It accepts processes of the same user only
// (SO_PEERCRED) and answers each request with the buffer's memory as a file descriptor
// (SCM_RIGHTS). The importing side asks it here too.
#include <cstdint>

#include "apps/interposer/ipc_handle.h"

namespace cudadiag::interposer {

// Starts this process's socket and its thread, once per process (a forked child starts
// its own); its nonce. False with an errno when it cannot.
bool ensure_ipc_server(std::uint64_t& nonce, int& error) noexcept;

// Asks the socket of the process `h` names for the buffer's memory: its file descriptor
// (the caller imports and closes it) and the reply; -1 when none came, with an errno in
// `error` (0: the exporter answered with reply.status instead).
int request_ipc_memory(const FencedIpcHandle& h, IpcReply& reply, int& error) noexcept;

}  // namespace cudadiag::interposer
