#include "coredump/bytes.h"

#include <cstring>

namespace cudadiag::coredump {
namespace {

template <typename T>
std::optional<T> read_le(const Bytes& b, std::uint64_t offset) {
  if (!b.has(offset, sizeof(T))) return std::nullopt;
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(b.data()[offset + i]) << (8 * i));
  return v;
}

}  // namespace

std::optional<std::uint8_t> Bytes::u8(std::uint64_t offset) const { return read_le<std::uint8_t>(*this, offset); }
std::optional<std::uint16_t> Bytes::u16(std::uint64_t offset) const { return read_le<std::uint16_t>(*this, offset); }
std::optional<std::uint32_t> Bytes::u32(std::uint64_t offset) const { return read_le<std::uint32_t>(*this, offset); }
std::optional<std::uint64_t> Bytes::u64(std::uint64_t offset) const { return read_le<std::uint64_t>(*this, offset); }

std::optional<Bytes> Bytes::slice(std::uint64_t offset, std::uint64_t length) const {
  if (!has(offset, length)) return std::nullopt;
  return Bytes(data_ + offset, static_cast<std::size_t>(length));
}

std::optional<std::string_view> Bytes::cstring(std::uint64_t offset, std::size_t max_length) const {
  if (offset >= size_) return std::nullopt;
  const std::size_t avail = size_ - static_cast<std::size_t>(offset);
  const std::size_t n = avail < max_length ? avail : max_length;
  const auto* start = data_ + offset;
  const void* nul = std::memchr(start, 0, n);
  if (nul == nullptr) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(start),
                          static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - start));
}

std::optional<std::uint64_t> read_uleb(const Bytes& b, std::uint64_t* offset) {
  std::uint64_t value = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    const auto byte = b.u8(*offset);
    if (!byte) return std::nullopt;
    ++*offset;
    value |= static_cast<std::uint64_t>(*byte & 0x7f) << shift;
    if ((*byte & 0x80) == 0) return value;
  }
  return std::nullopt;
}

std::optional<std::int64_t> read_sleb(const Bytes& b, std::uint64_t* offset) {
  std::uint64_t value = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    const auto byte = b.u8(*offset);
    if (!byte) return std::nullopt;
    ++*offset;
    value |= static_cast<std::uint64_t>(*byte & 0x7f) << shift;
    if ((*byte & 0x80) == 0) {
      if (shift + 7 < 64 && (*byte & 0x40) != 0) value |= ~std::uint64_t{0} << (shift + 7);
      return static_cast<std::int64_t>(value);
    }
  }
  return std::nullopt;
}

}  // namespace cudadiag::coredump
