// Hostile input through the real binary, generated at test time: seeded random
// mutations of the fixtures (truncation, byte flips, deep nesting, huge numbers, wrong
// types, control characters, invalid UTF-8) fed to `compare`, `schema --validate`,
// `repro --suite FILE` and `tma --from-log`. Every run must end with exit 0, 1, 2 or 3
// and never 4 or a signal; exit 2 must say what is wrong; text and Markdown output
// must carry no raw control character; JSON output must be valid JSON. Each command
// gets a time budget of about two seconds; the seed is printed for a failure to be
// replayed (CUDADIAG_HOSTILE_SEED).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_binary.h"
#include "tests/support/temp_dir.h"

extern char** environ;

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

using cudadiag::test::Run;
using cudadiag::test::run_binary;
using cudadiag::test::slurp;
using cudadiag::test::spit;
using cudadiag::test::TempDir;

namespace {

constexpr double kBudgetSeconds = 2.0;

// --- mutations -------------------------------------------------------------------------

using Rng = std::mt19937_64;

std::size_t pick(Rng& rng, std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }

std::string truncate(const std::string& s, Rng& rng) { return s.substr(0, pick(rng, s.size())); }

std::string flip_bytes(std::string s, Rng& rng) {
  for (std::size_t i = 0, n = 1 + pick(rng, 8); i < n && !s.empty(); ++i) s[pick(rng, s.size())] = static_cast<char>(rng());
  return s;
}

std::string deep_nesting(const std::string& s, Rng& rng) {
  const std::size_t depth = rng() % 2 ? 100000 : 200 + pick(rng, 2000);
  const std::string nest = std::string(depth, '[') + "1" + std::string(depth, ']');
  const auto brace = s.find('{');
  if (brace == std::string::npos || rng() % 3 == 0) return "{\"a\":" + nest + ",\"b\":1}";
  return s.substr(0, brace + 1) + "\"deep\":" + nest + "," + s.substr(brace + 1);
}

// Offsets of the numbers in a text (digit runs not inside a JSON string when `json`).
std::vector<std::pair<std::size_t, std::size_t>> numbers_in(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] >= '0' && s[i] <= '9') {
      std::size_t j = i;
      while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || s[j] == '.' || s[j] == 'e' || s[j] == '-')) ++j;
      out.emplace_back(i, j - i);
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

std::string huge_number(std::string s, Rng& rng) {
  static const char* huge[] = {"1e999", "-1e999", "1e-999", "18446744073709551616", "4294967305", "4294967296",
                               "123456789012345678901234567890123456789", "99999999999999999999", "2147483648"};
  const auto nums = numbers_in(s);
  if (nums.empty()) return s + "1e999";
  const auto [at, len] = nums[pick(rng, nums.size())];
  return s.replace(at, len, huge[pick(rng, std::size(huge))]);
}

std::string invalid_utf8(std::string s, Rng& rng) {
  static const char* bad[] = {"\xff", "\xc3\x28", "\xe2\x82", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf", "\x80"};
  const auto quote = s.find('"', pick(rng, s.size()));
  return s.insert(quote == std::string::npos ? 0 : quote + 1, bad[pick(rng, std::size(bad))]);
}

// Raw control bytes, for non-JSON inputs (a JSON string may not hold them raw).
std::string raw_control(std::string s, Rng& rng) {
  static const std::string ctl[] = {"\x1b[2J", "\x1b]0;owned\x07", std::string("\0x", 2), "\x9b" "31m", "\x7f"};
  return s.insert(pick(rng, s.size() + 1), ctl[pick(rng, std::size(ctl))]);
}

void collect(json& j, std::vector<json*>& all) {
  all.push_back(&j);
  if (j.is_structured())
    for (auto& v : j) collect(v, all);
}

// Re-parses a JSON fixture and changes one value: a value of another type, or a string
// with terminal control characters (valid JSON: the escapes \u001b etc.).
std::string json_value_mutation(const std::string& s, Rng& rng, bool control) {
  json doc = json::parse(s);
  std::vector<json*> all;
  collect(doc, all);
  if (control) {
    std::vector<json*> strings;
    for (auto* v : all)
      if (v->is_string()) strings.push_back(v);
    if (strings.empty()) return s;
    auto* v = strings[pick(rng, strings.size())];
    *v = v->get<std::string>() + "\x1b[2J\x1b]0;title\x07\u009b" + std::string(1, '\0') + "\x7f";
    return doc.dump(1);
  }
  auto* v = all[1 + pick(rng, all.size() - 1)];
  static const json others[] = {json("x"), json(3), json(-1.5), json(true), json(nullptr), json::array({1, "a"}),
                                json::object({{"k", 1}}), json(1e300), json(-9223372036854775807LL - 1)};
  json replacement = others[pick(rng, std::size(others))];
  if (replacement.type() == v->type()) replacement = json::array();
  *v = replacement;
  return doc.dump(1);
}

std::string mutate(const std::string& seed, Rng& rng, bool is_json, int kind) {
  switch (kind) {
    case 0: return truncate(seed, rng);
    case 1: return flip_bytes(seed, rng);
    case 2: return is_json ? deep_nesting(seed, rng) : seed + std::string(200000, '(');
    case 3: return huge_number(seed, rng);
    case 4: return is_json ? json_value_mutation(seed, rng, false) : raw_control(seed, rng);
    case 5: return is_json ? json_value_mutation(seed, rng, true) : raw_control(seed, rng);
    default: return invalid_utf8(seed, rng);
  }
}
constexpr int kKinds = 7;
const char* kKindNames[kKinds] = {"truncation", "byte flips", "deep nesting", "huge number", "wrong type",
                                  "control characters", "invalid UTF-8"};

// --- checks ----------------------------------------------------------------------------

std::uint64_t base_seed() {
  if (const char* s = std::getenv("CUDADIAG_HOSTILE_SEED")) return std::strtoull(s, nullptr, 10);
  return static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
}

struct Campaign {
  std::vector<std::string> seeds;  // fixture texts
  bool is_json = true;
  // The command for an input file and a format.
  std::function<std::vector<std::string>(const fs::path& input, const std::string& format)> command;
  // Words an exit-2 message may name instead of the file (a flag the command sets).
  std::vector<std::string> other_names;
};

void check_run(const Run& r, const fs::path& input, const std::string& format, const std::vector<std::string>& other) {
  INFO("exit " << r.code << (r.exited ? "" : " (signal)") << "\nstderr: " << r.err.substr(0, 2000));
  REQUIRE(r.exited);
  CHECK((r.code >= 0 && r.code <= 3));
  if (r.code == 2) {
    bool named = r.err.find(input.filename().string()) != std::string::npos;
    for (const auto& w : other) named = named || r.err.find(w) != std::string::npos;
    CHECK(named);
  }
  if (r.code <= 1 || r.code == 3) {
    if (format == "json") {
      CHECK_NOTHROW(json::parse(r.out));  // also proves the output is valid UTF-8
    } else {
      for (const char c : r.out) {
        const auto u = static_cast<unsigned char>(c);
        const bool control = (u < 0x20 && c != '\n') || u == 0x7f;
        if (control) {
          FAIL_CHECK("raw control character 0x" << std::hex << static_cast<int>(u) << " in " << format << " output");
          break;
        }
      }
    }
  }
}

void run_campaign(const Campaign& c) {
  TempDir dir;
  const auto seed = base_seed();
  Rng rng(seed);
  const char* formats[] = {"text", "md", "json"};
  const auto start = std::chrono::steady_clock::now();
  int runs = 0;
  // Every kind of mutation on every fixture once, then random ones until the budget is spent.
  for (int round = 0;; ++round) {
    const bool first_pass = round < static_cast<int>(kKinds * c.seeds.size());
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!first_pass && elapsed > kBudgetSeconds) break;
    const int kind = first_pass ? round % kKinds : static_cast<int>(pick(rng, kKinds));
    const auto& text = c.seeds[first_pass ? (round / kKinds) % c.seeds.size() : pick(rng, c.seeds.size())];
    const std::string mutated = mutate(text, rng, c.is_json, kind);
    const fs::path input = dir.path / ("mutated-" + std::to_string(round) + (c.is_json ? ".json" : ".log"));
    spit(input, mutated);
    const std::string format = formats[pick(rng, 3)];
    INFO("seed " << seed << ", round " << round << ", " << kKindNames[kind] << ", --format " << format
                 << " (a failing input is kept as hostile-failure-<seed>.bin)");
    const auto r = run_binary(c.command(input, format), dir.path);
    check_run(r, input, format, c.other_names);
    ++runs;
    if (r.code == 4 || !r.exited) {
      spit(fs::current_path() / ("hostile-failure-" + std::to_string(seed) + ".bin"), mutated);
      break;
    }
  }
  std::printf("%d mutated inputs (seed %llu)\n", runs, static_cast<unsigned long long>(seed));
  CHECK(runs >= kKinds);
}

std::string fixture(const std::string& rel) { return slurp(fs::path(CUDADIAG_SOURCE_DIR) / rel); }

}  // namespace

TEST_CASE("hostile: mutated reports through compare", "[hostile]") {
  Campaign c;
  c.seeds = {fixture("tests/fixtures/compare/identical_a.json"), fixture("tests/fixtures/compare/device_h100.json")};
  const std::string other = std::string(CUDADIAG_SOURCE_DIR) + "/tests/fixtures/compare/identical_b.json";
  c.command = [other](const fs::path& in, const std::string& f) {
    return std::vector<std::string>{"compare", in.string(), other, "--format", f, "--no-color"};
  };
  run_campaign(c);
}

TEST_CASE("hostile: mutated reports through schema --validate", "[hostile]") {
  Campaign c;
  c.seeds = {fixture("tests/report/data/good_report.json"), fixture("tests/fixtures/compare/device_h200.json")};
  c.command = [](const fs::path& in, const std::string& f) {
    return std::vector<std::string>{"schema", "--validate", in.string(), "--format", f};
  };
  run_campaign(c);
}

TEST_CASE("hostile: mutated suites through repro --suite FILE", "[hostile]") {
  Campaign c;
  c.seeds = {fixture("tests/data/suites/good_small.json"), fixture("repro/flashinfer-tma-seqlen1.json")};
  // --devices 4096: never a GPU. Without one the suite's host part runs and is reported
  // (exit 3); with GPUs the device index is refused after the suite was read (exit 2).
  c.command = [](const fs::path& in, const std::string& f) {
    return std::vector<std::string>{"repro", "--suite", in.string(), "--devices", "4096", "--format", f, "-q"};
  };
  c.other_names = {"--devices"};
  run_campaign(c);
}

TEST_CASE("hostile: mutated TMA printouts through tma --from-log", "[hostile]") {
  Campaign c;
  c.is_json = false;
  c.seeds = {fixture("tests/data/tma/flashinfer_seqlen1.log"), fixture("tests/data/tma/seqlen2_ok.log")};
  c.command = [](const fs::path& in, const std::string& f) {
    return std::vector<std::string>{"tma", "--from-log", in.string(), "--host-only", "--format", f};
  };
  run_campaign(c);
}

TEST_CASE("hostile: a 100000-level document, from a file or stdin, is refused naming it", "[hostile]") {
  TempDir dir;
  const auto deep = dir.path / "deep.json";
  spit(deep, "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + ",\"b\":1}");
  const std::string good = std::string(CUDADIAG_SOURCE_DIR) + "/tests/fixtures/compare/identical_b.json";
  for (const auto& args : {std::vector<std::string>{"compare", "-", good}, std::vector<std::string>{"schema", "--validate", "-"}}) {
    const auto r = run_binary(args, dir.path, deep.string());
    INFO(args[0] << ": " << r.err);
    REQUIRE(r.exited);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("<stdin>") && Catch::Contains("nested deeper"));
  }
  auto r = run_binary({"repro", "--suite", deep.string(), "--devices", "4096"}, dir.path);
  REQUIRE(r.exited);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("deep.json") && Catch::Contains("nested deeper"));
  r = run_binary({"repro", "--suite", "-", "--devices", "4096"}, dir.path, deep.string());
  REQUIRE(r.exited);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("<stdin>") && Catch::Contains("nested deeper"));
}

TEST_CASE("hostile: -o writes through devices, keeps links and modes, and reports a full disk, keeping the report", "[hostile]") {
  TempDir dir;
  auto r = run_binary({"list", "--format", "json", "-o", "/dev/full"}, dir.path);
  REQUIRE(r.exited);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/dev/full") && Catch::Contains("No space left"));
  // The report that could not be written is kept, and named (the test removes it).
  const std::string kept_marker = "the report was kept in ";
  const auto kept_at = r.err.find(kept_marker);
  REQUIRE(kept_at != std::string::npos);
  const fs::path kept = r.err.substr(kept_at + kept_marker.size(), r.err.find('\n', kept_at) - kept_at - kept_marker.size());
  CHECK_NOTHROW(json::parse(slurp(kept)));
  fs::remove(kept);
  struct stat st {};
  REQUIRE(::stat("/dev/full", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  r = run_binary({"list", "--format", "json", "-o", "/dev/null"}, dir.path);
  CHECK(r.code == 0);
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  r = run_binary({"list", "--format", "json", "-o", "-"}, dir.path);
  CHECK(r.code == 0);
  CHECK_NOTHROW(json::parse(r.out));
  CHECK_FALSE(fs::exists(dir.path / "-"));
  spit(dir.path / "target.json", "old");
  REQUIRE(::chmod((dir.path / "target.json").c_str(), 0600) == 0);
  fs::create_symlink("target.json", dir.path / "link.json");
  r = run_binary({"list", "--format", "json", "-o", (dir.path / "link.json").string()}, dir.path);
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(dir.path / "link.json"));
  CHECK_NOTHROW(json::parse(slurp(dir.path / "target.json")));
  REQUIRE(::stat((dir.path / "target.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
}

TEST_CASE("hostile: tma's text and Markdown show a log name's bidi override inert", "[hostile]") {
  TempDir dir;
  // A real printout under a name holding U+202E (RIGHT-TO-LEFT OVERRIDE).
  const fs::path log = dir.path / "seq\u202Egol.log";
  spit(log, slurp(fs::path(CUDADIAG_SOURCE_DIR) / "tests/data/tma/flashinfer_seqlen1.log"));
  for (const std::string format : {"text", "md"}) {
    const Run r = run_binary({"tma", "--from-log", log.string(), "--format", format, "--no-color"}, dir.path);
    INFO(format << ": " << r.err);
    REQUIRE(r.exited);
    CHECK(r.out.find("\u202E") == std::string::npos);
    CHECK(r.out.find("\\u202e") != std::string::npos);
  }
}
