#include <catch2/catch.hpp>

#include "host/system_info.h"

using namespace cudadiag::host;

TEST_CASE("os-release PRETTY_NAME, quoted or not") {
  CHECK(parse_os_release_pretty("NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\n") ==
        "Ubuntu 24.04.1 LTS");
  CHECK(parse_os_release_pretty("ID=nixos\nPRETTY_NAME=NixOS 25.05 (Warbler)") == "NixOS 25.05 (Warbler)");
  CHECK(parse_os_release_pretty("PRETTY_NAME='Debian GNU/Linux 12 (bookworm)'\n") ==
        "Debian GNU/Linux 12 (bookworm)");
  CHECK(parse_os_release_pretty("NAME=Foo\n").empty());
  CHECK(parse_os_release_pretty("").empty());
}

TEST_CASE("cpu model from x86 and Arm cpuinfo") {
  CHECK(parse_cpu_model("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum "
                        "8480+\nprocessor\t: 1\nmodel name\t: other\n") == "Intel(R) Xeon(R) Platinum 8480+");
  CHECK(parse_cpu_model("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n") == "CPU part 0xd4f");
  CHECK(parse_cpu_model("Model\t\t: NVIDIA Grace\nCPU part\t: 0xd4f\n") == "NVIDIA Grace");
  CHECK(parse_cpu_model("").empty());
}

TEST_CASE("MemTotal in bytes") {
  CHECK(parse_meminfo_total_bytes("MemTotal:       131891148 kB\nMemFree:  1 kB\n") == 131891148ULL * 1024);
  CHECK(parse_meminfo_total_bytes("MemFree:  1 kB\n") == 0);
}

TEST_CASE("host_json on this machine has every key with the right type") {
  const auto h = host_json();
  CHECK(h["hostname"].is_string());
  CHECK((h["os"].is_string() || h["os"].is_null()));
  REQUIRE(h["kernel"].is_object());
  CHECK_FALSE(h["kernel"]["release"].get<std::string>().empty());
  CHECK(h["glibc"].get<std::string>().find('.') != std::string::npos);
  CHECK(h["cpu"]["logical_cores"].get<long>() >= 1);
  CHECK(h["memory_bytes"].get<unsigned long long>() > 0);
}
