#include "compare/report_files.h"

#include <glob.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "compare/digest_reader.h"
#include "util/errors.h"

namespace cudadiag::compare {
namespace {

namespace fs = std::filesystem;

bool is_pattern(const std::string& arg) { return arg.find_first_of("*?[") != std::string::npos; }

std::vector<std::string> directory_reports(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".json" && it->is_regular_file(type_ec)) files.push_back(it->path().string());
  }
  if (ec) throw UsageError(dir + ": cannot read the directory: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> pattern_matches(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> files;
  if (rc == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (rc == GLOB_NOSPACE || rc == GLOB_ABORTED) throw UsageError(pattern + ": the pattern could not be expanded");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::vector<ReportPath> expand_report_paths(const std::vector<std::string>& args) {
  std::vector<ReportPath> out;
  for (const auto& arg : args) {
    std::error_code ec;
    if (arg == "-" || fs::is_regular_file(arg, ec)) {
      out.push_back({arg, false});
    } else if (fs::is_directory(arg, ec)) {
      const auto files = directory_reports(arg);
      if (files.empty()) throw UsageError(arg + ": the directory holds no .json reports");
      for (const auto& f : files) out.push_back({f, true});
    } else if (is_pattern(arg) && !fs::exists(arg, ec)) {
      const auto files = pattern_matches(arg);
      if (files.empty()) throw UsageError(arg + ": the pattern matches no file");
      for (const auto& f : files) out.push_back({f, true});
    } else {
      out.push_back({arg, false});  // reading it names the problem (missing, unreadable)
    }
  }
  return out;
}

ReportSet load_report_set(const std::vector<ReportPath>& paths, unsigned jobs, bool strict) {
  ReportSet set;
  std::vector<std::optional<ReportDigest>> digests(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    std::string buffer;  // one report's text at a time per job
    // Indices are taken in order: when one fails, every earlier one is already taken
    // and finishes, so the first error in order is among those recorded.
    for (std::size_t i = next++; i < paths.size() && !failed; i = next++) {
      try {
        digests[i] = read_digest_file(paths[i].path, *set.tables, buffer);
      } catch (...) {
        errors[i] = std::current_exception();
        if (strict || !paths[i].found) failed = true;
      }
    }
  };
  // One per CPU by default, at most eight: beyond that the shared string tables contend.
  if (jobs == 0) jobs = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(1, paths.size())));
  std::vector<std::thread> workers;
  for (unsigned j = 1; j < jobs; ++j) workers.emplace_back(work);
  work();
  for (auto& w : workers) w.join();
  for (std::size_t i = 0; i < paths.size(); ++i)
    if (errors[i] && (strict || !paths[i].found)) std::rethrow_exception(errors[i]);

  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (errors[i]) {
      std::string why = "unreadable";
      try {
        std::rethrow_exception(errors[i]);
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (why.rfind(paths[i].path + ": ", 0) == 0) why.erase(0, paths[i].path.size() + 2);
      set.notes.push_back(paths[i].path + ": passed over, not a readable report (" + why + ")");
      continue;
    }
    auto& d = *digests[i];
    if (d.command_kind == report::Command::compare) {
      if (!paths[i].found)
        throw InputError(paths[i].path, "/invocation/command",
                         "a compare report, not a host's report: compare the reports it was made from");
      set.notes.push_back(paths[i].path + ": a compare report, passed over");
      continue;
    }
    set.reports.push_back(std::move(d));
    digests[i].reset();
  }
  return set;
}

}  // namespace cudadiag::compare
