// The bash completion and the man page the build makes from the binary (`cudadiag docs
// bash|man`): completion is driven in a real bash, word by word, as a user's TAB would.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/support/temp_dir.h"
#include "views.h"

using namespace cudadiag::test;
namespace fs = std::filesystem;

namespace {

std::string shell_quote(const std::string& w) {
  std::string out = "'";
  for (const char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What the completion offers for the command line `words` (the last one is being
// completed), one word per line as bash's COMPREPLY holds them.
std::set<std::string> bash_completions(const fs::path& script, const std::vector<std::string>& words) {
  std::string array;
  for (const auto& w : words) array += " " + shell_quote(w);
  const std::string cmd = "bash -c " + shell_quote("source " + script.string() + "; COMP_WORDS=(" + array +
                                                  "); COMP_CWORD=" + std::to_string(words.size() - 1) +
                                                  "; _cudadiag; printf '%s\\n' \"${COMPREPLY[@]}\"");
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (const std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  REQUIRE(::pclose(p) == 0);
  std::set<std::string> words_out;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) words_out.insert(line);
  return words_out;
}

}  // namespace

TEST_CASE("bash completion offers rungs, suites, profiles, case ids and families, not file names", "[text][docs]") {
  TempDir dir;
  const Run bash = run_binary({"docs", "bash"}, dir.path);
  REQUIRE(bash.code == 0);
  const fs::path script = dir.path / "cudadiag.bash";
  std::ofstream(script) << bash.out;

  CHECK(bash_completions(script, {"cudadiag", "run", "--rungs", ""}) ==
        std::set<std::string>{"native", "blocking", "fence", "fence-front", "sanitizer"});
  // A comma list completes its last item, keeping the ones before.
  CHECK(bash_completions(script, {"cudadiag", "run", "--rungs", "native,fe"}) ==
        std::set<std::string>{"native,fence", "native,fence-front"});
  CHECK(bash_completions(script, {"cudadiag", "repro", "--profiles", "default,bl"}) ==
        std::set<std::string>{"default,blocking"});
  const auto suites = bash_completions(script, {"cudadiag", "repro", "--suite", ""});
  CHECK(suites.count("default") == 1);
  CHECK(suites.count("health") == 1);
  CHECK(bash_completions(script, {"cudadiag", "list", "--kernel", ""}) ==
        std::set<std::string>{"fault", "index_select", "attention", "tma"});

  // Every case id the catalog lists, from the same table `list` prints.
  const Run list = run_binary({"list", "--format", "json"}, dir.path);
  REQUIRE(list.code == 0);
  const auto catalog = nlohmann::json::parse(list.out);
  std::set<std::string> ids, fault_ids;
  for (const auto& c : catalog.at("cases")) {
    ids.insert(c.at("id").get<std::string>());
    if (c.at("id").get<std::string>().rfind("fault.", 0) == 0) fault_ids.insert(c.at("id").get<std::string>());
  }
  REQUIRE(ids.size() >= 20);
  CHECK(bash_completions(script, {"cudadiag", "repro", "--case", ""}) == ids);
  CHECK(bash_completions(script, {"cudadiag", "fault", ""}) == fault_ids);
  CHECK(bash_completions(script, {"cudadiag", "fault", "fault.oob-w"}) == std::set<std::string>{"fault.oob-write"});

  // Options still complete as options; a file argument still completes file names.
  CHECK(bash_completions(script, {"cudadiag", "run", "--rung"}) == std::set<std::string>{"--rungs"});
  std::ofstream(dir.path / "h100.json") << "{}";
  CHECK(bash_completions(script, {"cudadiag", "show", (dir.path / "h100.j").string()}) ==
        std::set<std::string>{(dir.path / "h100.json").string()});
}

TEST_CASE("the man page names the environment variables cudadiag reads", "[text][docs]") {
  TempDir dir;
  const Run man = run_binary({"docs", "man"}, dir.path);
  REQUIRE(man.code == 0);
  const auto env = man.out.find(".SH ENVIRONMENT\n");
  REQUIRE(env != std::string::npos);
  const auto end = man.out.find(".SH ", env + 1);
  const std::string section = man.out.substr(env, end == std::string::npos ? std::string::npos : end - env);
  for (const char* name : {"NO_COLOR", "COLUMNS", "CUDADIAG_REDACT_KEY_FILE", "CUDADIAG_REDACT_KEY",
                           "CUDADIAG_NVDISASM", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "TMPDIR"}) {
    INFO(name);
    CHECK(section.find(std::string(".B ") + name + "\n") != std::string::npos);
  }
  CHECK(section.find("not empty") != std::string::npos);  // NO_COLOR= (empty) leaves colour on
}
