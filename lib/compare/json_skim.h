#pragma once
// A fast forward pass over a JSON text that checks its syntax and hands out only the
// values the caller asks for, as byte ranges to parse with nlohmann::json.
//
// Why: a repro report is ~200 KB, mostly launch logs, buffers and child excerpts that
// compare never reads. nlohmann's lexer takes ~2.7 ms for such a report even with a
// SAX handler that keeps nothing; stepping over those values here takes a fraction of
// that, so 10,000 reports stream in seconds. Values are never decoded here: what is
// kept is parsed by nlohmann (which also checks its UTF-8); what is skipped is checked
// for JSON syntax (structure, strings and escapes, numbers, literals) but not for UTF-8.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "report/json_document.h"

namespace cudadiag::compare {

// A syntax error at a byte offset of the text.
class JsonSyntaxError : public std::runtime_error {
 public:
  JsonSyntaxError(std::size_t offset, const std::string& reason)
      : std::runtime_error(reason), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

// The kind of the value at the cursor, named as nlohmann's type_name() names it.
enum class JsonKind { object, array, string, number, boolean, null };
const char* to_string(JsonKind k);

class JsonSkim {
 public:
  // Containers nested deeper than this are refused (a hostile file cannot exhaust the stack
  // of whatever parses the kept parts): the same limit as every other reader of outside JSON.
  static constexpr std::size_t kMaxDepth = report::kMaxJsonDepth;

  explicit JsonSkim(std::string_view text) : text_(text) {}

  // Kind of the next value (skips whitespace). Throws at the end of input or on a
  // character that starts no value.
  JsonKind peek();
  std::size_t offset() const { return pos_; }

  // Objects: enter, then next_member() until it returns false. `key` receives the
  // member name (escapes decoded). The cursor is then at the member's value, which the
  // caller must consume (skip, slice, or enter).
  void enter_object();
  bool next_member(std::string& key);

  // Arrays: enter, then next_element() until it returns false; the cursor is at the
  // element, which the caller must consume.
  void enter_array();
  bool next_element();

  // Consumes the value at the cursor, checking its syntax.
  void skip();
  // Consumes the value at the cursor and returns its text (for nlohmann::json::parse).
  std::string_view slice();

  // After the top-level value: only whitespace may follow.
  void finish();

 private:
  void skip_ws();
  char next_char(const char* expected);  // the next non-blank character, or throws
  void skip_string();                     // cursor at the opening quote
  void skip_number();
  void skip_literal(std::string_view word);
  void skip_scalar();
  void open(char bracket);
  // After a member or element: ',' continues, the closing bracket ends the container.
  bool after_item(char close);
  bool next_key(std::string* key);  // next_member; the name is decoded only when asked for
  [[noreturn]] void fail(const std::string& reason) const;
  [[noreturn]] void fail_at(std::size_t offset, const std::string& reason) const;

  std::string_view text_;
  std::size_t pos_ = 0;
  // Containers entered through enter_object/enter_array, innermost last: the closing
  // bracket, and whether an item was already read (a comma is then required).
  struct Frame {
    char close;
    bool has_items;
  };
  std::vector<Frame> frames_;
  std::vector<char> skip_stack_;  // skip()'s closing brackets, kept for its capacity
};

}  // namespace cudadiag::compare
