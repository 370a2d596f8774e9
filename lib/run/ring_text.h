#pragma once
// The lines cudadiag-ring-dump prints for a ring's records (apps/ring_dump), one a record:
// `kind seq=N key=value ...`, first every field the interposer wrote as it is (the ring's
// field lists, lib/fence/ring_format.h), then what the reader made of its codes. Text from
// the program (kernel names) is escaped as cudadiag escapes it (util/printable.h).
#include <string>

#include "run/allocation.h"

namespace cudadiag::run {

std::string allocation_line(const AllocationRecord& a);
std::string launch_line(const LaunchRecord& l);
std::string tma_map_line(const TmaMapRecord& t);
std::string slack_write_line(const SlackWriteRecord& w);
std::string ipc_failure_line(const IpcFailureRecord& f);
std::string process_line(const ProcessIdentity& p);
std::string device_line(const DeviceIdentity& d);

}  // namespace cudadiag::run
