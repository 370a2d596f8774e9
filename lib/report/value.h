#pragma once
// Facts a kernel family or a command reports about one result whose set of names
// differs by family (Result.params, Result.details): named members in their order, each
// a typed scalar (bool, signed or unsigned integer, double, string), a list, or named
// members again. The JSON edge converts (report_write.cpp, report_read.cpp); everything in between reads
// members by name and type.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace cudadiag::report {

class Value;
struct Member;

// Named members in the order they were set; setting a name again replaces its value.
class Fields {
 public:
  Fields() = default;
  Fields(std::initializer_list<Member> members);
  // Defined below, once Member is complete: std::vector<Member> needs it (clang checks).
  ~Fields();
  Fields(const Fields&);
  Fields(Fields&&) noexcept;
  Fields& operator=(const Fields&);
  Fields& operator=(Fields&&) noexcept;

  bool empty() const;
  std::size_t size() const;
  const std::vector<Member>& items() const { return items_; }

  bool contains(std::string_view name) const { return find(name) != nullptr; }
  const Value* find(std::string_view name) const;
  Value* find(std::string_view name);
  // The member's value; added (null) at the end when absent.
  Value& operator[](std::string_view name);
  void set(std::string_view name, Value v);
  // The named member when it holds named members itself; nullptr otherwise.
  const Fields* fields_of(std::string_view name) const;
  void erase(std::string_view name);
  // Every member of `other`, set in its order.
  void merge(const Fields& other);

  // Typed reads with a fallback when absent or of another type.
  long long int_or(std::string_view name, long long fallback) const;
  bool bool_or(std::string_view name, bool fallback) const;
  std::string string_or(std::string_view name, const std::string& fallback) const;

  bool operator==(const Fields& o) const;

 private:
  // Appends without looking for the name: a JSON object's names are unique already.
  friend Fields fields_from_json(const nlohmann::ordered_json& j);
  std::vector<Member> items_;
};

class Value {
 public:
  using List = std::vector<Value>;
  enum class Kind : std::uint8_t { null, boolean, integer, unsigned_integer, number, string, list, fields };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : data_(b) {}
  Value(int i) : data_(static_cast<std::int64_t>(i)) {}
  Value(long i) : data_(static_cast<std::int64_t>(i)) {}
  Value(long long i) : data_(static_cast<std::int64_t>(i)) {}
  Value(unsigned u) : data_(static_cast<std::uint64_t>(u)) {}
  Value(unsigned long u) : data_(static_cast<std::uint64_t>(u)) {}
  Value(unsigned long long u) : data_(static_cast<std::uint64_t>(u)) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(const char* s) : data_(std::string(s)) {}
  Value(List l) : data_(std::move(l)) {}
  Value(Fields f);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_null() const { return kind() == Kind::null; }
  bool is_integral() const { return kind() == Kind::integer || kind() == Kind::unsigned_integer; }
  bool is_number() const { return is_integral() || kind() == Kind::number; }

  const bool* boolean() const { return std::get_if<bool>(&data_); }
  const std::string* string() const { return std::get_if<std::string>(&data_); }
  const List* list() const { return std::get_if<List>(&data_); }
  const Fields* fields() const { return std::get_if<Fields>(&data_); }
  Fields* fields() { return std::get_if<Fields>(&data_); }
  // Integers (signed or unsigned, within long long) and doubles; nullopt otherwise.
  std::optional<long long> as_int() const;
  std::optional<double> as_double() const;

  bool operator==(const Value& o) const { return data_ == o.data_; }

 private:
  friend nlohmann::ordered_json to_json(const Value& v);
  std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string, List, Fields> data_;
};

struct Member {
  std::string name;
  Value value;
  bool operator==(const Member& o) const { return name == o.name && value == o.value; }
};

inline Fields::~Fields() = default;
inline Fields::Fields(const Fields&) = default;
inline Fields::Fields(Fields&&) noexcept = default;
inline Fields& Fields::operator=(const Fields&) = default;
inline Fields& Fields::operator=(Fields&&) noexcept = default;
inline bool Fields::empty() const { return items_.empty(); }
inline std::size_t Fields::size() const { return items_.size(); }
inline Value::Value(Fields f) : data_(std::move(f)) {}

// The JSON edge: an object becomes Fields, an array a list, every scalar its type.
Value value_from_json(const nlohmann::ordered_json& j);
// `j` must be an object (std::invalid_argument otherwise).
Fields fields_from_json(const nlohmann::ordered_json& j);
nlohmann::ordered_json to_json(const Value& v);
nlohmann::ordered_json to_json(const Fields& f);

}  // namespace cudadiag::report
