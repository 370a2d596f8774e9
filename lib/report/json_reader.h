#pragma once
// Typed reads of a JSON document that came from outside (a report, a suite). Every
// read names the value by its JSON pointer ("/results/3/duration_ms"); a wrong type, a
// missing required member or a number out of range throws InputError naming the source
// and the pointer (exit 2), never a bare nlohmann exception (exit 4).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"
#include "util/choices.h"

namespace cudadiag::report {

class JsonReader {
 public:
  explicit JsonReader(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  // Throws InputError(source, pointer, what); the root is written "/".
  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const;

  // JSON pointer of a member or an element ("~" and "/" in keys escaped).
  static std::string member_pointer(const std::string& pointer, std::string_view key);
  static std::string element_pointer(const std::string& pointer, std::size_t index);

  // The value itself must have the type.
  const json& object(const json& v, const std::string& pointer) const;
  const json& array(const json& v, const std::string& pointer) const;
  std::string string(const json& v, const std::string& pointer) const;
  bool boolean(const json& v, const std::string& pointer) const;
  double number(const json& v, const std::string& pointer) const;
  // An integer (an integral float such as 3.0 counts) within [lo, hi].
  long long integer(const json& v, const std::string& pointer, long long lo, long long hi) const;
  std::uint64_t unsigned_integer(const json& v, const std::string& pointer) const;
  std::vector<std::string> strings(const json& v, const std::string& pointer) const;
  // A word of `table`; another word fails naming it, what it is ("access kind") and the words.
  template <typename E, std::size_t N>
  E choice(const json& v, const std::string& pointer, const ChoiceTable<E, N>& table, const char* what) const {
    const std::string text = string(v, pointer);
    if (const auto value = parse_choice(table, text)) return *value;
    fail(pointer, std::string("unknown ") + what + " '" + text + "' (" + choice_list(table) + ")");
  }

  // A member of `object` (which must be an object): nullptr when absent.
  const json* find(const json& object, std::string_view key, const std::string& pointer) const;
  // Required members: absent is an error naming the member.
  const json& required(const json& object, std::string_view key, const std::string& pointer) const;

  // Optional members with a fallback when absent.
  std::string string_or(const json& object, std::string_view key, const std::string& pointer,
                        const std::string& fallback = "") const;
  bool boolean_or(const json& object, std::string_view key, const std::string& pointer, bool fallback) const;
  double number_or(const json& object, std::string_view key, const std::string& pointer, double fallback) const;
  int int_or(const json& object, std::string_view key, const std::string& pointer, int fallback) const;
  std::uint64_t unsigned_or(const json& object, std::string_view key, const std::string& pointer,
                            std::uint64_t fallback) const;
  // A member that must be an object (array), {} ([]) when absent.
  json object_or_empty(const json& object, std::string_view key, const std::string& pointer) const;
  json array_or_empty(const json& object, std::string_view key, const std::string& pointer) const;

  // Members of an object that must have the given type when present; unknown members
  // and other types stay unchecked. For sections kept as JSON (host, invocation, gpu)
  // whose few typed members other parts of cudadiag read.
  enum class Type { string, boolean, number, integer, object, array, strings };
  struct Typed {
    const char* key;
    Type type;
  };
  void check_members(const json& object, const std::string& pointer, std::initializer_list<Typed> members) const;

  // Keys outside `allowed` are an error naming the first such key and the allowed set.
  void only_keys(const json& object, const std::string& pointer, std::initializer_list<const char*> allowed) const;

 private:
  std::string source_;
};

}  // namespace cudadiag::report
