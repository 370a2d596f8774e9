#pragma once
// Text laid out for a person at a terminal: every text view (reports, the fault site,
// the catalog, --help) is designed at 80 columns and follows the width the binary sets
// (set_columns: COLUMNS, else the terminal's, else 80). Long values wrap with a hanging
// indent under their label, at spaces only: a word (a case id, a path, a kernel, an
// address) is never cut nor broken, and one wider than the line stands alone on its
// line, past the width. Widths are display columns of UTF-8 text, not bytes.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::text {

// The width every text view is designed for, and the one used when nothing sets another.
inline constexpr std::size_t kColumns = 80;

// The width text is laid out for now: kColumns until set_columns.
std::size_t columns();
// Set once at start (the binary: from COLUMNS or the terminal, util/terminal.h).
void set_columns(std::size_t width);

// Display columns of UTF-8 text: East Asian wide and emoji code points count 2,
// combining marks and zero-width characters 0, ANSI colour sequences (ESC [ ... m) 0,
// every other code point (an invalid byte included) 1.
std::size_t display_width(std::string_view s);

// The text broken into lines of at most `width` columns, at spaces only: a word wider
// than the width is kept whole on a line of its own (that line is wider). Newlines in the
// text are kept as breaks; spaces at a break are dropped. An empty text gives one empty line.
std::vector<std::string> wrap(std::string_view text, std::size_t width);

// `first_prefix` + the text wrapped so that no line passes `width`; continuation lines
// start with `rest_prefix`. When `first_prefix` leaves fewer than `min_text` columns,
// the text starts on the next line under `rest_prefix`. Every line ends with '\n'.
std::string hanging(std::string_view first_prefix, std::string_view rest_prefix, std::string_view text,
                    std::size_t width = columns(), std::size_t min_text = 24);
// The same with continuation lines under the text's first column.
std::string hanging(std::string_view first_prefix, std::string_view text, std::size_t width = columns());

// `label` padded to `label_width`, two spaces, then the value wrapped under itself:
//   "  reason   the fault at 0x7f... is between 0 and 4095 bytes past the end of\n"
//   "           allocation #7 ...\n"
// An empty value prints nothing (no empty labelled line).
std::string labelled(std::string_view indent, std::string_view label, std::size_t label_width,
                     std::string_view value, std::size_t width = columns());

// At most `width` columns of `s`; a cut text ends with `mark` (counted in the width).
std::string abbreviate(std::string_view s, std::size_t width, std::string_view mark = "~");

std::string pad_right(std::string_view s, std::size_t width);
std::string pad_left(std::string_view s, std::size_t width);

// Column widths for a table that must fit `total` columns with `gap` columns between
// cells: the natural widths when they fit, else the widest columns shrunk, one column at
// a time, never below their `minimum`. The result may still pass `total` when the
// minimums do.
std::vector<std::size_t> fit_columns(std::vector<std::size_t> natural, const std::vector<std::size_t>& minimum,
                                     std::size_t gap, std::size_t total = columns());

}  // namespace cudadiag::text
