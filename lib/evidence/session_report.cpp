#include "evidence/session_report.h"

namespace cudadiag::evidence {

report::Report start_session_report(const SessionStart& start) {
  auto r = report::new_report(start.argv, start.command);
  if (start.envp) r.environment = report::capture_environment(start.envp);
  if (const auto* f = start.facts) {
    r.host = f->host;
    r.driver = f->driver;
    r.devices = f->devices;
  }
  return r;
}

report::json sanitizer_json(bool found, const std::string& path, const std::string& reason) {
  return report::json{{"found", found},
                      {"path", found ? report::json(path) : report::json(nullptr)},
                      {"reason", found ? std::string() : reason}};
}

}  // namespace cudadiag::evidence
