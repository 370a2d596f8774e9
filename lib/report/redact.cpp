// --redact: identifying values become tokens (report/redact_token.h: HMAC-SHA-256 under
// the site's key, or a random key per report). Two passes over the document (or
// the report, member by member, with no JSON form in between):
//  1. fields that identify by name (hostname, uuid, serial, PCI bus ids, results[].device,
//     and the environment section's values of the --env names) are hashed, and their
//     original values remembered;
//  2. every string (and object key) anywhere has GPU/MIG UUIDs, PCI ids and the
//     remembered values replaced by their hashes, so a hostname inside argv or the
//     program's output, a UUID inside a stderr excerpt or an --env token in argv does
//     not leak.
// UUIDs are hashed lower-cased and PCI ids as domain:bus:device, so the NVML form
// "00000000:3B:00.0", the CUDA form "0000:3b:00.0" and the Xid form "0000:3b:00" of
// one GPU get the same token, and under one key redacted reports of one host still pair up.
//
// Remembered values match in any letter case. A hostname (and its first label, what
// `hostname -s` prints) matches as a whole word at any length: not glued to a letter or
// digit on either side, so "vm" goes from "vm:" and "/tmp/vm-3/" but stays in "kvm";
// every other value matches anywhere when it has 4 or more characters. Words of the
// report's own (field names, outcomes, statuses, allocators) stay when a hostname is one
// of them, so that a host called "gpu" or "pool" still gets a report that reads back.
#include "report/redact.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <vector>

namespace cudadiag::report {
namespace {

constexpr const char* kPrefix = kTokenPrefix;

const std::regex& uuid_pattern() {
  static const std::regex re(
      "(GPU-|MIG-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
  return re;
}

// domain:bus:device[.function]; the domain is 4 (CUDA, kernel log) or 8 (NVML) digits.
const std::regex& pci_pattern() {
  static const std::regex re("([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(\\.[0-7])?");
  return re;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The canonical form of a PCI id match: 4-digit domain, lower case, no function.
std::string canonical_pci(const std::smatch& m) {
  std::string domain = lower(m[1].str());
  domain = domain.substr(domain.size() - 4);
  return domain + ":" + lower(m[2].str()) + ":" + lower(m[3].str());
}

bool is_identifying_key(const std::string& key) {
  static const std::set<std::string> keys = {"hostname", "uuid",   "serial",   "board_serial",
                                             "pci_bus_id", "bus_id", "busId", "pci_bus_id_legacy"};
  return keys.count(key) != 0;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// An object key that is one of the report's own field names ("gpu", "host",
// "by_outcome"): kept as it is when a hostname is an ordinary word, so that redaction
// never renames a section the report is read by.
bool is_field_name(const std::string& key) {
  if (key.empty()) return false;
  for (const char c : key)
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}

// A word of the report's own vocabulary (an outcome, a verdict status, an allocator),
// which the report is read back by: kept whole even when a hostname is that word.
bool is_vocabulary_word(const std::string& s) {
  return parse_outcome(s) || parse_verdict_status(s) || profiles::parse_allocator(s);
}

// The length of a token already written at s[i] ("redacted:" and 8 or more hex digits:
// reports of earlier versions had 8), never matched again; 0 when there is none.
size_t token_at(const std::string& s, size_t i) {
  const size_t prefix = std::char_traits<char>::length(kPrefix);
  if (s.compare(i, prefix, kPrefix) != 0) return 0;
  size_t k = i + prefix;
  while (k < s.size() && is_hex(s[k])) ++k;
  return k - i >= prefix + 8 ? k - i : 0;
}

bool matches(const std::string& s, size_t i, const RedactionContext::Literal& l) {
  const size_t n = l.folded.size();
  if (n == 0 || i + n > s.size()) return false;
  for (size_t k = 0; k < n; ++k)
    if (fold(s[i + k]) != l.folded[k]) return false;
  if (!l.whole_word) return true;
  return (i == 0 || !is_word_char(s[i - 1])) && (i + n == s.size() || !is_word_char(s[i + n]));
}

template <typename Fn>
std::string replace_all(const std::string& text, const std::regex& re, Fn replacement) {
  std::string out;
  size_t last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    out.append(text, last, static_cast<size_t>(m.position(0)) - last);
    out += replacement(m, text);
    last = static_cast<size_t>(m.position(0) + m.length(0));
  }
  out.append(text, last, std::string::npos);
  return out;
}

std::string scrub_patterns(const std::string& text, const RedactionTokens& tokens) {
  std::string s = replace_all(text, uuid_pattern(), [&tokens](const std::smatch& m, const std::string&) {
    return tokens.token(lower(m.str()));
  });
  return replace_all(s, pci_pattern(), [&tokens](const std::smatch& m, const std::string& whole) -> std::string {
    // Only a whole token: not glued to more hex digits or colons on either side.
    const auto begin = static_cast<size_t>(m.position(0));
    const size_t end = begin + static_cast<size_t>(m.length(0));
    const bool glued_before = begin > 0 && is_hex(whole[begin - 1]);
    const bool glued_after = end < whole.size() && (is_hex(whole[end]) || whole[end] == ':');
    if (glued_before || glued_after) return m.str();
    return tokens.token(canonical_pci(m));
  });
}

}  // namespace

RedactionContext::RedactionContext(const RedactionInputs& inputs)
    : inputs_(inputs), tokens_(inputs.tokens ? inputs.tokens : std::make_shared<const RedactionTokens>(RedactionTokens::per_report())) {
  for (const auto& [name, value] : inputs.env) {
    if (value.empty() || value.rfind(kPrefix, 0) == 0) continue;
    const std::string hash = tokens_->token(value);
    add_literal(name + "=" + value, name + "=" + hash, false);  // argv, an env dump: any length
    if (value.size() >= 4) add_literal(value, hash, false);
  }
}

void RedactionContext::remember(json& v) {
  if (v.is_array()) {
    for (auto& e : v) remember(e);
    return;
  }
  if (!v.is_object()) return;
  for (auto& [key, member] : v.items()) {
    if (member.is_string() && key == "hostname") {
      member = hash_hostname(member.get<std::string>());
    } else if (member.is_string() && is_identifying_key(key)) {
      member = hash_and_remember(member.get<std::string>());
    } else {
      remember(member);
    }
  }
}

void RedactionContext::remember(Fields& f) {
  std::vector<std::string> names;
  for (const auto& m : f.items()) names.push_back(m.name);
  for (const auto& key : names) {
    Value& member = *f.find(key);
    if (const std::string* text = member.string(); text && key == "hostname") {
      member = hash_hostname(*text);
    } else if (text && is_identifying_key(key)) {
      member = hash_and_remember(*text);
    } else {
      remember(member);
    }
  }
}

void RedactionContext::remember(Value& v) {
  if (Fields* inner = v.fields()) {
    remember(*inner);
  } else if (const Value::List* list = v.list()) {
    Value::List items = *list;
    for (auto& item : items) remember(item);
    v = Value(std::move(items));
  }
}

void RedactionContext::remember_device(std::string& device) {
  if (!parse_device(device).is_gpu()) return;  // the host (or no device) identifies nothing
  device = hash_and_remember(device);
}

void RedactionContext::remember_device(Device& device) {
  if (device.is_gpu()) remember_device(device.uuid);
}

void RedactionContext::remember_env_values(json& env) const {
  // The environment section shows allowlisted variables; one given with --env shows its
  // value there, whatever its length.
  if (!env.is_object()) return;
  for (const auto& [name, value] : inputs_.env) {
    if (value.empty() || !env.contains(name) || env[name] != value) continue;
    env[name] = tokens_->token(value);
  }
}

void RedactionContext::remember_env_values(Environment& env) const {
  for (const auto& [name, value] : inputs_.env) {
    if (value.empty()) continue;
    for (auto& v : env.vars)
      if (v.name == name && v.value == value) v.value = tokens_->token(value);
  }
}

void RedactionContext::seal() {
  std::stable_sort(literals_.begin(), literals_.end(),
                   [](const Literal& a, const Literal& b) { return a.folded.size() > b.folded.size(); });
}

void RedactionContext::scrub(std::string& text) const {
  if (!is_vocabulary_word(text)) text = scrub_text(text, false);
}

std::string RedactionContext::scrub_key(const std::string& key) const { return scrub_text(key, true); }

void RedactionContext::scrub(json& v) const {
  if (v.is_string()) {
    scrub(v.get_ref<std::string&>());
  } else if (v.is_array()) {
    for (auto& e : v) scrub(e);
  } else if (v.is_object()) {
    json out = json::object();
    for (auto& [key, member] : v.items()) {
      scrub(member);
      out[scrub_key(key)] = std::move(member);
    }
    v = std::move(out);
  }
}

void RedactionContext::scrub(Value& v) const {
  if (const std::string* text = v.string()) {
    std::string s = *text;
    scrub(s);
    v = Value(std::move(s));
  } else if (const Value::List* list = v.list()) {
    Value::List items = *list;
    for (auto& item : items) scrub(item);
    v = Value(std::move(items));
  } else if (Fields* inner = v.fields()) {
    scrub(*inner);
  }
}

void RedactionContext::scrub(Fields& f) const {
  Fields out;
  for (const auto& m : f.items()) {
    Value member = m.value;
    scrub(member);
    out.set(scrub_key(m.name), std::move(member));
  }
  f = std::move(out);
}

Redaction RedactionContext::covered() const {
  Redaction what;
  what.mode = tokens_->mode();
  what.key_id = tokens_->key_id();
  what.covers = {"hostname", "short hostname", "GPU UUIDs", "serials", "PCI ids"};
  if (!inputs_.env.empty()) what.covers.push_back("--env values (" + std::to_string(inputs_.env.size()) + ")");
  return what;
}

void RedactionContext::add_literal(const std::string& value, const std::string& replacement, bool whole_word) {
  std::string folded = value;
  std::transform(folded.begin(), folded.end(), folded.begin(), fold);
  for (auto& l : literals_) {
    if (l.folded == folded) {
      l.whole_word = l.whole_word && whole_word;  // the wider match wins
      return;
    }
  }
  literals_.push_back({std::move(folded), replacement, whole_word});
}

// The hostname and its first label, as whole words at any length.
std::string RedactionContext::hash_hostname(const std::string& value) {
  if (value.empty() || value.rfind(kPrefix, 0) == 0) return value;
  const std::string hash = tokens_->token(value);
  add_literal(value, hash, true);
  const std::string short_name = value.substr(0, value.find('.'));
  if (!short_name.empty() && short_name != value) add_literal(short_name, tokens_->token(short_name), true);
  return hash;
}

std::string RedactionContext::hash_and_remember(const std::string& value) {
  if (value.empty() || value.rfind(kPrefix, 0) == 0) return value;
  // Whole values that are UUIDs or PCI ids are hashed in their canonical form.
  std::string scrubbed = scrub_patterns(value, *tokens_);
  if (scrubbed != value && scrubbed.rfind(kPrefix, 0) == 0 && scrubbed.find(' ') == std::string::npos)
    return scrubbed;
  const std::string hash = tokens_->token(value);
  if (value.size() >= 4) add_literal(value, hash, false);  // shorter ones would scrub ordinary words
  return hash;
}

std::string RedactionContext::scrub_text(const std::string& text, bool is_key) const {
  std::string s = scrub_patterns(text, *tokens_);
  if (literals_.empty()) return s;
  const bool field_name = is_key && is_field_name(s);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (const size_t n = token_at(s, i)) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    const Literal* hit = nullptr;
    for (const auto& l : literals_) {
      if (field_name && l.whole_word) continue;
      if (matches(s, i, l)) {
        hit = &l;
        break;
      }
    }
    if (hit) {
      out += hit->replacement;
      i += hit->folded.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

void remember(HostInfo& h, RedactionContext& ctx) {
  if (h.hostname) *h.hostname = ctx.hash_hostname(*h.hostname);
  ctx.remember(h.facts);
}

void remember(DeviceInfo& d, RedactionContext& ctx) {
  for (auto* id : {&d.uuid, &d.pci_bus_id, &d.serial})
    if (*id) **id = ctx.hash_and_remember(**id);
  for (auto* view : {&d.cuda, &d.nvml})
    if (*view && **view) ctx.remember(***view);
  ctx.remember(d.facts);
}

// Every string of the sections; the member names of the typed members are the report's own.
void redact(HostInfo& h, const RedactionContext& ctx) {
  if (h.hostname) ctx.scrub(*h.hostname);
  ctx.scrub(h.facts);
}

void redact(DriverInfo& d, const RedactionContext& ctx) {
  if (d.version) ctx.scrub(*d.version);
  ctx.scrub(d.facts);
  if (d.nvml) {
    for (auto* s : {&d.nvml->library, &d.nvml->reason, &d.nvml->detail})
      if (*s) ctx.scrub(**s);
  }
  if (d.libcuda)
    for (std::string* s : {&d.libcuda->library, &d.libcuda->reason, &d.libcuda->detail}) ctx.scrub(*s);
  if (d.device_binding && *d.device_binding) {
    auto& b = **d.device_binding;
    ctx.scrub(b.source);
    ctx.scrub(b.value);
  }
}

void redact(DeviceInfo& d, const RedactionContext& ctx) {
  for (auto* s : {&d.name, &d.uuid, &d.pci_bus_id, &d.serial})
    if (*s) ctx.scrub(**s);
  for (auto* view : {&d.cuda, &d.nvml})
    if (*view && **view) ctx.scrub(***view);
  ctx.scrub(d.facts);
}

void redact(Environment& e, const RedactionContext& ctx) {
  for (auto& v : e.vars) {
    v.name = ctx.scrub_key(v.name);
    ctx.scrub(v.value);
  }
}

void remember(Result& r, RedactionContext& ctx) {
  // Of the typed members only params and details carry names of their own; launches,
  // buffers, Xid lines and memcheck's findings have no identifying member.
  ctx.remember(r.params);
  ctx.remember(r.details);
}

namespace {

void scrub_frames(std::vector<sanitizer::Frame>& frames, const RedactionContext& ctx) {
  for (auto& f : frames)
    for (std::string* s : {&f.function, &f.file, &f.module, &f.pc}) ctx.scrub(*s);
}

void scrub_memcheck(sanitizer::MemcheckReport& m, const RedactionContext& ctx) {
  for (auto& f : m.findings) {
    for (std::string* s : {&f.record_kind, &f.level, &f.message, &f.space, &f.direction, &f.address, &f.error,
                           &f.kernel, &f.device_function, &f.pc, &f.file})
      ctx.scrub(*s);
    if (auto& n = f.nearest)
      for (std::string* s : {&n->relation, &n->address, &n->buffer}) ctx.scrub(*s);
    if (auto& a = f.api)
      for (std::string* s : {&a->call, &a->error_name, &a->description}) ctx.scrub(*s);
    scrub_frames(f.host_frames, ctx);
    scrub_frames(f.device_frames, ctx);
  }
}

}  // namespace

// Every string member; enums (kernel family, error class and source, child ending,
// allocator), numbers and address ranges are not text and stay as they are.
void redact(Result& r, const RedactionContext& ctx) {
  ctx.scrub(r.case_id);
  ctx.scrub(r.params);
  ctx.scrub(r.profile);
  if (r.device.is_gpu()) ctx.scrub(r.device.uuid);
  ctx.scrub(r.expected);
  ctx.scrub(r.reason);
  if (auto& e = r.error) {
    for (std::string* s : {&e->name, &e->surfaced_at, &e->api_call, &e->meaning, &e->next_step, &e->message,
                           &e->location, &e->last_kernel})
      ctx.scrub(*s);
  }
  if (auto& rs = r.repeats) {
    std::map<std::string, int> histogram;
    for (const auto& [outcome, n] : rs->histogram) histogram[ctx.scrub_key(outcome)] = n;
    rs->histogram = std::move(histogram);
  }
  if (auto& c = r.child) {
    ctx.scrub(c->signal_name);
    ctx.scrub(c->stdout_excerpt.text);
    ctx.scrub(c->stderr_excerpt.text);
    for (auto& stray : c->strays) {
      ctx.scrub(stray.command);
      ctx.scrub(stray.note);
    }
  }
  for (auto& l : r.launch_log) {
    ctx.scrub(l.kernel);
    if (l.buffers)
      for (auto& b : *l.buffers) ctx.scrub(b);
    if (l.api) ctx.scrub(*l.api);
  }
  for (auto& b : r.buffers) ctx.scrub(b.name);
  if (auto& f = r.faulting_buffer) ctx.scrub(f->name);
  for (auto& site : r.fault_sites) {
    for (std::string* s : {&site.dump, &site.unreadable, &site.device, &site.kernel, &site.function, &site.file,
                           &site.line_note, &site.instruction, &site.address_note, &site.placement})
      ctx.scrub(*s);
    for (auto& n : site.notes) ctx.scrub(n);
    for (auto& w : site.waiting)
      for (std::string* s : {&w.kernel, &w.function, &w.file}) ctx.scrub(*s);
    for (auto& f : site.allocated_at.python)
      for (std::string* s : {&f.file, &f.function}) ctx.scrub(*s);
    for (auto& f : site.allocated_at.host)
      for (std::string* s : {&f.module, &f.function}) ctx.scrub(*s);
    ctx.scrub(site.allocated_at.python_note);
  }
  for (auto& x : r.xid) {
    for (std::string* s : {&x.pci, &x.message, &x.meaning}) ctx.scrub(*s);
    if (x.process) ctx.scrub(*x.process);
  }
  if (auto& s = r.sanitizer) {
    ctx.scrub(s->tool);
    ctx.scrub(s->error);
    if (s->memcheck) scrub_memcheck(*s->memcheck, ctx);
  }
  ctx.scrub(r.details);
}

Redaction redact(json& doc, const RedactionInputs& inputs) {
  RedactionContext ctx(inputs);
  ctx.remember(doc);
  if (doc.is_object() && doc.contains("results") && doc["results"].is_array()) {
    for (auto& res : doc["results"]) {
      if (!res.is_object() || !res.contains("device") || !res["device"].is_string()) continue;
      ctx.remember_device(res["device"].get_ref<std::string&>());
    }
  }
  if (doc.is_object() && doc.contains("environment")) ctx.remember_env_values(doc["environment"]);
  ctx.seal();
  ctx.scrub(doc);
  return ctx.covered();
}

void redact(Report& r, const RedactionInputs& inputs) {
  RedactionContext ctx(inputs);
  // Pass 1 in the order the document lists the members.
  remember(r.host, ctx);
  ctx.remember(r.driver.facts);
  for (auto& d : r.devices) remember(d, ctx);
  for (auto& res : r.results) remember(res, ctx);
  ctx.remember(r.extra);
  for (auto& res : r.results) ctx.remember_device(res.device);
  ctx.remember_env_values(r.environment);
  ctx.seal();

  ctx.scrub(r.schema_version);
  for (std::string* s : {&r.tool.name, &r.tool.version, &r.tool.git_revision, &r.tool.cuda_toolkit}) ctx.scrub(*s);
  for (auto& arch : r.tool.architectures) ctx.scrub(arch);
  for (std::string* s : {&r.invocation.command, &r.invocation.started_at}) ctx.scrub(*s);
  for (auto& arg : r.invocation.argv) ctx.scrub(arg);
  if (r.invocation.finished_at) ctx.scrub(*r.invocation.finished_at);
  redact(r.host, ctx);
  redact(r.driver, ctx);
  for (auto& d : r.devices) redact(d, ctx);
  redact(r.environment, ctx);
  if (r.gpu.reason) ctx.scrub(*r.gpu.reason);
  for (auto& res : r.results) redact(res, ctx);
  for (auto& reason : r.verdict.reasons) ctx.scrub(reason);
  ctx.scrub(r.extra);
  r.redaction = ctx.covered();
}

}  // namespace cudadiag::report
