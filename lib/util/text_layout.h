#pragma once
// Text laid out for a person at a terminal: every text view (reports, the fault site,
// the catalog, --help) is designed at 80 columns. Long values wrap with a hanging indent
// under their label, tables abbreviate their widest columns; the JSON keeps every detail.
// Widths are display columns of UTF-8 text, not bytes.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::text {

// The width every text view is designed for.
inline constexpr std::size_t kColumns = 80;

// Display columns of UTF-8 text: East Asian wide and emoji code points count 2,
// combining marks and zero-width characters 0, ANSI colour sequences (ESC [ ... m) 0,
// every other code point (an invalid byte included) 1.
std::size_t display_width(std::string_view s);

// The text broken into lines of at most `width` columns: at spaces where it can, inside
// a word longer than the width where it must. Newlines in the text are kept as breaks;
// spaces at a break are dropped. An empty text gives one empty line.
std::vector<std::string> wrap(std::string_view text, std::size_t width);

// `first_prefix` + the text wrapped so that no line passes `width`; continuation lines
// start with `rest_prefix`. When `first_prefix` leaves fewer than `min_text` columns,
// the text starts on the next line under `rest_prefix`. Every line ends with '\n'.
std::string hanging(std::string_view first_prefix, std::string_view rest_prefix, std::string_view text,
                    std::size_t width = kColumns, std::size_t min_text = 24);
// The same with continuation lines under the text's first column.
std::string hanging(std::string_view first_prefix, std::string_view text, std::size_t width = kColumns);

// `label` padded to `label_width`, two spaces, then the value wrapped under itself:
//   "  reason   the fault at 0x7f... is between 0 and 4095 bytes past the end of\n"
//   "           allocation #7 ...\n"
// An empty value prints nothing (no empty labelled line).
std::string labelled(std::string_view indent, std::string_view label, std::size_t label_width,
                     std::string_view value, std::size_t width = kColumns);

// At most `width` columns of `s`; a cut text ends with `mark` (counted in the width).
std::string abbreviate(std::string_view s, std::size_t width, std::string_view mark = "~");

std::string pad_right(std::string_view s, std::size_t width);
std::string pad_left(std::string_view s, std::size_t width);

// Column widths for a table that must fit `total` columns with `gap` columns between
// cells: the natural widths when they fit, else the widest columns shrunk, one column at
// a time, never below their `minimum`. The result may still pass `total` when the
// minimums do.
std::vector<std::size_t> fit_columns(std::vector<std::size_t> natural, const std::vector<std::size_t>& minimum,
                                     std::size_t gap, std::size_t total = kColumns);

}  // namespace cudadiag::text
