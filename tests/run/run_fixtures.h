#pragma once
// Observations of runs, built from plain data, for the judge, verdict and report tests.
#include <cstdio>
#include <string>
#include <vector>

#include "host/xid.h"
#include "run/judge.h"

namespace cudadiag::run::testing {

inline runner::Capture capture(const std::string& text) {
  runner::Capture c;
  c.head = text;
  c.total_bytes = text.size();
  return c;
}

inline RunObservation exited(Rung rung, int code, const std::string& err = "", const std::string& out = "") {
  RunObservation o;
  o.rung = rung;
  o.command = {"python3", "train.py"};
  o.argv = o.command;
  o.child.ending = code == 0 ? runner::Ending::no_result : runner::Ending::exit_code;
  o.child.exit_code = code;
  o.child.pid = 4242;
  o.child.err = capture(err);
  o.child.out = capture(out);
  o.child.wall_ms = 1234.5;
  return o;
}

inline RunObservation killed(Rung rung, int sig, const std::string& name, const std::string& err = "") {
  RunObservation o = exited(rung, 0, err);
  o.child.ending = runner::Ending::signal;
  o.child.exit_code.reset();
  o.child.signal = sig;
  o.child.signal_name = name;
  return o;
}

inline const char* kIllegalAddress = "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n";

// A fenced 4000-byte buffer ending flush against its guard at 0x7f0000200000, and the
// kernels that used it.
inline InterposerLog fenced_log(std::uint64_t launches = 3) {
  InterposerLog log;
  auto& s = log.summary;
  s.loaded = true;
  s.cuda_seen = true;
  s.allocations = 2;
  s.fenced = 2;
  s.launches = launches;
  const auto fenced = [](std::uint64_t seq, std::uint64_t mapped_begin) {
    AllocationRecord a;
    a.seq = seq;
    a.bytes = 4000;
    a.mapped_begin = mapped_begin;
    a.mapped_end = mapped_begin + (2u << 20);
    a.address = a.mapped_end - 4000;
    a.guard_begin = a.mapped_end;
    a.guard_end = a.mapped_end + (2u << 20);
    a.side = FenceSide::back;
    a.api = "cuMemAlloc_v2";
    return a;
  };
  log.allocations.push_back(fenced(7, 0x7f0000000000));
  log.allocations.push_back(fenced(8, 0x7f0000600000));
  const auto& a = log.allocations[0];
  const auto& b = log.allocations[1];
  LaunchRecord l;
  l.seq = 30;
  l.kernel = "index_select_kernel";
  l.api = "cuLaunchKernel";
  l.pointer_args = {a.address, b.address};
  log.launches.push_back(l);
  l.seq = 31;
  l.kernel = "softmax_kernel";
  l.pointer_args = {b.address};
  log.launches.push_back(l);
  return log;
}

// fenced_log() as a pool's: `launches` launches, and kernels that take pointers inside
// the fenced buffers (pieces of slabs) more often than at their starts.
inline InterposerLog pool_log(std::uint64_t launches = 100000) {
  InterposerLog log = fenced_log(launches);
  for (std::uint64_t k = 1; k <= 4; ++k) {
    LaunchRecord piece;
    piece.seq = 100 + k;
    piece.kernel = "piece";
    piece.pointer_args = {log.allocations[k % 2].address + 256 * k};
    log.launches.push_back(piece);
  }
  return log;
}

// memcheck's XML record of an invalid access.
inline sanitizer::Finding memcheck_access(const std::string& message, const std::string& kernel,
                                          const std::string& address = "0x7f5190800fa0") {
  sanitizer::Finding f;
  f.address = address;
  f.record_kind = "Precise";
  f.level = "Error";
  f.message = message;
  f.kernel = kernel;
  return f;
}

inline host::XidEvent xid31(std::uint64_t page, const char* access = "ACCESS_TYPE_VIRT_WRITE") {
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%llx_%08llx", static_cast<unsigned long long>(page >> 32),
                static_cast<unsigned long long>(page & 0xffffffffULL));
  const std::string line = std::string("NVRM: Xid (PCI:0000:00:06): 31, pid=4242, name=python3, channel 0x0000000a, "
                                       "intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_4 faulted @ ") +
                           buf + ". Fault is of type FAULT_PDE " + access;
  return *host::parse_xid_line(line);
}

}  // namespace cudadiag::run::testing
