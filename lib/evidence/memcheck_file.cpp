#include "evidence/memcheck_file.h"

#include <fstream>
#include <sstream>

#include "sanitizer/xml.h"

namespace cudadiag::evidence {

MemcheckFile read_memcheck_file(const std::string& xml_path) {
  MemcheckFile out;
  std::ifstream in(xml_path, std::ios::binary);
  if (!in.good()) {
    out.missing = true;
    return out;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    out.report = sanitizer::parse_memcheck_xml(ss.str());
  } catch (const sanitizer::XmlError& e) {
    out.unreadable = e.what();
  }
  return out;
}

std::string problem_text(const MemcheckFile& f, const std::string& xml_path) {
  if (f.missing) return "compute-sanitizer wrote no XML (" + xml_path + ")";
  if (!f.report) return xml_path + ": unreadable XML: " + f.unreadable;
  return "";
}

}  // namespace cudadiag::evidence
