#pragma once
// Text from the outside world (a hostname, a case name, a key in a suite, a child's
// stderr) shown on a terminal or pasted as Markdown must not act on the terminal: an
// ESC starts a control sequence (clear the screen, retitle the window, fake a line), a
// NUL or a C1 byte confuses tools downstream, a bidi override makes a line read in
// another order than it is stored. printable() makes such text inert and visible; the
// text and Markdown renderers and the error printer pass every piece of outside text
// through it. JSON output never does: it escapes by itself.
#include <string>
#include <string_view>

namespace cudadiag {

// C0 controls (newline and tab included), DEL and C1 controls become "\x1b", "\x7f",
// "\u009b"; the bidirectional formatting characters (U+202A..U+202E, U+2066..U+2069,
// U+200E, U+200F, U+061C), which reorder what is shown, become "\u202e"; a byte that is
// not part of valid UTF-8 becomes "\xff". Everything else, multi-byte UTF-8 included,
// is kept as is.
std::string printable(std::string_view text);

}  // namespace cudadiag
