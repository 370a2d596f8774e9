#include "compare/skim_read.h"

#include <charconv>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "compare/load.h"
#include "util/errors.h"

namespace cudadiag::compare {

std::string JsonPath::str() const {
  std::vector<const JsonPath*> chain;
  for (const JsonPath* p = this; p && (p->parent || p->is_index || !p->key.empty()); p = p->parent)
    chain.push_back(p);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    out += '/';
    if ((*it)->is_index) {
      out += std::to_string((*it)->index);
    } else {
      for (const char c : (*it)->key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    }
  }
  return out;
}

void SkimReader::fail(const JsonPath& at, const std::string& what) const {
  throw InputError(file_, at.str(), what);
}

void SkimReader::syntax_error(std::size_t offset, const std::string& reason) const {
  throw json_syntax_error(text_, offset, reason, file_);
}

void SkimReader::slice_error(std::string_view raw, const report::json::exception& e) const {
  const auto start = static_cast<std::size_t>(raw.data() - text_.data());
  if (const auto* pe = dynamic_cast<const report::json::parse_error*>(&e))
    syntax_error(start + (pe->byte > 0 ? pe->byte - 1 : 0), pe->what());
  if (dynamic_cast<const report::json::out_of_range*>(&e))
    syntax_error(start, "a number too large for a double (it reads as infinity)");
  syntax_error(start, e.what());
}

void SkimReader::expect(JsonKind k, const JsonPath& at) {
  const JsonKind found = skim_.peek();
  if (found != k) fail(at, std::string("must be ") + (k == JsonKind::object || k == JsonKind::array ? "an " : "a ") +
                               to_string(k) + ", found " + to_string(found));
}

bool SkimReader::null() {
  if (skim_.peek() != JsonKind::null) return false;
  skim_.skip();
  return true;
}

std::string SkimReader::string(const JsonPath& at) {
  expect(JsonKind::string, at);
  const std::string_view raw = skim_.slice();
  const std::string_view inner = raw.substr(1, raw.size() - 2);
  bool plain = true;
  for (const char c : inner) plain = plain && c != '\\' && static_cast<unsigned char>(c) < 0x80;
  if (plain) return std::string(inner);
  // Escapes or non-ASCII text: nlohmann decodes the escapes and checks the UTF-8.
  try {
    return report::json::parse(raw).get<std::string>();
  } catch (const report::json::exception& e) {
    slice_error(raw, e);
  }
}

std::string_view SkimReader::number_text(const JsonPath& at, const char* what) {
  const JsonKind k = skim_.peek();
  if (k != JsonKind::number) fail(at, std::string("must be ") + what + ", found " + to_string(k));
  return skim_.slice();
}

long long SkimReader::integer(const JsonPath& at, long long lo, long long hi) {
  const std::string_view t = number_text(at, "an integer");
  long long v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range) fail(at, fmt::format("{} is out of range ({}..{})", t, lo, hi));
  if (ec != std::errc() || end != t.data() + t.size()) fail(at, fmt::format("must be an integer, found {}", t));
  if (v < lo || v > hi) fail(at, fmt::format("{} is out of range ({}..{})", v, lo, hi));
  return v;
}

double SkimReader::number(const JsonPath& at, double lo) {
  const std::string_view t = number_text(at, "a number");
  double v = 0.0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v))
    fail(at, fmt::format("{} is not a finite number", t));
  if (v < lo) fail(at, fmt::format("{} is below the minimum {:g}", t, lo));
  return v;
}

std::optional<bool> SkimReader::boolean_or_null(const JsonPath& at) {
  if (null()) return std::nullopt;
  expect(JsonKind::boolean, at);
  return skim_.slice().front() == 't';
}

report::json SkimReader::value() {
  const std::string_view raw = skim_.slice();
  try {
    return report::json::parse(raw);
  } catch (const report::json::exception& e) {
    slice_error(raw, e);
  }
}

}  // namespace cudadiag::compare
