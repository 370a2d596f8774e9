#include "run/breaking_setting.h"

#include "coredump/arming.h"

#include <algorithm>

#include <fmt/format.h>

namespace cudadiag::run {
namespace {

bool interposer_variable(const std::string& name) { return name == "LD_PRELOAD" || name.rfind("CUDADIAG_", 0) == 0; }

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string last_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t nl = text.rfind('\n', end - 1);
    const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
    std::string line = text.substr(begin, end - begin);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) return line.size() > 200 ? line.substr(0, 200) : line;
    if (nl == std::string::npos) break;
    end = nl;
  }
  return "";
}

}  // namespace

std::vector<RungSetting> settings_between(const PlannedRun& below, const PlannedRun& rung) {
  std::vector<RungSetting> out;
  RungSetting interposer;
  interposer.text = "the fence interposer";
  interposer.interposer = true;
  for (const auto& [name, value] : rung.env_set) {
    const auto b = below.env_set.find(name);
    if (b != below.env_set.end() && b->second == value) continue;
    // The core-dump arming differs per rung only in file names: cudadiag's plumbing, not a
    // setting of the rung (every rung but memcheck's has it).
    if (coredump::is_coredump_variable(name)) continue;
    if (interposer_variable(name)) {
      interposer.set_names.push_back(name);
      continue;
    }
    out.push_back(RungSetting{{name}, {}, name + "=" + value});
  }
  for (const auto& name : rung.env_unset) {
    if (contains(below.env_unset, name) || rung.env_set.count(name) || coredump::is_coredump_variable(name)) continue;
    if (interposer_variable(name)) {
      interposer.unset_names.push_back(name);
      continue;
    }
    out.push_back(RungSetting{{}, {name}, name + " unset"});
  }
  if (!interposer.set_names.empty()) out.push_back(std::move(interposer));
  return out;
}

PlannedRun with_setting(const PlannedRun& below, const PlannedRun& rung, const RungSetting& s) {
  PlannedRun run = below;
  for (const auto& name : s.set_names) {
    run.env_set[name] = rung.env_set.at(name);
    std::erase(run.env_unset, name);
  }
  for (const auto& name : s.unset_names) {
    run.env_set.erase(name);
    if (!contains(run.env_unset, name)) run.env_unset.push_back(name);
  }
  if (contains(s.set_names, "CUDADIAG_RING")) run.ring_path = rung.ring_path;
  return run;
}

bool drop_setting(PlannedRun& run, const PlannedRun& below, const RungSetting& s) {
  bool changed = false;
  for (const auto& name : s.set_names) {
    const auto it = run.env_set.find(name);
    if (it == run.env_set.end()) continue;
    if (const auto b = below.env_set.find(name); b != below.env_set.end()) {
      changed = changed || it->second != b->second;
      it->second = b->second;
    } else {
      run.env_set.erase(it);
      changed = true;
    }
  }
  for (const auto& name : s.unset_names) {
    if (!contains(run.env_unset, name) || contains(below.env_unset, name)) continue;
    std::erase(run.env_unset, name);
    changed = true;
  }
  return changed;
}

std::optional<PlannedRun> rerun_without(const PlannedRun& broken, const PlannedRun& below, const RungSetting& s) {
  if (s.interposer) return std::nullopt;
  PlannedRun run = broken;
  if (!drop_setting(run, below, s)) return std::nullopt;
  // Files of its own: the broken run's stay as they were read.
  const auto renamed = [](std::string& path, std::string_view suffix) {
    if (path.empty()) return;
    const auto dot = path.rfind('.');
    const auto slash = path.rfind('/');
    const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
    path.insert(has_extension ? dot : path.size(), suffix);
  };
  const std::string old_ring = run.ring_path;
  renamed(run.ring_path, "-again");
  if (const auto it = run.env_set.find("CUDADIAG_RING"); it != run.env_set.end() && it->second == old_ring)
    it->second = run.ring_path;
  renamed(run.sanitizer_xml, "-again");
  if (!run.coredump_prefix.empty()) run.coredump_prefix += "-again";
  return run;
}

std::string kept_on_text(const RungSetting& s) {
  if (s.interposer) return "";
  const std::string name = !s.set_names.empty() ? s.set_names.front() : s.unset_names.empty() ? "" : s.unset_names.front();
  if (name == "CUDA_LAUNCH_BLOCKING")
    return "launches stayed asynchronous for this program: a fault may surface at a later call than the launch of the "
           "kernel that made it";
  if (!s.set_names.empty())
    for (const auto& c : caching_off_settings())
      if (c.variable == name)
        return fmt::format("{}'s caching allocator stayed on for this program: the fence guards the allocator's "
                           "segments, not each tensor (an overrun that stays inside a segment goes unseen), and "
                           "memcheck sees the segments too",
                           c.framework);
  if (!s.unset_names.empty())
    return fmt::format("the program's {} stayed as it was: an allocator it configures may keep allocations away "
                       "from the fence",
                       name);
  return "";
}

bool fails_without_cuda_error(const RunJudgement& j) {
  return (j.outcome == RunOutcome::exit_code || (j.outcome == RunOutcome::timeout && !j.hang)) && !j.error;
}

std::chrono::milliseconds bisect_deadline(double passing_wall_ms, std::chrono::milliseconds session_timeout) {
  const auto bound = std::chrono::milliseconds(static_cast<long long>(3.0 * std::max(0.0, passing_wall_ms)) + 10000);
  return std::min(bound, session_timeout);
}

// The last line naming an error or exception ("RuntimeError: invalid device pointer"),
// before whatever the program printed after it.
std::string last_error_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t nl = text.rfind('\n', end - 1);
    const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
    const std::string line = text.substr(begin, end - begin);
    const auto colon = line.find(": ");
    if (colon != std::string::npos && colon > 0 && line[0] != ' ') {
      const std::string head = line.substr(0, colon);
      if (head.find(' ') == std::string::npos &&
          (head.find("Error") != std::string::npos || head.find("Exception") != std::string::npos))
        return last_line(line);
    }
    if (nl == std::string::npos) break;
    end = nl;
  }
  return "";
}

std::string last_output_line(const RunObservation& obs) {
  const std::string err_text = obs.child.err.text();
  if (std::string e = last_error_line(err_text); !e.empty()) return e;
  const std::string err = last_line(err_text);
  return err.empty() ? last_line(obs.child.out.text()) : err;
}

RungDeadline rung_deadline(Rung rung, std::optional<double> native_wall_ms, std::chrono::milliseconds rung_timeout,
                           int sanitizer_factor, std::chrono::milliseconds floor) {
  RungDeadline d;
  d.deadline = rung_timeout;
  if (rung == Rung::native || !native_wall_ms) return d;
  const double factor = rung == Rung::sanitizer ? kHungFactor * std::max(1, sanitizer_factor) : kHungFactor;
  const double floor_ms =
      static_cast<double>(floor.count()) * (rung == Rung::sanitizer ? std::max(1, sanitizer_factor) : 1);
  const double learned_ms = std::max(floor_ms, factor * std::max(0.0, *native_wall_ms));
  if (learned_ms >= static_cast<double>(rung_timeout.count())) return d;
  d.deadline = std::chrono::milliseconds(static_cast<long long>(learned_ms));
  d.learned = true;
  d.text = fmt::format("{:g} x the native run's {:.1f} s, at least {:g} s", factor, *native_wall_ms / 1000.0,
                       floor_ms / 1000.0);
  return d;
}

std::optional<double> native_wall_ms(const std::vector<RunJudgement>& runs, const std::vector<double>& wall_ms) {
  std::optional<double> longest;
  for (std::size_t i = 0; i < runs.size() && i < wall_ms.size(); ++i) {
    if (runs[i].rung != Rung::native) continue;
    if (runs[i].failed() || runs[i].outcome == RunOutcome::does_not_start) return std::nullopt;
    longest = std::max(longest.value_or(0.0), wall_ms[i]);
  }
  return longest;
}

std::string breaking_text(const RungSetting& s, const std::string& error_line) {
  return s.text + " breaks this program" + (error_line.empty() ? std::string() : ": `" + error_line + "`");
}

}  // namespace cudadiag::run
