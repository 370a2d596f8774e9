#pragma once
// The host part of the fingerprint: OS, kernel, glibc, CPU, memory, hostname.
// Read from /etc/os-release, /proc and libc; no CUDA, no NVML.
#include <string>
#include <string_view>

#include "report/report.h"

namespace cudadiag::host {

// PRETTY_NAME from os-release text (quotes removed); "" when absent.
std::string parse_os_release_pretty(std::string_view os_release);
// First "model name" of /proc/cpuinfo (x86) or "Model"/"CPU part" fallbacks (Arm); "".
std::string parse_cpu_model(std::string_view cpuinfo);
// MemTotal of /proc/meminfo in bytes; 0 when absent.
unsigned long long parse_meminfo_total_bytes(std::string_view meminfo);

// {hostname (absent when unknown), os, kernel:{release, version, machine}, glibc, cpu:{model, logical_cores},
//  memory_bytes}; unknown values are null, never fatal.
report::json host_json();

}  // namespace cudadiag::host
