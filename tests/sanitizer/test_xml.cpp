#include <catch2/catch.hpp>

#include <string>

#include "sanitizer/xml.h"

using namespace cudadiag::sanitizer;

TEST_CASE("xml: elements, attributes, text, entities, CDATA, comments, declaration", "[sanitizer][xml]") {
  const auto root = parse_xml(
      "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- lead comment -->\n"
      "<a x='1' y=\"two &amp; three\"><b>hello &lt;world&gt; &#65;&#x42;</b>"
      "<!-- inner --><c/><b><![CDATA[raw <text> & stuff]]></b><d>\xc3\xa9</d></a>\n<!-- tail -->");
  CHECK(root.name == "a");
  CHECK(root.attribute("x").value() == "1");
  CHECK(root.attribute("y").value() == "two & three");
  CHECK_FALSE(root.attribute("z").has_value());
  REQUIRE(root.children.size() == 4);
  CHECK(root.child_text("b") == "hello <world> AB");
  CHECK(root.children_named("b").size() == 2);
  CHECK(root.children_named("b")[1]->text == "raw <text> & stuff");
  CHECK(root.child("c") != nullptr);
  CHECK(root.child("c")->children.empty());
  CHECK(root.child_text("d") == "\xc3\xa9");
  CHECK(root.child("nope") == nullptr);
}

TEST_CASE("xml: DOCTYPE and processing instructions are skipped", "[sanitizer][xml]") {
  const auto root = parse_xml("<!DOCTYPE r [ <!ELEMENT r ANY> ]><?pi data?><r><?inner x?>t</r>");
  CHECK(root.name == "r");
  CHECK(root.trimmed_text() == "t");
}

TEST_CASE("xml: find and all_text search descendants", "[sanitizer][xml]") {
  const auto root = parse_xml("<r><a><b><c>deep</c></b></a><z> tail </z></r>");
  REQUIRE(root.find("c") != nullptr);
  CHECK(root.find("c")->trimmed_text() == "deep");
  CHECK(root.all_text() == "deep tail");
}

TEST_CASE("xml: malformed input names the line and column", "[sanitizer][xml]") {
  auto error_of = [](const std::string& doc) -> XmlError {
    try {
      parse_xml(doc);
    } catch (const XmlError& e) {
      return e;
    }
    FAIL("no XmlError for: " << doc);
    return XmlError("", 0, 0, 0);
  };
  {
    const auto e = error_of("<a>\n  <b>text\n");
    CHECK(e.line() == 2);  // the input ends with <a> (and <b>) still open
    CHECK_THAT(std::string(e.what()), Catch::Contains("<a> is not closed") && Catch::Contains("line 2"));
  }
  {
    const auto e = error_of("<a><b></c></a>");
    CHECK_THAT(std::string(e.what()), Catch::Contains("closing tag </c> does not match"));
    CHECK(e.offset() == 8);
    CHECK_THAT(error_of("<a>text").what(), Catch::Contains("<a> is not closed"));
  }
  {
    const auto e = error_of(std::string("<a>x\0y</a>", 10));
    CHECK(e.offset() == 4);
    CHECK_THAT(std::string(e.what()), Catch::Contains("NUL byte"));
  }
  {
    const auto e = error_of("<a></a>\n<b></b>");
    CHECK(e.line() == 2);
    CHECK_THAT(std::string(e.what()), Catch::Contains("second element <b>"));
  }
  CHECK_THROWS_AS(parse_xml(""), XmlError);
  CHECK_THROWS_AS(parse_xml("   "), XmlError);
  CHECK_THROWS_AS(parse_xml("<!-- only a comment -->"), XmlError);
  CHECK_THROWS_AS(parse_xml("<a x=1></a>"), XmlError);
  CHECK_THROWS_AS(parse_xml("<a x='1></a>"), XmlError);
  CHECK_THROWS_AS(parse_xml("<a><![CDATA[never closed</a>"), XmlError);
  CHECK_THROWS_AS(parse_xml("<a><!-- never closed</a>"), XmlError);
  CHECK_THROWS_AS(parse_xml("<a"), XmlError);
  CHECK_THROWS_AS(parse_xml("<a></a"), XmlError);
}

TEST_CASE("xml: malformed references are kept verbatim, text outside the root is dropped", "[sanitizer][xml]") {
  // pugixml's leniency, on input compute-sanitizer never writes: the text survives.
  CHECK(parse_xml("<a>&#xZZ;</a>").text == "&#xZZ;");
  CHECK(parse_xml("<a>&amp</a>").text == "&amp");
  CHECK(parse_xml("<a>&nbsp;</a>").text == "&nbsp;");
  const auto root = parse_xml("text<a>in</a>tail");
  CHECK(root.name == "a");
  CHECK(root.all_text() == "in");
}

TEST_CASE("xml: every truncation of a document is an error, never a crash", "[sanitizer][xml]") {
  const std::string doc =
      "<?xml version=\"1.0\"?><r k=\"v\"><x><![CDATA[c]]></x><!-- c --><y a='&lt;'>&amp;</y></r>";
  for (size_t n = 0; n < doc.size() - 1; ++n) {
    INFO("prefix length " << n);
    CHECK_THROWS_AS(parse_xml(doc.substr(0, n)), XmlError);
  }
  CHECK_NOTHROW(parse_xml(doc));
}

TEST_CASE("xml: absurd nesting is refused", "[sanitizer][xml]") {
  std::string doc;
  for (int i = 0; i < 5000; ++i) doc += "<a>";
  for (int i = 0; i < 5000; ++i) doc += "</a>";
  CHECK_THROWS_WITH(parse_xml(doc), Catch::Contains("nested deeper"));
  // 256 levels below the root are read.
  std::string ok;
  for (int i = 0; i < 257; ++i) ok += "<a>";
  for (int i = 0; i < 257; ++i) ok += "</a>";
  CHECK_NOTHROW(parse_xml(ok));
}
