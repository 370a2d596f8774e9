#include "apps/interposer/device_record.h"

#include <cstring>

#include "apps/interposer/driver_calls.h"

namespace cudadiag::interposer {

void note_device(RingWriter& ring, std::int32_t ordinal) noexcept {
  if (ordinal < 0 || ring.has_device(ordinal)) return;
  DeviceEvent e;
  e.ordinal = ordinal;
  if (const DriverCalls* d = driver_calls()) {
    if (d->device_get_uuid) {
      CUuuid uuid{};
      e.uuid_result = static_cast<std::int32_t>(d->device_get_uuid(&uuid, ordinal));
      if (e.uuid_result == CUDA_SUCCESS) std::memcpy(e.uuid, uuid.bytes, sizeof e.uuid);
    }
    if (d->device_get_pci_bus_id) {
      e.bus_id_result = static_cast<std::int32_t>(
          d->device_get_pci_bus_id(e.pci_bus_id, static_cast<int>(sizeof e.pci_bus_id), ordinal));
      if (e.bus_id_result != CUDA_SUCCESS) std::memset(e.pci_bus_id, 0, sizeof e.pci_bus_id);
    }
  }
  ring.add_device(e);
}

}  // namespace cudadiag::interposer
