#pragma once
// --redact: replace identifying values (hostnames, serials, UUIDs, PCI bus ids, the
// values given with run's --env) with keyed tokens (report/redact_token.h): under one
// site key, two redacted reports of the same host still pair up.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "report/redact_token.h"
#include "report/report.h"

namespace cudadiag::report {

// Values the report cannot name by itself that --redact must scrub too.
struct RedactionInputs {
  // run's --env NAME=VALUE assignments: a VALUE may be a secret (a token, a password).
  std::vector<std::pair<std::string, std::string>> env;
  // How tokens are made; null: a fresh random key for this redaction (per-report tokens).
  std::shared_ptr<const RedactionTokens> tokens{};
};

// One redaction, in two passes over a document or a report:
//  1. remember: fields that identify by name (hostname, uuid, serial, PCI bus ids, a
//     result's device, the environment section's values of the --env names) are hashed
//     and their values remembered;
//  2. scrub: every string (and object key) has GPU/MIG UUIDs and PCI ids (by form), the
//     remembered values, the hostname and its first label (the short name, `hostname -s`)
//     in any letter case as whole words, and each --env VALUE (as "NAME=VALUE" at any
//     length, alone when it has 4 or more characters: shorter ones would scrub ordinary
//     words and numbers) replaced by their hashes.
class RedactionContext {
 public:
  explicit RedactionContext(const RedactionInputs& inputs);

  // Pass 1. Hashes the identifying members anywhere in `v` and remembers their values.
  void remember(json& v);
  void remember(Fields& f);
  void remember(Value& v);
  // A result's device (a UUID; "host" identifies nothing): hashed and remembered.
  void remember_device(std::string& device);
  void remember_device(Device& device);
  // The environment section's value of each --env NAME, whatever its length.
  void remember_env_values(json& environment) const;
  void remember_env_values(Environment& environment) const;
  // A hostname (and its first label) or another identifying value: hashed and remembered.
  std::string hash_hostname(const std::string& value);
  std::string hash_and_remember(const std::string& value);
  // Between the passes: longest values first, so that a hostname that contains another
  // value is replaced whole.
  void seal();

  // Pass 2. A string value (a word of the report's own vocabulary stays), an object key
  // (a field name stays when a hostname is an ordinary word), a JSON value with its keys.
  void scrub(std::string& text) const;
  std::string scrub_key(const std::string& key) const;
  void scrub(json& v) const;
  // Named members: names as keys, strings as values, lists and members inside as well.
  void scrub(Fields& f) const;
  void scrub(Value& v) const;

  // What the redaction covers (report.redaction.covers) and how its tokens were made.
  Redaction covered() const;
  // The token of a value, as this redaction writes it.
  std::string token(const std::string& value) const { return tokens_->token(value); }

  struct Literal {
    std::string folded;       // lower case: matched in any letter case
    std::string replacement;
    bool whole_word = false;  // hostnames: not glued to a letter or digit on either side
  };

 private:
  void add_literal(const std::string& value, const std::string& replacement, bool whole_word);
  std::string scrub_text(const std::string& text, bool is_key) const;

  RedactionInputs inputs_;
  std::shared_ptr<const RedactionTokens> tokens_;
  std::vector<Literal> literals_;
};

// Pass 1 and pass 2 on one result: its identifying members, then every string it holds.
void remember(Result& r, RedactionContext& ctx);
void redact(Result& r, const RedactionContext& ctx);
// The same on the machine's sections: hostname, UUIDs, PCI ids and serials are hashed.
void remember(HostInfo& h, RedactionContext& ctx);
void remember(DeviceInfo& d, RedactionContext& ctx);
void redact(HostInfo& h, const RedactionContext& ctx);
void redact(DriverInfo& d, const RedactionContext& ctx);
void redact(DeviceInfo& d, const RedactionContext& ctx);
void redact(Environment& e, const RedactionContext& ctx);

// Redacts a document in place and says what it covered.
Redaction redact(json& document, const RedactionInputs& inputs = {});

// The same on the report, member by member; records what was covered in r.redaction.
void redact(Report& r, const RedactionInputs& inputs = {});

}  // namespace cudadiag::report
