#pragma once
// The one way a command starts its report: tool and invocation (new_report), the
// allowlisted environment, and, for commands that gathered them, the host facts (host,
// driver, devices). The gpu section says "not attempted" until the command knows.
#include <string>
#include <vector>

#include "host/host_facts.h"
#include "report/report.h"

namespace cudadiag::evidence {

struct SessionStart {
  std::vector<std::string> argv;       // cudadiag's own
  std::string command;                 // repro, run, env, ...
  char** envp = nullptr;               // none: no environment section
  const host::HostFacts* facts = nullptr;  // none: host, driver and devices stay empty
};

report::Report start_session_report(const SessionStart& start);

// The compute-sanitizer lookup as every report shows it (suite.sanitizer, run.sanitizer):
// {found, path (null when not found), reason ("" when found)}.
report::json sanitizer_json(bool found, const std::string& path, const std::string& reason);

}  // namespace cudadiag::evidence
