#pragma once
// The report's JSON Schema (lib/report/report.schema.json, embedded at build time) and a
// small validator for the draft 2020-12 subset that schema uses.
//
// Supported keywords: type (a name or an array of names), properties, required,
// additionalProperties (bool or schema), items, prefixItems, enum, const, pattern
// (ECMAScript, unanchored as in JSON Schema), minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, minItems, maxItems, minLength, maxLength, allOf, anyOf, oneOf, not,
// and $ref to a JSON pointer inside the same schema ("#/$defs/name").
// Annotations ($schema, $id, $comment, title, description, default, examples) are
// ignored; any other keyword throws std::invalid_argument, so that a schema never
// silently relies on something the validator does not check.
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::report {

// The embedded schema text, byte for byte the file in the repository.
const std::string& report_schema_text();
// The embedded schema, parsed once.
const json& report_schema();

// Validates `document` against `schema`. Returns one message per violation, each
// starting with the JSON pointer of the offending value, e.g.
//   "/results/3/outcome: 'bogus' is not one of ['ok', 'mismatch', ...]".
// The root is written "/". An empty vector means the document is valid.
std::vector<std::string> validate(const json& document, const json& schema);

// validate(document, report_schema()).
std::vector<std::string> validate_report(const json& document);

}  // namespace cudadiag::report
