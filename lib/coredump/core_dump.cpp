#include "coredump/core_dump.h"

#include <fmt/format.h>

#include <map>

#include "coredump/elf_file.h"

namespace cudadiag::coredump {
namespace {

// Section types (CudbgSectionHeaderTypes: SHT_LOUSER + n).
constexpr std::uint32_t kLoUser = 0x80000000u;
enum : std::uint32_t {
  kRegs = kLoUser + 5,
  kRelocatedImage = kLoUser + 7,
  kDeviceTable = kLoUser + 9,
  kContextTable = kLoUser + 10,
  kSmTable = kLoUser + 11,
  kGridTable = kLoUser + 12,
  kCtaTable = kLoUser + 13,
  kWarpTable = kLoUser + 14,
  kLaneTable = kLoUser + 15,
  kModuleTable = kLoUser + 16,
  kUniformRegs = kLoUser + 19,
  kMetaData = kLoUser + 22,
};

// Rows of a table section: entry size from sh_entsize, every field read inside the row.
class Rows {
 public:
  Rows(const ElfSection& s, std::uint64_t min_entry) : s_(s) {
    if (s.entsize < min_entry || s.entsize > 65536)
      throw UnreadableDump(fmt::format("section {} ({}): entry size {} (expected {} to 65536 bytes)", s.index, s.name,
                                       s.entsize, min_entry));
    count_ = s.size / s.entsize;
  }
  std::uint64_t count() const { return count_; }
  std::optional<std::uint32_t> u32(std::uint64_t row, std::uint64_t off) const {
    if (off + 4 > s_.entsize) return std::nullopt;
    return s_.bytes.u32(row * s_.entsize + off);
  }
  std::optional<std::uint64_t> u64(std::uint64_t row, std::uint64_t off) const {
    if (off + 8 > s_.entsize) return std::nullopt;
    return s_.bytes.u64(row * s_.entsize + off);
  }
  std::uint32_t u32_or0(std::uint64_t row, std::uint64_t off) const { return u32(row, off).value_or(0); }

 private:
  const ElfSection& s_;
  std::uint64_t count_ = 0;
};

// Where the rows of each table section landed in the flat vectors.
struct Placed {
  std::uint32_t type = 0;
  std::size_t first = 0;
  std::uint64_t count = 0;
};

class Reader {
 public:
  Reader(const ElfFile& elf) : elf_(elf) {}

  CoreDump read() {
    for (std::uint32_t t : {kDeviceTable, kSmTable, kCtaTable, kWarpTable, kLaneTable, kGridTable, kContextTable,
                            kModuleTable})
      for (const auto& s : elf_.sections())
        if (s.type == t) read_table(s);
    for (const auto& s : elf_.sections()) {
      if (s.type == kRegs) attach_registers(s, false);
      if (s.type == kUniformRegs) attach_registers(s, true);
      if (s.type == kRelocatedImage) add_image(s);
      if (s.type == kMetaData) read_meta(s);
    }
    if (dump_.devices.empty()) throw UnreadableDump("no device table (.cudbg.devtbl): not a GPU core dump");
    return std::move(dump_);
  }

 private:
  // The flat index of row `row` of the table in section `link`, which must be of `type`.
  std::size_t parent(const ElfSection& child, std::uint32_t type, const char* what) const {
    const auto it = placed_.find(child.link);
    if (it == placed_.end() || it->second.type != type)
      throw UnreadableDump(fmt::format("section {} ({}): its parent (section {}) is not {}", child.index, child.name,
                                       child.link, what));
    if (child.info >= it->second.count)
      throw UnreadableDump(fmt::format("section {} ({}): parent row {} is outside {} ({} rows)", child.index,
                                       child.name, child.info, what, it->second.count));
    return it->second.first + child.info;
  }

  void read_table(const ElfSection& s) {
    Placed p{s.type, 0, 0};
    // Sections of a real dump do not overlap, so its rows fit in the file; a corrupted
    // section table can point many tables at the same bytes: bounded here.
    if (s.entsize > 0) rows_seen_ += s.size / s.entsize;
    if (rows_seen_ > elf_.file().size() / 4 + 1024)
      throw UnreadableDump(fmt::format("section {} ({}): the tables declare more rows than a file of {} bytes holds "
                                       "(overlapping sections?)",
                                       s.index, s.name, elf_.file().size()));
    switch (s.type) {
      case kDeviceTable: {
        Rows r(s, 24);
        p.first = dump_.devices.size();
        for (std::uint64_t i = 0; i < r.count(); ++i) {
          Device d;
          d.name = string_at(r.u64(i, 0));
          d.sm_type = string_at(r.u64(i, 16));
          d.num_sms = r.u32(i, 36);
          d.lanes_per_warp = r.u32(i, 44);
          d.regs_per_lane = r.u32(i, 48);
          const auto isz = r.u32(i, 64);
          if (isz && *isz > 0 && *isz <= 64) d.instruction_size = *isz;
          dump_.devices.push_back(std::move(d));
        }
        p.count = r.count();
        break;
      }
      case kSmTable: {
        Rows r(s, 4);
        const std::size_t dev = parent_device(s);
        p.first = dump_.sms.size();
        for (std::uint64_t i = 0; i < r.count(); ++i) {
          Sm sm;
          sm.device = dev;
          sm.sm_id = r.u32_or0(i, 0);
          sm.exception = r.u32(i, 8);
          if (r.u32(i, 12).value_or(0) != 0) sm.error_pc = r.u64(i, 16);
          dump_.sms.push_back(sm);
        }
        p.count = r.count();
        break;
      }
      case kCtaTable: {
        Rows r(s, 8);
        const std::size_t sm = parent(s, kSmTable, "an SM table");
        p.first = dump_.ctas.size();
        for (std::uint64_t i = 0; i < r.count(); ++i)
          dump_.ctas.push_back(Cta{sm, r.u64(i, 0).value_or(0), {r.u32_or0(i, 8), r.u32_or0(i, 12), r.u32_or0(i, 16)}});
        p.count = r.count();
        break;
      }
      case kWarpTable: {
        Rows r(s, 8);
        const std::size_t cta = parent(s, kCtaTable, "a CTA table");
        p.first = dump_.warps.size();
        for (std::uint64_t i = 0; i < r.count(); ++i) {
          Warp w;
          w.cta = cta;
          w.warp_id = r.u32_or0(i, 8);
          w.valid_lanes = r.u32_or0(i, 12);
          w.active_lanes = r.u32_or0(i, 16);
          if (r.u32(i, 24).value_or(0) != 0) w.error_pc = r.u64(i, 0);
          dump_.warps.push_back(w);
        }
        p.count = r.count();
        break;
      }
      case kLaneTable: {
        Rows r(s, 8);
        const std::size_t warp = parent(s, kWarpTable, "a warp table");
        p.first = dump_.lanes.size();
        for (std::uint64_t i = 0; i < r.count(); ++i) {
          Lane l;
          l.warp = warp;
          l.pc = r.u64(i, 0).value_or(0);
          l.lane = r.u32(i, 16).value_or(static_cast<std::uint32_t>(i));
          l.thread = {r.u32_or0(i, 20), r.u32_or0(i, 24), r.u32_or0(i, 28)};
          l.exception = r.u32(i, 32);
          dump_.lanes.push_back(l);
        }
        p.count = r.count();
        break;
      }
      case kGridTable: {
        Rows r(s, 8);
        const std::size_t dev = parent_device(s);
        p.first = dump_.grids.size();
        for (std::uint64_t i = 0; i < r.count(); ++i) {
          Grid g;
          g.device = dev;
          g.grid_id = r.u64(i, 0).value_or(0);
          g.function_entry = r.u64(i, 24);
          g.module_handle = r.u64(i, 32);
          g.grid_dim = {r.u32_or0(i, 72), r.u32_or0(i, 76), r.u32_or0(i, 80)};
          g.block_dim = {r.u32_or0(i, 84), r.u32_or0(i, 88), r.u32_or0(i, 92)};
          dump_.grids.push_back(g);
        }
        p.count = r.count();
        break;
      }
      case kContextTable: {
        Rows r(s, 8);
        p.first = contexts_.size();
        const std::size_t dev = parent_device(s);
        for (std::uint64_t i = 0; i < r.count(); ++i) contexts_.push_back(dev);
        p.count = r.count();
        break;
      }
      case kModuleTable: {
        Rows r(s, 8);
        const std::size_t ctx = parent_index(s, kContextTable, "a context table");
        p.first = modules_.size();
        for (std::uint64_t i = 0; i < r.count(); ++i) modules_.push_back({contexts_.at(ctx), r.u64(i, 0)});
        p.count = r.count();
        break;
      }
      default:
        return;
    }
    placed_[s.index] = p;
  }

  std::size_t parent_index(const ElfSection& s, std::uint32_t type, const char* what) const {
    return parent(s, type, what);
  }
  std::size_t parent_device(const ElfSection& s) const { return parent(s, kDeviceTable, "the device table"); }

  void attach_registers(const ElfSection& s, bool uniform) {
    if (uniform) {
      const std::size_t w = parent(s, kWarpTable, "a warp table");
      dump_.warps[w].uniform_registers = s.bytes;
    } else {
      const std::size_t l = parent(s, kLaneTable, "a lane table");
      dump_.lanes[l].registers = s.bytes;
    }
  }

  void add_image(const ElfSection& s) {
    const std::size_t m = parent(s, kModuleTable, "a module table");
    dump_.images.push_back({modules_[m].device, s.info, modules_[m].handle, s.bytes});
  }

  void read_meta(const ElfSection& s) {
    dump_.driver_major = s.bytes.u32(8);
    dump_.driver_minor = s.bytes.u32(12);
  }

  std::string string_at(const std::optional<std::uint64_t>& index) const {
    if (!index) return {};
    const ElfSection* strtab = elf_.find(".strtab");
    if (strtab == nullptr) return {};
    const auto s = strtab->bytes.cstring(*index, 256);
    return s ? std::string(*s) : std::string();
  }

  struct Module {
    std::size_t device;
    std::optional<std::uint64_t> handle;
  };
  const ElfFile& elf_;
  CoreDump dump_;
  std::map<std::uint32_t, Placed> placed_;
  std::uint64_t rows_seen_ = 0;
  std::vector<std::size_t> contexts_;  // context row -> device
  std::vector<Module> modules_;
};

}  // namespace

std::string to_string(const Dim3& d) { return fmt::format("({},{},{})", d.x, d.y, d.z); }

CoreDump read_core_dump(Bytes file) {
  const ElfFile elf = ElfFile::parse(file, "");
  if (elf.type() != kElfTypeCore || elf.machine() != kElfMachineCuda)
    throw UnreadableDump(fmt::format("an ELF file of type {} for machine {}, not a GPU core dump (type 4, machine 190 "
                                     "\"NVIDIA CUDA\")",
                                     elf.type(), elf.machine()));
  return Reader(elf).read();
}

}  // namespace cudadiag::coredump
