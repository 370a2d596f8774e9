#include "sanitizer/xml.h"

#include <cctype>
#include <cstdint>

namespace cudadiag::sanitizer {
namespace {

constexpr int kMaxDepth = 256;  // deeper nesting is refused instead of exhausting the stack

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) {
  return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  XmlNode document() {
    skip_misc();
    if (eof()) fail("no root element");
    if (peek() != '<') fail("text before the root element");
    XmlNode root = element(0);
    skip_misc();
    if (!eof()) fail("content after the root element");
    return root;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& what) const { fail_at(what, pos_); }
  [[noreturn]] void fail_at(const std::string& what, size_t at) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw XmlError(what, at, line, col);
  }

  bool eof() const { return pos_ >= s_.size(); }
  char peek() const { return s_[pos_]; }
  bool starts(std::string_view t) const { return s_.substr(pos_, t.size()) == t; }
  void expect(std::string_view t, const char* what) {
    if (eof()) fail(std::string("unexpected end of document, expected ") + what);
    if (!starts(t)) fail(std::string("expected ") + what);
    pos_ += t.size();
  }
  void skip_ws() {
    while (!eof() && std::isspace(static_cast<unsigned char>(peek()))) ++pos_;
  }
  // Skips to just after `terminator`; fails naming `what` when the document ends first.
  void skip_past(std::string_view terminator, const char* what) {
    const size_t start = pos_;
    const size_t at = s_.find(terminator, pos_);
    if (at == std::string_view::npos) fail_at(std::string("unterminated ") + what, start);
    pos_ = at + terminator.size();
  }

  // Whitespace, comments, processing instructions and DOCTYPE around the root.
  void skip_misc() {
    for (;;) {
      skip_ws();
      if (starts("<?")) {
        skip_past("?>", "processing instruction");
      } else if (starts("<!--")) {
        skip_past("-->", "comment");
      } else if (starts("<!DOCTYPE")) {
        skip_doctype();
      } else {
        return;
      }
    }
  }

  void skip_doctype() {
    const size_t start = pos_;
    int bracket = 0;
    while (!eof()) {
      const char c = peek();
      ++pos_;
      if (c == '[') ++bracket;
      if (c == ']') --bracket;
      if (c == '>' && bracket <= 0) return;
    }
    fail_at("unterminated DOCTYPE", start);
  }

  std::string name() {
    if (eof()) fail("unexpected end of document, expected a name");
    if (!is_name_start(peek())) fail("expected a name");
    const size_t b = pos_;
    while (!eof() && is_name_char(peek())) ++pos_;
    return std::string(s_.substr(b, pos_ - b));
  }

  // Decodes one reference starting at '&'; appends to out.
  void reference(std::string& out) {
    const size_t start = pos_;
    const size_t semi = s_.find(';', pos_);
    if (semi == std::string_view::npos || semi - pos_ > 12) fail_at("unterminated entity reference", start);
    const std::string_view ent = s_.substr(pos_ + 1, semi - pos_ - 1);
    pos_ = semi + 1;
    if (ent == "lt") out += '<';
    else if (ent == "gt") out += '>';
    else if (ent == "amp") out += '&';
    else if (ent == "quot") out += '"';
    else if (ent == "apos") out += '\'';
    else if (!ent.empty() && ent[0] == '#') {
      uint32_t cp = 0;
      const bool hex = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X');
      const std::string_view digits = ent.substr(hex ? 2 : 1);
      if (digits.empty()) fail_at("empty character reference", start);
      for (char c : digits) {
        int v;
        if (std::isdigit(static_cast<unsigned char>(c))) v = c - '0';
        else if (hex && std::isxdigit(static_cast<unsigned char>(c))) v = std::tolower(c) - 'a' + 10;
        else fail_at("bad character reference '&" + std::string(ent) + ";'", start);
        cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(v);
        if (cp > 0x10FFFF) fail_at("character reference out of range", start);
      }
      append_utf8(out, cp);
    } else {
      // Unknown named entity: keep it verbatim rather than lose the text.
      out += '&';
      out += ent;
      out += ';';
    }
  }

  std::string attribute_value() {
    if (eof()) fail("unexpected end of document in an attribute");
    const char q = peek();
    if (q != '"' && q != '\'') fail("expected a quoted attribute value");
    const size_t start = pos_;
    ++pos_;
    std::string v;
    while (!eof() && peek() != q) {
      if (peek() == '&') reference(v);
      else if (peek() == '<') fail("'<' in an attribute value");
      else v += s_[pos_++];
    }
    if (eof()) fail_at("unterminated attribute value", start);
    ++pos_;
    return v;
  }

  XmlNode element(int depth) {
    if (depth > kMaxDepth) fail("elements nested deeper than 256 levels");
    const size_t start = pos_;
    expect("<", "'<'");
    XmlNode node;
    node.name = name();
    for (;;) {
      const size_t before = pos_;
      skip_ws();
      if (eof()) fail_at("unterminated start tag <" + node.name + ">", start);
      if (starts("/>")) {
        pos_ += 2;
        return node;
      }
      if (peek() == '>') {
        ++pos_;
        break;
      }
      if (pos_ == before) fail("expected whitespace before an attribute");
      std::string attr = name();
      skip_ws();
      expect("=", "'=' after attribute name");
      skip_ws();
      node.attributes.emplace_back(std::move(attr), attribute_value());
    }
    content(node, depth, start);
    return node;
  }

  void content(XmlNode& node, int depth, size_t start) {
    for (;;) {
      if (eof()) fail_at("element <" + node.name + "> is not closed (document truncated?)", start);
      const char c = peek();
      if (c == '<') {
        if (starts("</")) {
          pos_ += 2;
          const size_t name_at = pos_;
          const std::string closing = name();
          if (closing != node.name)
            fail_at("closing tag </" + closing + "> does not match <" + node.name + ">", name_at);
          skip_ws();
          expect(">", "'>' to end the closing tag");
          return;
        }
        if (starts("<!--")) {
          skip_past("-->", "comment");
        } else if (starts("<![CDATA[")) {
          const size_t cstart = pos_;
          pos_ += 9;
          const size_t end = s_.find("]]>", pos_);
          if (end == std::string_view::npos) fail_at("unterminated CDATA section", cstart);
          node.text.append(s_.substr(pos_, end - pos_));
          pos_ = end + 3;
        } else if (starts("<?")) {
          skip_past("?>", "processing instruction");
        } else {
          node.children.push_back(element(depth + 1));
        }
      } else if (c == '&') {
        reference(node.text);
      } else {
        node.text += c;
        ++pos_;
      }
    }
  }
};

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

XmlNode parse_xml(std::string_view text) { return Parser(text).document(); }

}  // namespace cudadiag::sanitizer
