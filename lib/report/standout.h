#pragma once
// The GPU that stands out: on a run over several GPUs, a device whose runs of a case
// missed their expectation where the same case under the same profile met it on other
// devices (a case that fails only on GPU 3). The same failure on every device is the
// case's or the host's; a failure on one of several is that GPU's, and the verdict names
// it: index, UUID and PCI bus id when the report knows them. repro's verdict reads a
// report's results; compare reads the digests it keeps of each report.
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::report {

struct StandoutGpu {
  int index = -1;                  // the driver's ordinal (Result::device_index)
  std::string uuid;
  std::string pci_bus_id;          // from the report's devices, "" when unknown
  std::vector<std::string> runs;   // "case under profile" that failed here and passed on at least as many GPUs
};

// One judged run on one GPU: what find_standouts reads of a result.
struct GpuRun {
  std::string run;     // the case and profile ("fa.seed under default"): runs with the same text are compared
  std::string device;  // the GPU (its UUID, or any name unique within the report)
  int index = -1;      // its ordinal, -1 when unknown
  bool met = true;     // the run met its expectation
};

// Devices whose failures differ from the others': for each run made on two or more GPUs,
// the devices that missed it while at least as many met it. Ordered by index.
std::vector<StandoutGpu> find_standouts(const std::vector<GpuRun>& runs);
// The same from a report's results (GPU results with an expectation), with the bus ids of
// `devices`.
std::vector<StandoutGpu> find_standouts(const std::vector<Result>& results, const std::vector<DeviceInfo>& devices = {});

// "GPU 3 (GPU-..., bus 0000:41:00.0) stands out: 2 run(s) failed there and passed on the
// other GPUs: a under default, b under fence"
std::string standout_line(const StandoutGpu& g);

}  // namespace cudadiag::report
