#pragma once
// Bounded reads over untrusted bytes (a GPU core dump, a cubin inside it). Every read is
// checked against the size; an offset or length that does not fit yields nothing, never a
// read past the end. Offsets are 64-bit and sums are checked for overflow.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cudadiag::coredump {

// A dump that cannot be read as one: truncated, corrupted, or not a GPU core dump at all.
// The message is "unreadable dump: <what is wrong>" (bad input: exit 2).
class UnreadableDump : public std::runtime_error {
 public:
  explicit UnreadableDump(const std::string& what) : std::runtime_error("unreadable dump: " + what) {}
};

class Bytes {
 public:
  Bytes() = default;
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  explicit Bytes(std::string_view s) : data_(reinterpret_cast<const std::uint8_t*>(s.data())), size_(s.size()) {}

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::uint8_t* data() const { return data_; }

  // True when [offset, offset + length) lies inside (no overflow).
  bool has(std::uint64_t offset, std::uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }
  std::optional<std::uint8_t> u8(std::uint64_t offset) const;
  std::optional<std::uint16_t> u16(std::uint64_t offset) const;  // little-endian
  std::optional<std::uint32_t> u32(std::uint64_t offset) const;
  std::optional<std::uint64_t> u64(std::uint64_t offset) const;
  // The sub-range, or nothing when it does not fit.
  std::optional<Bytes> slice(std::uint64_t offset, std::uint64_t length) const;
  // The NUL-terminated string at offset, at most max_length bytes; nothing when the
  // offset is outside or no NUL comes within the bound.
  std::optional<std::string_view> cstring(std::uint64_t offset, std::size_t max_length = 4096) const;

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// Unsigned LEB128 at *offset (advanced); nothing when it runs past the end or over 64 bits.
std::optional<std::uint64_t> read_uleb(const Bytes& b, std::uint64_t* offset);
std::optional<std::int64_t> read_sleb(const Bytes& b, std::uint64_t* offset);

}  // namespace cudadiag::coredump
