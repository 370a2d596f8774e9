#pragma once
// The commands whose text a person reads, each run through the real binary on saved
// fixtures (or on this machine, which may have no GPU: the no-GPU text is a view too).
#include <filesystem>
#include <string>
#include <vector>

#include "tests/hostile/run_binary.h"
#include "util/text_layout.h"

namespace cudadiag::test {

inline std::filesystem::path source_dir() { return CUDADIAG_SOURCE_DIR; }

// A line past the width is allowed only as the layout makes it: one word (a path, a
// symbol, program output without spaces) too wide for its column, alone after its label
// or indent, the rest of the line within the width. Nothing else may pass it.
inline bool unbreakable_overflow(const std::string& line, std::size_t width) {
  const auto space = line.find_last_of(' ');
  if (space == std::string::npos) return true;  // one word: nowhere to break it
  const std::size_t before = text::display_width(line.substr(0, space + 1));
  const std::size_t word = text::display_width(line.substr(space + 1));
  return before <= width && before + word > width && word > 0;
}

// Every line wider than `width` display columns that is not an unbreakable word, with
// its width: "[93] text".
inline std::vector<std::string> wide_lines(const std::string& text, std::size_t width = text::kColumns) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(start, nl - start);
    const std::size_t w = text::display_width(line);
    if (w > width && !unbreakable_overflow(line, width)) out.push_back("[" + std::to_string(w) + "] " + line);
    start = nl + 1;
  }
  return out;
}

// Words the layout cut short ("index_select.head~", "error:m…"): a cut identifier names
// nothing. Empty when there is none.
inline std::vector<std::string> cut_words(const std::string& text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\n') ++j;
    const std::string word = text.substr(i, j - i);
    const bool tilde = word.size() > 1 && word.back() == '~';
    const bool ellipsis = word.size() > 3 && word.compare(word.size() - 3, 3, "\xE2\x80\xA6") == 0;
    if (tilde || ellipsis) out.push_back(word);
    i = j;
  }
  return out;
}

// The subcommands a user sees in `cudadiag --help` (hidden ones are not listed there).
inline std::vector<std::string> listed_subcommands(const std::filesystem::path& dir) {
  const Run r = run_binary({"--help"}, dir);
  std::vector<std::string> out;
  const auto at = r.out.find("Subcommands:\n");
  if (at == std::string::npos) return out;
  std::size_t start = at + 13;
  while (start < r.out.size() && r.out[start] != '\n') {
    std::size_t nl = r.out.find('\n', start);
    if (nl == std::string::npos) nl = r.out.size();
    const std::string line = r.out.substr(start, nl - start);
    if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
    start = nl + 1;
  }
  return out;
}

}  // namespace cudadiag::test
