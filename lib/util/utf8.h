#pragma once
// Text from outside (a program's output, the kernel log) can hold any bytes; the JSON
// writer accepts only valid UTF-8. Every string copied from such text into a report
// goes through this first.
#include <string>
#include <string_view>

namespace cudadiag {

// The text with every ill-formed UTF-8 sequence (overlong forms, surrogates and code
// points above U+10FFFF included) replaced by U+FFFD: utfcpp's utf8::replace_invalid,
// which writes one U+FFFD per stray byte and one per ill-formed sequence (a lead byte
// and the continuation bytes after it). Linear in the input; valid text comes back
// unchanged.
std::string to_valid_utf8(std::string_view text);

// At most max_bytes of the text, cut at a code point boundary, then made valid.
std::string utf8_prefix(std::string_view text, std::size_t max_bytes);

}  // namespace cudadiag
