#include "apps/interposer/frame_rule.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

namespace cudadiag::interposer {
namespace {

using namespace frame_rule;

// --- the call frame information (DWARF, .eh_frame) ----------------------------------------

constexpr unsigned kRegRbp = 6, kRegRsp = 7, kRegReturn = 16;

struct Bytes {
  const unsigned char* p;
  bool ok = true;
  template <class T>
  T take() noexcept {
    T v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
  }
  std::uint64_t uleb() noexcept {
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const unsigned char b = *p++;
      if (shift < 64) v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  }
  std::int64_t sleb() noexcept {
    std::int64_t v = 0;
    unsigned shift = 0;
    unsigned char b;
    do {
      b = *p++;
      if (shift < 64) v |= static_cast<std::int64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= -(static_cast<std::int64_t>(1) << shift);
    return v;
  }
  // A pointer in a DW_EH_PE_* encoding; `data` is the base of data-relative ones.
  std::uint64_t encoded(unsigned char enc, std::uint64_t data = 0) noexcept {
    if (enc == 0xff) return 0;  // omitted
    const auto at = reinterpret_cast<std::uint64_t>(p);
    std::uint64_t v = 0;
    switch (enc & 0x0f) {
      case 0x00: v = take<std::uint64_t>(); break;
      case 0x01: v = uleb(); break;
      case 0x02: v = take<std::uint16_t>(); break;
      case 0x03: v = take<std::uint32_t>(); break;
      case 0x04: v = take<std::uint64_t>(); break;
      case 0x09: v = static_cast<std::uint64_t>(sleb()); break;
      case 0x0a: v = static_cast<std::uint64_t>(static_cast<std::int64_t>(take<std::int16_t>())); break;
      case 0x0b: v = static_cast<std::uint64_t>(static_cast<std::int64_t>(take<std::int32_t>())); break;
      case 0x0c: v = take<std::uint64_t>(); break;
      default: ok = false; return 0;
    }
    switch (enc & 0x70) {
      case 0x00: break;
      case 0x10: v += at; break;
      case 0x30:
        if (!data) ok = false;
        v += data;
        break;
      default: ok = false; return 0;  // text-, function-relative, aligned: not emitted by ELF toolchains
    }
    if (enc & 0x80) ok = false;  // indirect: only personality routines are, and they are skipped, not read
    return v;
  }
  // An entry's length; its end in `end`.
  bool entry(const unsigned char*& end) noexcept {
    std::uint64_t length = take<std::uint32_t>();
    if (length == 0xffffffffu) length = take<std::uint64_t>();
    if (length == 0) return false;  // the terminator
    end = p + length;
    return true;
  }
};

struct Cie {
  std::uint64_t code_align = 1;
  std::int64_t data_align = 1;
  unsigned char fde_encoding = 0;
  bool augmented = false;  // 'z': FDEs carry augmentation data
  const unsigned char* instructions = nullptr;
  const unsigned char* end = nullptr;
};

bool read_cie(const unsigned char* at, Cie& c) noexcept {
  Bytes b{at};
  if (!b.entry(c.end)) return false;
  if (b.take<std::uint32_t>() != 0) return false;  // not a CIE
  const unsigned char version = b.take<std::uint8_t>();
  if (version != 1 && version != 3 && version != 4) return false;
  const char* augmentation = reinterpret_cast<const char*>(b.p);
  b.p += std::strlen(augmentation) + 1;
  if (version == 4) b.p += 2;  // address and segment selector sizes
  c.code_align = b.uleb();
  c.data_align = b.sleb();
  const std::uint64_t return_register = version == 1 ? b.take<std::uint8_t>() : b.uleb();
  if (return_register != kRegReturn) return false;
  if (augmentation[0] == 'z') {
    c.augmented = true;
    const std::uint64_t length = b.uleb();
    const unsigned char* data_end = b.p + length;
    for (const char* a = augmentation + 1; *a; ++a) {
      if (*a == 'R') {
        c.fde_encoding = b.take<std::uint8_t>();
      } else if (*a == 'L') {
        b.p += 1;
      } else if (*a == 'P') {
        const unsigned char enc = b.take<std::uint8_t>();
        (void)b.encoded(static_cast<unsigned char>(enc & 0x7f));  // the personality routine: not needed
      } else if (*a == 'S') {
        return false;  // a signal frame: its caller's address is not a return address
      } else if (*a != 'B' && *a != 'G') {
        break;  // unknown: the length says where the data ends
      }
    }
    b.p = data_end;
  } else if (augmentation[0] != '\0') {
    return false;
  }
  c.instructions = b.p;
  return b.ok;
}

struct RegRule {
  enum How : std::uint8_t { same, undefined, at_cfa, at_rbp, unknown } how = same;
  std::int64_t offset = 0;
};

struct CfiState {
  enum CfaHow : std::uint8_t { none, from_rsp, from_rbp, deref, unknown } cfa = none;
  std::int64_t cfa_offset = 0;
  RegRule rbp;
  RegRule ra;
};

// A DWARF expression of the one form GCC's stack realignment emits: DW_OP_breg6 (rbp) N,
// then, for a CFA, DW_OP_deref. Sets `offset`; false for anything else.
bool rbp_expression(Bytes& b, bool deref, std::int64_t& offset) noexcept {
  const std::uint64_t length = b.uleb();
  const unsigned char* end = b.p + length;
  bool matched = false;
  if (length >= 2 && *b.p == 0x76) {  // DW_OP_breg6
    ++b.p;
    offset = b.sleb();
    matched = deref ? (b.p + 1 == end && *b.p == 0x06) : b.p == end;  // DW_OP_deref
  }
  b.p = end;
  return matched;
}

void set_rule(CfiState& s, std::uint64_t reg, RegRule rule) noexcept {
  if (reg == kRegRbp) s.rbp = rule;
  else if (reg == kRegReturn) s.ra = rule;
}

// Runs call frame instructions from `loc` while the location stays at or before
// `target`; `initial` is the CIE's state (DW_CFA_restore). False on what it cannot read.
bool run_cfi(Bytes b, const unsigned char* end, const Cie& cie, std::uint64_t loc, std::uint64_t target, CfiState& s,
             const CfiState& initial) noexcept {
  constexpr int kMaxRemembered = 16;
  CfiState remembered[kMaxRemembered];
  int depth = 0;
  while (b.p < end && b.ok) {
    const unsigned char op = b.take<std::uint8_t>();
    const unsigned char low = op & 0x3f;
    std::uint64_t advance = 0;
    switch (op >> 6) {
      case 1: advance = low * cie.code_align; break;  // DW_CFA_advance_loc
      case 2: set_rule(s, low, {RegRule::at_cfa, static_cast<std::int64_t>(b.uleb()) * cie.data_align}); continue;
      case 3: set_rule(s, low, low == kRegRbp ? initial.rbp : initial.ra); continue;  // DW_CFA_restore
      default: break;
    }
    if (op >> 6 == 0) {
      switch (op) {
        case 0x00: continue;  // nop
        case 0x01: {          // set_loc
          const std::uint64_t to = b.encoded(cie.fde_encoding);
          if (to > target) return b.ok;
          loc = to;
          continue;
        }
        case 0x02: advance = b.take<std::uint8_t>() * cie.code_align; break;
        case 0x03: advance = b.take<std::uint16_t>() * cie.code_align; break;
        case 0x04: advance = b.take<std::uint32_t>() * cie.code_align; break;
        case 0x05: {  // offset_extended
          const std::uint64_t reg = b.uleb();
          set_rule(s, reg, {RegRule::at_cfa, static_cast<std::int64_t>(b.uleb()) * cie.data_align});
          continue;
        }
        case 0x06: {  // restore_extended
          const std::uint64_t reg = b.uleb();
          set_rule(s, reg, reg == kRegRbp ? initial.rbp : initial.ra);
          continue;
        }
        case 0x07: set_rule(s, b.uleb(), {RegRule::undefined, 0}); continue;
        case 0x08: set_rule(s, b.uleb(), {RegRule::same, 0}); continue;
        case 0x09: {  // register: the value moved to another register
          const std::uint64_t reg = b.uleb();
          (void)b.uleb();
          set_rule(s, reg, {RegRule::unknown, 0});
          continue;
        }
        case 0x0a:
          if (depth == kMaxRemembered) return false;
          remembered[depth++] = s;
          continue;
        case 0x0b:
          if (depth == 0) return false;
          s = remembered[--depth];
          continue;
        case 0x0c: {  // def_cfa
          const std::uint64_t reg = b.uleb();
          s.cfa = reg == kRegRsp ? CfiState::from_rsp : reg == kRegRbp ? CfiState::from_rbp : CfiState::unknown;
          s.cfa_offset = static_cast<std::int64_t>(b.uleb());
          continue;
        }
        case 0x0d: {  // def_cfa_register
          const std::uint64_t reg = b.uleb();
          if (s.cfa == CfiState::deref) return false;
          s.cfa = reg == kRegRsp ? CfiState::from_rsp : reg == kRegRbp ? CfiState::from_rbp : CfiState::unknown;
          continue;
        }
        case 0x0e:  // def_cfa_offset
          if (s.cfa == CfiState::deref) return false;
          s.cfa_offset = static_cast<std::int64_t>(b.uleb());
          continue;
        case 0x0f: {  // def_cfa_expression
          std::int64_t offset = 0;
          s.cfa = rbp_expression(b, true, offset) ? CfiState::deref : CfiState::unknown;
          s.cfa_offset = offset;
          continue;
        }
        case 0x10: {  // expression: the register is saved at the expression's address
          const std::uint64_t reg = b.uleb();
          std::int64_t offset = 0;
          const bool simple = rbp_expression(b, false, offset);
          set_rule(s, reg, {simple && reg == kRegRbp ? RegRule::at_rbp : RegRule::unknown, offset});
          continue;
        }
        case 0x11: {  // offset_extended_sf
          const std::uint64_t reg = b.uleb();
          set_rule(s, reg, {RegRule::at_cfa, b.sleb() * cie.data_align});
          continue;
        }
        case 0x12: {  // def_cfa_sf
          const std::uint64_t reg = b.uleb();
          s.cfa = reg == kRegRsp ? CfiState::from_rsp : reg == kRegRbp ? CfiState::from_rbp : CfiState::unknown;
          s.cfa_offset = b.sleb() * cie.data_align;
          continue;
        }
        case 0x13:  // def_cfa_offset_sf
          if (s.cfa == CfiState::deref) return false;
          s.cfa_offset = b.sleb() * cie.data_align;
          continue;
        case 0x14:  // val_offset
        case 0x15: {  // val_offset_sf
          const std::uint64_t reg = b.uleb();
          if (op == 0x14) (void)b.uleb();
          else (void)b.sleb();
          set_rule(s, reg, {RegRule::unknown, 0});
          continue;
        }
        case 0x16: {  // val_expression
          const std::uint64_t reg = b.uleb();
          b.p += b.uleb();
          set_rule(s, reg, {RegRule::unknown, 0});
          continue;
        }
        case 0x2e: (void)b.uleb(); continue;  // GNU_args_size
        case 0x2f: {  // GNU_negative_offset_extended
          const std::uint64_t reg = b.uleb();
          set_rule(s, reg, {RegRule::at_cfa, -static_cast<std::int64_t>(b.uleb()) * cie.data_align});
          continue;
        }
        default: return false;
      }
    }
    if (loc + advance > target) return b.ok;
    loc += advance;
  }
  return b.ok;
}

// The FDE covering `pc` in an object's .eh_frame_hdr: its binary search table.
const unsigned char* find_fde(const unsigned char* hdr, std::uint64_t pc) noexcept {
  if (hdr[0] != 1) return nullptr;
  const unsigned char table_encoding = hdr[3];
  Bytes b{hdr + 4};
  const auto base = reinterpret_cast<std::uint64_t>(hdr);
  (void)b.encoded(hdr[1], base);  // .eh_frame itself
  const std::uint64_t count = b.encoded(hdr[2], base);
  if (!b.ok || table_encoding != 0x3b || count == 0) return nullptr;  // datarel sdata4: what linkers write
  const unsigned char* table = b.p;
  const auto start_of = [&](std::uint64_t i) {
    std::int32_t v;
    std::memcpy(&v, table + 8 * i, 4);
    return base + static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  };
  if (pc < start_of(0)) return nullptr;
  std::uint64_t lo = 0, hi = count;  // the last entry starting at or before pc
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (start_of(mid) <= pc) lo = mid;
    else hi = mid;
  }
  std::int32_t fde;
  std::memcpy(&fde, table + 8 * lo + 4, 4);
  return reinterpret_cast<const unsigned char*>(base + static_cast<std::uint64_t>(static_cast<std::int64_t>(fde)));
}

std::uint64_t rule_from_cfi(const unsigned char* hdr, std::uint64_t pc) noexcept {
  const unsigned char* fde = hdr ? find_fde(hdr, pc) : nullptr;
  if (!fde) return kUnknown;
  Bytes b{fde};
  const unsigned char* end = nullptr;
  if (!b.entry(end)) return kUnknown;
  const unsigned char* id_at = b.p;
  const std::uint32_t id = b.take<std::uint32_t>();
  if (id == 0) return kUnknown;  // a CIE where an FDE was expected
  Cie cie;
  if (!read_cie(id_at - id, cie)) return kUnknown;
  const std::uint64_t begin = b.encoded(cie.fde_encoding);
  const std::uint64_t range = b.encoded(static_cast<unsigned char>(cie.fde_encoding & 0x0f));
  if (!b.ok || pc < begin || pc - begin >= range) return kUnknown;
  if (cie.augmented) b.p += b.uleb();
  CfiState initial;
  if (!run_cfi(Bytes{cie.instructions}, cie.end, cie, begin, ~0ull, initial, initial)) return kUnknown;
  CfiState s = initial;
  if (!run_cfi(b, end, cie, begin, pc, s, initial)) return kUnknown;
  if (s.ra.how == RegRule::undefined) return kOutermost;
  if (s.ra.how != RegRule::at_cfa || s.ra.offset != -8) return kUnknown;
  std::uint64_t cfa = 0;
  switch (s.cfa) {
    case CfiState::from_rsp: cfa = kCfaRsp; break;
    case CfiState::from_rbp: cfa = kCfaRbp; break;
    case CfiState::deref: cfa = kCfaDeref; break;
    case CfiState::none:
    case CfiState::unknown: return kUnknown;
  }
  std::uint64_t rbp = kRbpSame;
  switch (s.rbp.how) {
    case RegRule::same:
    case RegRule::undefined: break;
    case RegRule::at_cfa: rbp = kRbpAtCfa; break;
    case RegRule::at_rbp: rbp = kRbpAtRbp; break;
    case RegRule::unknown: return kUnknown;
  }
  constexpr std::int64_t kMaxCfa = 1ll << 30, kMaxRbp = 1ll << 26;
  if (s.cfa_offset < -kMaxCfa || s.cfa_offset > kMaxCfa || s.rbp.offset < -kMaxRbp || s.rbp.offset > kMaxRbp)
    return kUnknown;
  return pack(cfa, s.cfa_offset, rbp, s.rbp.offset);
}

// --- the object holding an address -------------------------------------------------------

// glibc 2.35's _dl_find_object (looked up at run time: the library loads on 2.28 as well).
struct FoundObject {
  unsigned long long flags;
  void* map_start;
  void* map_end;
  void* link_map;
  void* eh_frame;  // the object's PT_GNU_EH_FRAME (.eh_frame_hdr)
  unsigned long long reserved[16];
};
using FindObjectFn = int (*)(void*, FoundObject*);
FindObjectFn g_find_object = nullptr;

struct HdrSearch {
  std::uint64_t pc;
  const unsigned char* hdr;
};

int on_object_for_hdr(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<HdrSearch*>(data);
  const ElfW(Phdr)* eh = nullptr;
  bool inside = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const std::uint64_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && begin <= search->pc && search->pc < begin + ph.p_memsz) inside = true;
    if (ph.p_type == PT_GNU_EH_FRAME) eh = &ph;
  }
  if (!inside) return 0;
  if (eh) search->hdr = reinterpret_cast<const unsigned char*>(info->dlpi_addr + eh->p_vaddr);
  return 1;
}

const unsigned char* eh_frame_hdr(std::uint64_t pc) noexcept {
  if (g_find_object) {
    FoundObject found{};
    return g_find_object(reinterpret_cast<void*>(pc), &found) == 0 ? static_cast<const unsigned char*>(found.eh_frame)
                                                                     : nullptr;
  }
  HdrSearch search{pc, nullptr};
  dl_iterate_phdr(&on_object_for_hdr, &search);
  return search.hdr;
}

}  // namespace

void init_frame_rules() noexcept {
  g_find_object = reinterpret_cast<FindObjectFn>(dlvsym(RTLD_DEFAULT, "_dl_find_object", "GLIBC_2.35"));
}

std::uint64_t frame_rule_at(std::uint64_t pc) noexcept { return rule_from_cfi(eh_frame_hdr(pc), pc); }

}  // namespace cudadiag::interposer
