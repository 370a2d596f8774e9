#pragma once
// Tables for compare's renderers: Markdown tables to paste into a bug report and
// aligned text tables for a terminal, from rows of cells.
#include <sstream>
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::compare {

using Row = std::vector<std::string>;

// A titled table; `rows` may be empty (then `empty_text` is said instead, or nothing).
struct Section {
  std::string title;
  Row header;
  std::vector<Row> rows;
  std::string empty_text;  // said when rows is empty ("" omits the section)
  std::string footnote;    // said after the table (e.g. "and 40 more groups: JSON lists all")
};

// Environment fields shown even where every host agrees: what a reader asks first.
bool always_shown_field(const std::string& field);

// The member `key` of an object, or an empty array when it is absent (no copy).
const report::json& member_or_empty(const report::json& obj, const char* key);

// "—" for null, strings unquoted, anything else as JSON.
std::string text_of(const report::json& v);
// The elements of a JSON array as text, joined by sep.
std::string join_values(const report::json& arr, const std::string& sep);

void md_table(std::ostringstream& out, const Row& header, const std::vector<Row>& rows);
// As wide as the line, no cell cut; a list when it cannot fit (render_tables.cpp).
void text_table(std::ostringstream& out, const std::string& title, const Row& header,
                const std::vector<Row>& rows);

// A section as "### title" + table (Markdown) or title + aligned table (text).
void md_section(std::ostringstream& out, const Section& s);
void text_section(std::ostringstream& out, const Section& s);

}  // namespace cudadiag::compare
