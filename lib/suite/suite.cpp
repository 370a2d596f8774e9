#include "suite/suite.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "cases/expectation.h"
#include "profiles/profile.h"
#include "report/json_document.h"
#include "report/json_reader.h"
#include "suite/embedded_suites.h"
#include "util/atomic_file.h"
#include "util/errors.h"

namespace cudadiag::suite {
namespace {

// The generic typed reads come from JsonReader; these add the suite's own vocabulary
// (profiles, expectations, kernel parameters).
class Reader : public report::JsonReader {
 public:
  using JsonReader::JsonReader;

  const json& object_at(const json& j, const std::string& path) const { return object(j, path); }

  std::string string_at(const json& j, const std::string& key, const std::string& path) const {
    return string(required(j, key, path), member_pointer(path, key));
  }

  int int_at(const json& j, const std::string& key, const std::string& path, int lo, int hi) const {
    return static_cast<int>(integer(required(j, key, path), member_pointer(path, key), lo, hi));
  }

  std::vector<profiles::Profile> profiles_at(const json& j, const std::string& key, const std::string& path) const {
    const std::string p = path + "/" + key;
    const json& v = j.at(key);
    if (!v.is_array()) fail(p, std::string("expected an array of profile names, got ") + v.type_name());
    if (v.empty()) fail(p, "empty profile list");
    std::vector<profiles::Profile> out;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string ip = p + "/" + std::to_string(i);
      if (!v[i].is_string()) fail(ip, "expected a profile name string");
      try {
        auto prof = profiles::parse_profile(v[i].get<std::string>());
        if (std::any_of(out.begin(), out.end(), [&](const auto& q) { return q.name == prof.name; }))
          fail(ip, "profile '" + prof.name + "' listed twice");
        out.push_back(std::move(prof));
      } catch (const std::invalid_argument& e) {
        fail(ip, e.what());
      }
    }
    return out;
  }

  // expected: {"<profile>|*": "<expectation>"}; keys canonicalised, "*" (every other
  // profile) read as ProfileExpectations::otherwise.
  cases::ProfileExpectations expected_at(const json& j, const std::string& path) const {
    const std::string p = path + "/expected";
    const json& v = j.at("expected");
    if (!v.is_object()) fail(p, std::string("expected an object {profile: expectation}, got ") + v.type_name());
    cases::ProfileExpectations out;
    for (const auto& [k, e] : v.items()) {
      const std::string kp = p + "/" + k;
      const bool every_other = k == "*";
      std::string key = k;
      if (!every_other) {
        try {
          key = profiles::parse_profile(k).name;
        } catch (const std::invalid_argument& ex) {
          fail(kp, ex.what());
        }
      }
      if (!e.is_string()) fail(kp, "expected an expectation string such as \"ok\" or \"error:memory_fault\"");
      try {
        cases::Expectation::parse(e.get<std::string>());
      } catch (const std::invalid_argument& ex) {
        fail(kp, ex.what());
      }
      (every_other ? out.otherwise : out.by_profile[key]) = e.get<std::string>();
    }
    return out;
  }

  // Normalises parameters through the family; maps "name: ..." messages onto the
  // parameter's own JSON path.
  json params_for(cases::Family family, const json& params, const json& given, const std::string& path) const {
    try {
      return cases::normalize_params(family, params);
    } catch (const std::exception& e) {
      const std::string msg = e.what();
      std::string where = path + "/params";
      const auto colon = msg.find(':');
      if (colon != std::string::npos && given.is_object() && given.contains(msg.substr(0, colon)))
        where += "/" + msg.substr(0, colon);
      fail(where, msg);
    }
  }

};

SuiteCase parse_case(const Reader& rd, const json& cj, const std::string& path, const Suite& s,
                     size_t position) {
  rd.object_at(cj, path);
  rd.only_keys(cj, path, {"id", "kernel", "name", "title", "params", "profiles", "expected", "repeat",
                          "deadline_ms", "expects_fault", "fence_allocator", "tags"});
  const bool has_id = cj.contains("id"), has_kernel = cj.contains("kernel");
  if (has_id == has_kernel)
    rd.fail(path, "a case names exactly one of \"id\" (a catalog case) or \"kernel\" (a kernel family)");

  SuiteCase sc;
  sc.json_path = path;
  const json given = cj.contains("params") ? cj.at("params") : json::object();
  if (!given.is_object()) rd.fail(path + "/params", std::string("expected an object, got ") + given.type_name());

  if (has_id) {
    const std::string id = rd.string_at(cj, "id", path);
    const cases::CaseDef* def = cases::find_case(id);
    if (!def) rd.fail(path + "/id", "unknown case id '" + id + "' (see `cudadiag list`)");
    sc.def = *def;
    if (!given.empty()) {
      json merged = def->params.is_object() ? def->params : json::object();
      for (const auto& [k, v] : given.items()) merged[k] = v;
      sc.def.params = rd.params_for(def->family, merged, given, path);
    }
  } else {
    const std::string kernel = rd.string_at(cj, "kernel", path);
    const auto family = cases::parse_family(kernel);
    if (!family) rd.fail(path + "/kernel", "unknown kernel '" + kernel + "' (known: " + cases::family_names() + ")");
    sc.from_catalog = false;
    sc.def.family = *family;
    sc.def.params = rd.params_for(*family, given, given, path);
    sc.def.id = kernel + ".suite-" + std::to_string(position);
    sc.def.title = "suite case with explicit parameters";
  }
  if (cj.contains("name")) {
    const std::string name = rd.string_at(cj, "name", path);
    if (name.empty()) rd.fail(path + "/name", "empty name");
    sc.def.id = name;
  }
  if (cj.contains("title")) sc.def.title = rd.string_at(cj, "title", path);
  if (cj.contains("expected")) {
    auto given = rd.expected_at(cj, path);
    if (!given.otherwise.empty()) sc.def.expected.otherwise = std::move(given.otherwise);
    for (auto& [k, v] : given.by_profile) sc.def.expected.by_profile[k] = std::move(v);
  }
  if (cj.contains("expects_fault")) {
    if (!cj["expects_fault"].is_boolean()) rd.fail(path + "/expects_fault", "expected true or false");
    sc.def.expects_fault = cj["expects_fault"].get<bool>();
  }
  if (cj.contains("fence_allocator")) {
    const std::string fa = rd.string_at(cj, "fence_allocator", path);
    // The side by its own name: "fence" (fence-back on the command line) is refused here.
    const auto side = parse_choice(profiles::kAllocators, fa);
    if (!side || !profiles::is_fence(*side))
      rd.fail(path + "/fence_allocator", "'" + fa + "' is not fence-back or fence-front");
    sc.def.fence_allocator = *side;
  }
  if (cj.contains("tags")) {
    const json& t = cj["tags"];
    if (!t.is_array() || !std::all_of(t.begin(), t.end(), [](const json& x) { return x.is_string(); }))
      rd.fail(path + "/tags", "expected an array of strings");
    for (const auto& x : t) sc.def.tags.push_back(x.get<std::string>());
  }
  sc.profiles = cj.contains("profiles") ? rd.profiles_at(cj, "profiles", path) : s.default_profiles;
  sc.repeat = cj.contains("repeat") ? rd.int_at(cj, "repeat", path, 1, 100000) : s.default_repeat;
  if (cj.contains("deadline_ms")) sc.def.deadline_ms = rd.int_at(cj, "deadline_ms", path, 1, 3600000);
  else if (s.default_deadline_ms > 0 && sc.def.deadline_ms == 0) sc.def.deadline_ms = s.default_deadline_ms;
  return sc;
}

std::string stem_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  auto dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

}  // namespace

Suite parse_suite(std::string_view text, const std::string& file) {
  const Reader rd(file);
  const json doc = report::parse_json_document(text, file);
  rd.object_at(doc, "");
  rd.only_keys(doc, "", {"suite", "description", "version", "defaults", "cases"});

  Suite s;
  s.file = file;
  s.name = doc.contains("suite") ? rd.string_at(doc, "suite", "") : stem_of(file);
  if (s.name.empty()) rd.fail("/suite", "empty suite name");
  if (doc.contains("description")) s.description = rd.string_at(doc, "description", "");
  if (doc.contains("version")) s.version = rd.int_at(doc, "version", "", 1, 1);

  if (doc.contains("defaults")) {
    const json& d = rd.object_at(doc["defaults"], "/defaults");
    rd.only_keys(d, "/defaults", {"profiles", "repeat", "deadline_ms"});
    if (d.contains("profiles")) s.default_profiles = rd.profiles_at(d, "profiles", "/defaults");
    if (d.contains("repeat")) s.default_repeat = rd.int_at(d, "repeat", "/defaults", 1, 100000);
    if (d.contains("deadline_ms")) s.default_deadline_ms = rd.int_at(d, "deadline_ms", "/defaults", 1, 3600000);
  }

  if (!doc.contains("cases")) rd.fail("/cases", "missing: a suite lists its cases");
  const json& cs = doc["cases"];
  if (!cs.is_array()) rd.fail("/cases", std::string("expected an array, got ") + cs.type_name());
  if (cs.empty()) rd.fail("/cases", "no cases");
  std::set<std::string> ids;
  for (size_t i = 0; i < cs.size(); ++i) {
    const std::string path = "/cases/" + std::to_string(i);
    SuiteCase sc = parse_case(rd, cs[i], path, s, i);
    if (!ids.insert(sc.def.id).second)
      rd.fail(path, "duplicate case id '" + sc.def.id + "' (give one of them a \"name\")");
    s.cases.push_back(std::move(sc));
  }
  return s;
}

std::vector<std::string> embedded_suite_names() {
  std::vector<std::string> out;
  for (const auto& [name, text] : embedded_suite_table()) {
    (void)text;
    out.emplace_back(name);
  }
  return out;
}

std::optional<std::string_view> embedded_suite_text(const std::string& name) {
  for (const auto& [n, text] : embedded_suite_table())
    if (name == n) return std::string_view(text);
  return std::nullopt;
}

Suite load_suite(const std::string& name_or_file) {
  if (name_or_file == "-") return parse_suite(read_file_or_stdin("-"), report::source_name("-"));
  struct stat st {};
  const bool is_file = ::stat(name_or_file.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  const bool looks_like_path = name_or_file.find('/') != std::string::npos ||
                               (name_or_file.size() > 5 &&
                                name_or_file.compare(name_or_file.size() - 5, 5, ".json") == 0);
  if (!is_file && !looks_like_path) {
    if (auto text = embedded_suite_text(name_or_file)) {
      Suite s = parse_suite(*text, "embedded:" + name_or_file);
      return s;
    }
    std::string known;
    for (const auto& n : embedded_suite_names()) known += (known.empty() ? "" : ", ") + n;
    throw UsageError("--suite: '" + name_or_file + "' is neither a built-in suite (" + known +
                     ") nor a file");
  }
  if (!is_file) throw UsageError("--suite: cannot read '" + name_or_file + "': no such file");
  return parse_suite(read_file_or_stdin(name_or_file), name_or_file);
}

void filter_cases(Suite& s, const std::string& glob) {
  std::vector<SuiteCase> kept;
  for (auto& c : s.cases)
    if (::fnmatch(glob.c_str(), c.def.id.c_str(), 0) == 0) kept.push_back(std::move(c));
  if (kept.empty()) throw UsageError("--case '" + glob + "' matches no case of suite '" + s.name + "'");
  s.cases = std::move(kept);
}

json suite_json(const Suite& s) {
  json ids = json::array();
  std::vector<std::string> profs;
  for (const auto& c : s.cases) {
    ids.push_back(c.def.id);
    for (const auto& p : c.profiles)
      if (std::find(profs.begin(), profs.end(), p.name) == profs.end()) profs.push_back(p.name);
  }
  return json{{"name", s.name},   {"file", s.file},      {"description", s.description},
              {"version", s.version}, {"cases", ids}, {"profiles", profs}};
}

}  // namespace cudadiag::suite
