#include "sanitizer/xml.h"

#include <cctype>

#include <pugixml.hpp>

namespace cudadiag::sanitizer {
namespace {

constexpr int kMaxDepth = 256;  // deeper nesting is refused instead of exhausting the stack

// Character data kept as written: no end-of-line or attribute-whitespace normalisation,
// and whitespace-only text is kept (XmlNode::text is untrimmed).
constexpr unsigned kParseOptions = pugi::parse_cdata | pugi::parse_escapes | pugi::parse_ws_pcdata;

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

[[noreturn]] void fail_at(std::string_view text, const std::string& what, size_t at) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  throw XmlError(what, at, line, col);
}

bool is_name_char(char c) {
  return !std::isspace(static_cast<unsigned char>(c)) && c != '<' && c != '>' && c != '/';
}

// The name of the closing tag that pugixml found mismatched at `at` (inside its name),
// or "" when `at` is in no closing tag: the input ended with elements still open.
std::string closing_name_at(std::string_view text, size_t at) {
  if (at >= text.size() || !is_name_char(text[at])) return "";
  size_t begin = at, end = at;
  while (begin > 0 && is_name_char(text[begin - 1])) --begin;
  if (begin < 2 || text.substr(begin - 2, 2) != "</") return "";
  while (end < text.size() && is_name_char(text[end])) ++end;
  return std::string(text.substr(begin, end - begin));
}

// pugixml's status as a sentence naming what is wrong; the position comes with XmlError.
std::string describe(const pugi::xml_parse_result& r, std::string_view text, const pugi::xml_document& partial) {
  const auto at = static_cast<size_t>(r.offset);
  switch (r.status) {
    case pugi::status_no_document_element:
      return "no root element";
    case pugi::status_bad_pi:
      return "unterminated or malformed processing instruction";
    case pugi::status_bad_comment:
      return "unterminated or malformed comment";
    case pugi::status_bad_cdata:
      return "unterminated CDATA section";
    case pugi::status_bad_doctype:
      return "unterminated or malformed DOCTYPE";
    case pugi::status_bad_start_element:
      return "unterminated or malformed start tag";
    case pugi::status_bad_attribute:
      return "malformed attribute (a name, '=' and a value in closed quotes)";
    case pugi::status_bad_end_element:
      return "unterminated or malformed closing tag";
    case pugi::status_end_element_mismatch: {
      const std::string closing = closing_name_at(text, at);
      if (!closing.empty()) return "closing tag </" + closing + "> does not match the open element";
      // The input ended inside the root element (and maybe deeper ones).
      return "element <" + std::string(partial.document_element().name()) + "> is not closed (document truncated?)";
    }
    default:
      return r.description();
  }
}

XmlNode to_node(const pugi::xml_node& e, int depth, std::string_view text) {
  if (depth > kMaxDepth)
    fail_at(text, "elements nested deeper than 256 levels", static_cast<size_t>(e.offset_debug()));
  XmlNode node;
  node.name = e.name();
  for (const pugi::xml_attribute& a : e.attributes()) node.attributes.emplace_back(a.name(), a.value());
  for (const pugi::xml_node& c : e.children()) {
    if (c.type() == pugi::node_element) {
      node.children.push_back(to_node(c, depth + 1, text));
    } else if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
      node.text += c.value();
    }
  }
  return node;
}

void collect_text(const XmlNode& n, std::string& out) {
  const std::string t = trim(n.text);
  if (!t.empty()) {
    if (!out.empty()) out += ' ';
    out += t;
  }
  for (const auto& c : n.children) collect_text(c, out);
}

}  // namespace

XmlError::XmlError(const std::string& what, size_t offset, size_t line, size_t column)
    : std::runtime_error("XML error at line " + std::to_string(line) + ", column " +
                         std::to_string(column) + " (byte " + std::to_string(offset) + "): " + what),
      offset_(offset), line_(line), column_(column) {}

const XmlNode* XmlNode::child(std::string_view child_name) const {
  for (const auto& c : children)
    if (c.name == child_name) return &c;
  return nullptr;
}

std::string XmlNode::child_text(std::string_view child_name) const {
  const XmlNode* c = child(child_name);
  return c ? c->trimmed_text() : "";
}

const XmlNode* XmlNode::find(std::string_view descendant_name) const {
  for (const auto& c : children) {
    if (c.name == descendant_name) return &c;
    if (const XmlNode* d = c.find(descendant_name)) return d;
  }
  return nullptr;
}

std::vector<const XmlNode*> XmlNode::children_named(std::string_view child_name) const {
  std::vector<const XmlNode*> out;
  for (const auto& c : children)
    if (c.name == child_name) out.push_back(&c);
  return out;
}

std::optional<std::string> XmlNode::attribute(std::string_view attr_name) const {
  for (const auto& [k, v] : attributes)
    if (k == attr_name) return v;
  return std::nullopt;
}

std::string XmlNode::all_text() const {
  std::string out;
  collect_text(*this, out);
  return out;
}

std::string XmlNode::trimmed_text() const { return trim(text); }

XmlNode parse_xml(std::string_view text) {
  // pugixml's strings are NUL-terminated: a NUL byte would silently end the document there.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) fail_at(text, "NUL byte in the document", nul);
  pugi::xml_document doc;
  const pugi::xml_parse_result r = doc.load_buffer(text.data(), text.size(), kParseOptions, pugi::encoding_utf8);
  if (!r) fail_at(text, describe(r, text, doc), static_cast<size_t>(r.offset));
  pugi::xml_node root;
  for (const pugi::xml_node& c : doc.children()) {
    if (c.type() != pugi::node_element) continue;
    if (root) fail_at(text, "content after the root element: a second element <" + std::string(c.name()) + ">",
                      static_cast<size_t>(c.offset_debug()));
    root = c;
  }
  return to_node(root, 0, text);
}

}  // namespace cudadiag::sanitizer
