#pragma once
// The one site key the report tests redact with, so that their tokens are predictable
// (the expected files under tests/report/data hold tokens of this key).
#include <memory>
#include <string>

#include "report/redact.h"
#include "report/redact_token.h"

namespace cudadiag::test {

inline const std::shared_ptr<const report::RedactionTokens>& test_tokens() {
  static const auto t = std::make_shared<const report::RedactionTokens>(
      report::RedactionTokens::keyed("a test site key, not a secret"));
  return t;
}

// The token of a value under the test key.
inline std::string tok(const std::string& value) { return test_tokens()->token(value); }

// Redaction under the test key, with nothing else given.
inline report::RedactionInputs keyed() {
  report::RedactionInputs in;
  in.tokens = test_tokens();
  return in;
}

}  // namespace cudadiag::test
