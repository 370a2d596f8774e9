#pragma once
// compute-sanitizer's XML, read with pugixml (Debian's libpugixml-dev, linked from its
// static archive: the binary gains no shared-library dependency) into a small owned tree.
// Elements, attributes, text, CDATA, the five named entities and numeric character
// references are read; comments, processing instructions and a DOCTYPE are skipped.
// pugixml is lenient where compute-sanitizer never writes such input: an unknown or
// malformed entity reference is kept verbatim, and text outside the root element is
// dropped. Malformed or truncated input, a NUL byte, more than one root element or
// nesting deeper than 256 levels throws XmlError with the byte offset, line and column;
// it never crashes.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudadiag::sanitizer {

class XmlError : public std::runtime_error {
 public:
  XmlError(const std::string& what, size_t offset, size_t line, size_t column);
  size_t offset() const { return offset_; }
  size_t line() const { return line_; }
  size_t column() const { return column_; }

 private:
  size_t offset_, line_, column_;
};

struct XmlNode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string text;  // the element's own character data (CDATA included), untrimmed
  std::vector<XmlNode> children;

  // First child element with this name, or nullptr.
  const XmlNode* child(std::string_view child_name) const;
  // Trimmed text of the first child with this name; "" when absent.
  std::string child_text(std::string_view child_name) const;
  // First element with this name anywhere below (depth first), or nullptr.
  const XmlNode* find(std::string_view descendant_name) const;
  std::vector<const XmlNode*> children_named(std::string_view child_name) const;
  std::optional<std::string> attribute(std::string_view attr_name) const;
  // Own text plus all descendants' text, in document order (for free-text searches).
  std::string all_text() const;
  std::string trimmed_text() const;
};

// Parses a document and returns its root element.
XmlNode parse_xml(std::string_view text);

}  // namespace cudadiag::sanitizer
