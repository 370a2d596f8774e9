#include <catch2/catch.hpp>

#include "host/pci_bus_id.h"

using namespace cudadiag::host;

TEST_CASE("the GPU a PCI bus id names, whichever tool wrote it", "[pci_bus_id]") {
  CHECK(pci_device_key("0000:07:00.0") == "0000:07:00");        // cuDeviceGetPCIBusId
  CHECK(pci_device_key("00000000:07:00.0") == "0000:07:00");    // NVML
  CHECK(pci_device_key("0000:3B:00.0") == "0000:3b:00");
  CHECK(pci_device_key("0000:3b:00") == "0000:3b:00");          // the kernel log's Xid line
  CHECK(pci_device_key("00000001:AF:00.0") == "0001:af:00");
  CHECK(pci_device_key("").empty());
  CHECK(pci_device_key("3b:00.0").empty());
  CHECK(pci_device_key("0000:3b:00.0.1").empty());
  CHECK(pci_device_key("0000:zz:00.0").empty());
  CHECK(pci_device_key("GPU-0000:3b:00").empty());
}

TEST_CASE("an Xid line's bus id is matched to the driver's and NVML's, case and domain width aside", "[pci_bus_id]") {
  CHECK(same_pci_device("0000:07:00", "0000:07:00.0"));
  CHECK(same_pci_device("00000000:07:00.0", "0000:07:00.0"));
  CHECK(same_pci_device("0000:3B:00.0", "0000:3b:00"));
  CHECK_FALSE(same_pci_device("0000:07:00", "0000:08:00.0"));
  CHECK_FALSE(same_pci_device("0000:07:00", "0001:07:00.0"));
  CHECK_FALSE(same_pci_device("", ""));
  CHECK_FALSE(same_pci_device("0000:07:00", ""));
}
