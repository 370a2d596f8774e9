#pragma once
// What the parent process knows of itself when a command resolves its request
// (run/run_request.h, suite/repro_request.h): its executable, the environment its
// children inherit, the host facts (gathered once, when the request asks), and the stop
// flag. Every lookup is injectable, so that a request's resolution is tested without the
// real environment or host.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "host/host_facts.h"

namespace cudadiag::evidence {

struct Parent {
  std::string self_exe;                            // absolute path of cudadiag
  std::vector<std::string> env_names;              // names in the environment children inherit
  std::function<const char*(const char*)> getenv;  // that environment; empty: none is set
  std::function<host::HostFacts()> host_facts;     // empty: no facts (no GPU listed)
  unsigned cpus = 1;                               // hardware threads
  const std::atomic<bool>* stop = nullptr;         // the stop request (util/interrupt.h)
};

}  // namespace cudadiag::evidence
