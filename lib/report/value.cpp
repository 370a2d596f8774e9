#include "report/value.h"

#include <limits>
#include <stdexcept>

namespace cudadiag::report {

using json = nlohmann::ordered_json;

Fields::Fields(std::initializer_list<Member> members) {
  for (const auto& m : members) set(m.name, m.value);
}

const Value* Fields::find(std::string_view name) const {
  for (const auto& m : items_)
    if (m.name == name) return &m.value;
  return nullptr;
}

Value* Fields::find(std::string_view name) {
  for (auto& m : items_)
    if (m.name == name) return &m.value;
  return nullptr;
}

Value& Fields::operator[](std::string_view name) {
  if (Value* v = find(name)) return *v;
  items_.push_back(Member{std::string(name), Value()});
  return items_.back().value;
}

const Fields* Fields::fields_of(std::string_view name) const {
  const Value* v = find(name);
  return v ? v->fields() : nullptr;
}

void Fields::set(std::string_view name, Value v) { (*this)[name] = std::move(v); }

void Fields::erase(std::string_view name) {
  for (auto it = items_.begin(); it != items_.end(); ++it) {
    if (it->name == name) {
      items_.erase(it);
      return;
    }
  }
}

void Fields::merge(const Fields& other) {
  for (const auto& m : other.items_) set(m.name, m.value);
}

long long Fields::int_or(std::string_view name, long long fallback) const {
  const Value* v = find(name);
  if (!v || !v->is_integral()) return fallback;
  return v->as_int().value_or(fallback);
}

bool Fields::bool_or(std::string_view name, bool fallback) const {
  const Value* v = find(name);
  return v && v->boolean() ? *v->boolean() : fallback;
}

std::string Fields::string_or(std::string_view name, const std::string& fallback) const {
  const Value* v = find(name);
  return v && v->string() ? *v->string() : fallback;
}

bool Fields::operator==(const Fields& o) const { return items_ == o.items_; }

std::optional<long long> Value::as_int() const {
  if (const auto* i = std::get_if<std::int64_t>(&data_)) return *i;
  if (const auto* u = std::get_if<std::uint64_t>(&data_)) {
    if (*u > static_cast<std::uint64_t>(std::numeric_limits<long long>::max())) return std::nullopt;
    return static_cast<long long>(*u);
  }
  return std::nullopt;
}

std::optional<double> Value::as_double() const {
  if (const auto* d = std::get_if<double>(&data_)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&data_)) return static_cast<double>(*i);
  if (const auto* u = std::get_if<std::uint64_t>(&data_)) return static_cast<double>(*u);
  return std::nullopt;
}

Value value_from_json(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
    case json::value_t::discarded: return Value();
    case json::value_t::boolean: return Value(j.get<bool>());
    case json::value_t::number_integer: return Value(j.get<long long>());
    case json::value_t::number_unsigned: return Value(j.get<unsigned long long>());
    case json::value_t::number_float: return Value(j.get<double>());
    case json::value_t::string: return Value(j.get<std::string>());
    case json::value_t::array: {
      Value::List l;
      l.reserve(j.size());
      for (const auto& e : j) l.push_back(value_from_json(e));
      return Value(std::move(l));
    }
    case json::value_t::object: return Value(fields_from_json(j));
    case json::value_t::binary: break;
  }
  throw std::invalid_argument("a binary JSON value has no report value");
}

Fields fields_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument(std::string("expected an object, got ") + j.type_name());
  Fields f;
  f.items_.reserve(j.size());
  for (const auto& [k, v] : j.items()) f.items_.push_back(Member{k, value_from_json(v)});
  return f;
}

json to_json(const Value& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return json(nullptr);
        } else if constexpr (std::is_same_v<T, Value::List>) {
          json a = json::array();
          for (const auto& e : x) a.push_back(to_json(e));
          return a;
        } else if constexpr (std::is_same_v<T, Fields>) {
          return to_json(x);
        } else {
          return json(x);
        }
      },
      v.data_);
}

json to_json(const Fields& f) {
  json o = json::object();
  for (const auto& m : f.items()) o[m.name] = to_json(m.value);
  return o;
}

}  // namespace cudadiag::report
