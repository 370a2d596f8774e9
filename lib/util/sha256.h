#pragma once
// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for redaction tokens that cannot be
// reversed by hashing a dictionary of hostnames without the site's key. Small and
// dependency-free: the binary links no crypto library.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cudadiag {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  Sha256Digest finish();  // the object is spent afterwards

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

Sha256Digest sha256(std::string_view data);
Sha256Digest hmac_sha256(std::string_view key, std::string_view message);

// Lower-case hex of the first `bytes` bytes.
std::string to_hex(const Sha256Digest& d, size_t bytes = 32);

}  // namespace cudadiag
