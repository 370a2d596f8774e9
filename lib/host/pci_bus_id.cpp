#include "host/pci_bus_id.h"

#include <algorithm>
#include <cctype>

namespace cudadiag::host {
namespace {

bool hex_digits(const std::string& s, std::size_t lo, std::size_t hi) {
  return s.size() >= lo && s.size() <= hi &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

std::string normalize_pci_bus_id(const std::string& id) {
  std::string s;
  for (const char c : id) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const auto colon = s.find(':');
  // domain:bus:device.function; NVML pads the domain to 8 digits, CUDA to 4.
  if (colon != std::string::npos && s.find(':', colon + 1) != std::string::npos && colon > 4) {
    const std::string domain = s.substr(0, colon);
    const auto nonzero = domain.find_first_not_of('0');
    const std::string trimmed = nonzero == std::string::npos ? "" : domain.substr(nonzero);
    if (trimmed.size() <= 4) s = std::string(4 - trimmed.size(), '0') + trimmed + s.substr(colon);
  }
  return s;
}

std::string pci_device_key(const std::string& id) {
  std::string s = normalize_pci_bus_id(id);
  const auto dot = s.find('.');
  if (dot != std::string::npos) {
    if (!hex_digits(s.substr(dot + 1), 1, 1)) return "";
    s.resize(dot);
  }
  const auto first = s.find(':');
  const auto second = first == std::string::npos ? std::string::npos : s.find(':', first + 1);
  if (second == std::string::npos) return "";
  if (!hex_digits(s.substr(0, first), 4, 8) || !hex_digits(s.substr(first + 1, second - first - 1), 2, 2) ||
      !hex_digits(s.substr(second + 1), 2, 2))
    return "";
  return s;
}

bool same_pci_device(const std::string& a, const std::string& b) {
  const std::string ka = pci_device_key(a);
  return !ka.empty() && ka == pci_device_key(b);
}

}  // namespace cudadiag::host
