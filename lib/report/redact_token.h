#pragma once
// How --redact turns an identifying value into a token. Tokens are HMAC-SHA-256 under a
// key, truncated to 64 bits ("redacted:" and 16 hex digits): without the key, a
// dictionary of hostnames cannot be hashed into them. With a per-site key (a file, or
// the environment) the same host gets the same token in every report written with that
// key, so redacted reports of one site still pair up; without one, each report gets a
// fresh random key: a host keeps one token within the report, and reports cannot be
// linked by their tokens. The report records which (report::Redaction::mode, key_id).
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "report/redaction_mode.h"

namespace cudadiag::report {

inline constexpr const char* kTokenPrefix = "redacted:";
inline constexpr size_t kTokenHexDigits = 16;       // 64 bits of the HMAC
inline constexpr size_t kMinimumKeyBytes = 16;
inline constexpr const char* kRedactKeyFileEnv = "CUDADIAG_REDACT_KEY_FILE";
inline constexpr const char* kRedactKeyEnv = "CUDADIAG_REDACT_KEY";

class RedactionTokens {
 public:
  // Tokens under the site's key (its bytes as given).
  static RedactionTokens keyed(std::string key);
  // Tokens under a fresh random key that is never written anywhere.
  static RedactionTokens per_report();

  // "redacted:" + the first 64 bits of HMAC-SHA-256(key, value), in hex.
  std::string token(std::string_view value) const;
  bool is_keyed() const { return keyed_; }
  // report.redaction.mode.
  RedactionMode mode() const { return keyed_ ? RedactionMode::keyed : RedactionMode::per_report; }
  // Keyed: the first 64 bits of HMAC-SHA-256(key, "cudadiag-key-id") in hex, which names
  // the key without giving it away; "" per report.
  const std::string& key_id() const { return key_id_; }

 private:
  RedactionTokens(std::string key, bool keyed);
  std::string key_;
  bool keyed_ = false;
  std::string key_id_;
};

// The tokens --redact uses: the key from `key_file` (--redact-key FILE), else from the
// file named by CUDADIAG_REDACT_KEY_FILE, else CUDADIAG_REDACT_KEY's value; none of them:
// per-report tokens. A key file must be a regular file that is not readable by every
// user; a key (trailing newline dropped) must have at least kMinimumKeyBytes bytes.
// Anything else throws UsageError naming the file or the variable and what is wrong.
std::shared_ptr<const RedactionTokens> redaction_tokens(const std::string& key_file,
                                                        const std::function<const char*(const char*)>& lookup);

}  // namespace cudadiag::report
