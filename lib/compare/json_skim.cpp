#include "compare/json_skim.h"

#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>

namespace cudadiag::compare {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Eight bytes at a time: most of a report is indentation and plain string characters.
constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;

std::uint64_t load8(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
// Non-zero when some byte of w is below n (n <= 128).
std::uint64_t byte_below(std::uint64_t w, unsigned n) { return (w - kOnes * n) & ~w & kHighs; }
// Non-zero when some byte of w equals c.
std::uint64_t byte_equal(std::uint64_t w, unsigned char c) { return byte_below(w ^ (kOnes * c), 1); }
// True when no byte of w ends a plain run inside a string: a quote, a backslash, a control character.
bool plain_string_word(std::uint64_t w) {
  return (byte_equal(w, '"') | byte_equal(w, '\\') | byte_below(w, 0x20)) == 0;
}

std::string shown(char c) {
  if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(c)));
    return buf;
  }
  return std::string("'") + c + "'";
}

}  // namespace

const char* to_string(JsonKind k) {
  switch (k) {
    case JsonKind::object: return "object";
    case JsonKind::array: return "array";
    case JsonKind::string: return "string";
    case JsonKind::number: return "number";
    case JsonKind::boolean: return "boolean";
    case JsonKind::null: return "null";
  }
  return "null";
}

void JsonSkim::fail(const std::string& reason) const { fail_at(pos_, reason); }

void JsonSkim::fail_at(std::size_t offset, const std::string& reason) const {
  if (offset >= text_.size()) throw JsonSyntaxError(text_.size(), "unexpected end of input");
  throw JsonSyntaxError(offset, reason);
}

void JsonSkim::skip_ws() {
  // Indentation: a newline, then runs of spaces eight at a time.
  while (pos_ < text_.size()) {
    if (pos_ + 8 <= text_.size() && load8(text_.data() + pos_) == kOnes * ' ') {
      pos_ += 8;
    } else if (is_blank(text_[pos_])) {
      ++pos_;
    } else {
      break;
    }
  }
}

char JsonSkim::next_char(const char* expected) {
  skip_ws();
  if (pos_ >= text_.size()) fail(std::string("expected ") + expected);
  return text_[pos_];
}

JsonKind JsonSkim::peek() {
  const char c = next_char("a value");
  switch (c) {
    case '{': return JsonKind::object;
    case '[': return JsonKind::array;
    case '"': return JsonKind::string;
    case 't':
    case 'f': return JsonKind::boolean;
    case 'n': return JsonKind::null;
    default:
      if (c == '-' || is_digit(c)) return JsonKind::number;
  }
  fail("expected a value, found " + shown(c));
}

void JsonSkim::skip_string() {
  ++pos_;  // opening quote
  const char* p = text_.data() + pos_;
  const char* end = text_.data() + text_.size();
  for (;;) {
    // The common case: a run of plain characters.
    while (end - p >= 8 && plain_string_word(load8(p))) p += 8;
    while (p < end && *p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) ++p;
    if (p >= end) {
      pos_ = text_.size();
      fail("unterminated string");
    }
    if (*p == '"') {
      pos_ = static_cast<std::size_t>(p - text_.data()) + 1;
      return;
    }
    if (*p != '\\') fail_at(static_cast<std::size_t>(p - text_.data()), "control character " + shown(*p) + " in a string");
    ++p;
    if (p >= end) {
      pos_ = text_.size();
      fail("unterminated string");
    }
    if (*p == 'u') {
      for (int i = 1; i <= 4; ++i) {
        if (p + i >= end || !is_hex(p[i]))
          fail_at(static_cast<std::size_t>(p + i - text_.data()), "\\u must be followed by four hex digits");
      }
      p += 5;
    } else if (std::strchr("\"\\/bfnrt", *p) != nullptr && *p != '\0') {
      ++p;
    } else {
      fail_at(static_cast<std::size_t>(p - text_.data()), "invalid escape \\" + std::string(1, *p));
    }
  }
}

void JsonSkim::skip_number() {
  auto digits = [&] {
    const std::size_t from = pos_;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    return pos_ - from;
  };
  if (text_[pos_] == '-') ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '0') {
    ++pos_;
  } else if (digits() == 0) {
    fail("invalid number: expected a digit");
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    if (digits() == 0) fail("invalid number: expected a digit after '.'");
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (digits() == 0) fail("invalid number: expected a digit in the exponent");
  }
}

void JsonSkim::skip_literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) fail("invalid literal: expected " + std::string(word));
  pos_ += word.size();
}

void JsonSkim::skip_scalar() {
  switch (peek()) {
    case JsonKind::string: skip_string(); return;
    case JsonKind::number: skip_number(); return;
    case JsonKind::null: skip_literal("null"); return;
    case JsonKind::boolean: skip_literal(text_[pos_] == 't' ? "true" : "false"); return;
    default: return;
  }
}

void JsonSkim::open(char bracket) {
  if (frames_.size() >= kMaxDepth) fail(report::too_deep_message());
  ++pos_;
  frames_.push_back({bracket == '{' ? '}' : ']', false});
}

bool JsonSkim::after_item(char close) {
  auto& f = frames_.back();
  const char c = next_char(close == '}' ? "',' or '}'" : "',' or ']'");
  if (c == close) {
    ++pos_;
    frames_.pop_back();
    return false;
  }
  if (f.has_items) {
    if (c != ',') fail(std::string("expected ',' or '") + close + "', found " + shown(c));
    ++pos_;
  }
  f.has_items = true;
  return true;
}

void JsonSkim::enter_object() {
  if (peek() != JsonKind::object) fail("expected an object");
  open('{');
}

bool JsonSkim::next_member(std::string& key) { return next_key(&key); }

bool JsonSkim::next_key(std::string* key) {
  if (!after_item('}')) return false;
  // A member: "name" ':'
  if (next_char("a member name") != '"') fail("expected a member name in quotes, found " + shown(text_[pos_]));
  const std::size_t start = pos_;
  skip_string();
  if (key) {
    const std::string_view raw = text_.substr(start + 1, pos_ - start - 2);
    if (raw.find('\\') == std::string_view::npos) {
      key->assign(raw);
    } else {
      try {
        *key = nlohmann::json::parse(text_.substr(start, pos_ - start)).get<std::string>();
      } catch (const nlohmann::json::parse_error&) {
        fail_at(start, "invalid escape in a member name");
      }
    }
  }
  if (next_char("':'") != ':') fail("expected ':' after a member name, found " + shown(text_[pos_]));
  ++pos_;
  return true;
}

void JsonSkim::enter_array() {
  if (peek() != JsonKind::array) fail("expected an array");
  open('[');
}

bool JsonSkim::next_element() { return after_item(']'); }

void JsonSkim::skip() {
  const JsonKind k = peek();
  if (k != JsonKind::object && k != JsonKind::array) {
    skip_scalar();
    return;
  }
  // Most of a report is skipped here: one loop with its own stack of closing brackets
  // (no recursion, no call per token), the same checks and messages as the cursor API.
  std::vector<char>& closers = skip_stack_;
  closers.clear();
  auto at_end = [&] { return pos_ >= text_.size(); };
  // After '{' or ',' in an object: "name" ':' and the cursor at the value.
  auto member_name = [&] {
    if (at_end()) fail("expected a member name");
    if (text_[pos_] != '"') fail("expected a member name in quotes, found " + shown(text_[pos_]));
    skip_string();
    skip_ws();
    if (at_end()) fail("expected ':'");
    if (text_[pos_] != ':') fail("expected ':' after a member name, found " + shown(text_[pos_]));
    ++pos_;
    skip_ws();
  };
  for (;;) {
    // At the first character of a value.
    if (at_end()) fail("expected a value");
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (frames_.size() + closers.size() >= kMaxDepth)
        fail(report::too_deep_message());
      closers.push_back(c == '{' ? '}' : ']');
      ++pos_;
      skip_ws();
      if (!at_end() && text_[pos_] == closers.back()) {
        ++pos_;
        closers.pop_back();
      } else {
        if (closers.back() == '}') member_name();
        continue;
      }
    } else {
      skip_scalar();
    }
    // After a value: ',' and the next one, or the closing bracket(s).
    for (;;) {
      if (closers.empty()) return;
      skip_ws();
      const char close = closers.back();
      if (at_end()) fail(close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
      if (text_[pos_] == close) {
        ++pos_;
        closers.pop_back();
        continue;
      }
      if (text_[pos_] != ',') fail(std::string("expected ',' or '") + close + "', found " + shown(text_[pos_]));
      ++pos_;
      skip_ws();
      if (close == '}') member_name();
      break;
    }
  }
}

std::string_view JsonSkim::slice() {
  skip_ws();
  const std::size_t start = pos_;
  skip();
  return text_.substr(start, pos_ - start);
}

void JsonSkim::finish() {
  skip_ws();
  if (pos_ < text_.size()) fail("unexpected " + shown(text_[pos_]) + " after the end of the document");
}

}  // namespace cudadiag::compare
