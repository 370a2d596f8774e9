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
// ignored. A schema is checked whole before any document (check_schema): any other
// keyword, anywhere in it, throws std::invalid_argument, so that a schema never
// silently relies on something the validator does not check.
//
// Equality (enum, const) is JSON Schema's: numbers by value, objects in any member
// order. A string longer than 4096 bytes is reported as too long to check against a
// pattern (std::regex would recurse once per character).
//
// Why not valijson (Debian's libvalijson-dev 1.0, header-only): it passes the same
// JSON-Schema-Test-Suite groups, but it runs std::regex_search on strings of any length
// with no way to bound it or swap the engine, so a report holding a 200000-byte
// schema_version overflows the stack (SIGSEGV) where this validator names the string as
// too long; it knows drafts 3, 4 and 7 only (prefixItems and other unknown keywords are
// ignored silently, not refused); and its messages ("Failed to match against any enum
// values.", one per enclosing level) drop the value and the allowed set that ours give.
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::report {

// The embedded schema text, byte for byte the file in the repository.
const std::string& report_schema_text();
// The embedded schema, parsed once.
const json& report_schema();

// Refuses a schema that uses a keyword or a form outside the subset above, or a $ref
// that does not resolve: std::invalid_argument naming the place in the schema.
void check_schema(const json& schema);

// Validates `document` against `schema` (after check_schema). Returns one message per violation, each
// starting with the JSON pointer of the offending value, e.g.
//   "/results/3/outcome: 'bogus' is not one of ['ok', 'mismatch', ...]".
// The root is written "/". An empty vector means the document is valid.
std::vector<std::string> validate(const json& document, const json& schema);

// validate(document, report_schema()).
std::vector<std::string> validate_report(const json& document);

}  // namespace cudadiag::report
