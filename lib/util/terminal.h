#pragma once
// What the environment and the terminal say about how text should look:
//   colour  NO_COLOR (no-color.org): set and not empty turns colour off; empty or unset
//           leaves it to the terminal (and --no-color).
//   width   COLUMNS when it is a number, else the terminal's own width, else 80.
#include <cstddef>

namespace cudadiag::text {

// NO_COLOR's value (nullptr when unset): true when it asks for no colour.
bool no_color(const char* value);
// The same, read from this process's environment.
bool no_color_from_env();

// The narrowest and widest text the views lay out; a width outside is clamped.
inline constexpr std::size_t kMinColumns = 40;
inline constexpr std::size_t kMaxColumns = 500;

// The width for text: COLUMNS's value (nullptr when unset) when it is a whole number,
// else `terminal` (0: not a terminal, or its width unknown), else 80; clamped to
// [kMinColumns, kMaxColumns].
std::size_t columns_for(const char* columns_env, std::size_t terminal);
// The width of the terminal on `fd` (TIOCGWINSZ), 0 when it is none or says nothing.
std::size_t terminal_width(int fd);
// columns_for(getenv("COLUMNS"), terminal_width(fd)).
std::size_t columns_from_env(int fd);

}  // namespace cudadiag::text
