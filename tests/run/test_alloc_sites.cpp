// Allocation sites: the writer keeps each distinct site once and the reader gives them
// back with the modules; the symbolizer names a return address from the loaded object's
// own symbols, and reads only files it may.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "report/allocation_origin.h"
#include "report/json_reader.h"
#include "ring_fixture.h"
#include "run/ring_reader.h"
#include "run/symbolizer.h"

using namespace cudadiag;
using namespace cudadiag::run;

// A function of this test binary whose address the symbolizer must name.
extern "C" __attribute__((noinline)) int cudadiag_site_probe(int x) { return x * 3 + 1; }

namespace {

interposer::SiteEvent site_of(std::initializer_list<std::uint64_t> frames) {
  interposer::SiteEvent e;
  for (auto f : frames) e.frames[e.frame_count++] = f;
  return e;
}

void set_python(interposer::SiteEvent& e, const char* file, int line, const char* function, bool user) {
  ring::PythonFrame& f = e.python[e.python_count++];
  f.line = line;
  std::strncpy(f.function, function, sizeof f.function - 1);
  std::strncpy(f.file, file, sizeof f.file - 1);
  f.flags = user ? ring::kPythonUserFrame : 0;
  e.python_state = ring::PythonState::read;
}

// The module of this test binary, as the interposer would record it: range, bias, path.
ModuleRecord this_binary() {
  const auto probe = reinterpret_cast<std::uint64_t>(&cudadiag_site_probe);
  ModuleRecord m;
  m.path = std::filesystem::read_symlink("/proc/self/exe").string();
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::uint64_t lowest = ~0ull, highest = 0;
  while (std::getline(maps, line)) {
    if (line.find(m.path) == std::string::npos) continue;
    std::uint64_t b = 0, e = 0, off = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx", &b, &e, perms, &off) != 4) continue;
    lowest = std::min(lowest, b - off);
    highest = std::max(highest, e);
  }
  m.begin = lowest;
  m.end = highest;
  m.bias = lowest;  // a PIE: its first mapping is its load address
  REQUIRE(probe >= m.begin);
  REQUIRE(probe < m.end);
  return m;
}

}  // namespace

TEST_CASE("alloc sites: equal sites share one record, others get their own, and the reader gives them back", "[sites]") {
  test::TempDir dir;
  {
    test::ScopedWriter w(dir / "ring", test::small_limits(8, 4));
    REQUIRE(w.attached());
    auto a = site_of({0x1000, 0x2000});
    set_python(a, "/home/u/train.py", 42, "step", true);
    const auto b = site_of({0x1000, 0x2004});
    CHECK(w->add_site(a) == 0);
    CHECK(w->add_site(b) == 1);
    CHECK(w->add_site(a) == 0);  // the same stack and Python line: the same site
    interposer::ModuleEvent m;
    m.begin = 0x1000;
    m.end = 0x3000;
    m.bias = 0x800;
    m.path = "/opt/app/bin/app";
    CHECK(w->add_module(m));
    w->add_stack_flags(ring::kStacksHost | ring::kStacksPython);
    auto e = test::fenced_event(0x7f0000001000, 4000);
    e.site = 1;
    w->add_allocation(e);
  }
  const RingRead r = read_ring(dir / "ring");
  REQUIRE(r.status == RingStatus::ok);
  REQUIRE(r.log.sites.size() == 2);
  CHECK(r.log.stacks_captured);
  CHECK(r.log.sites[0].frames == std::vector<std::uint64_t>{0x1000, 0x2000});
  REQUIRE(r.log.sites[0].python.size() == 1);
  CHECK(r.log.sites[0].python[0].file == "/home/u/train.py");
  CHECK(r.log.sites[0].python[0].line == 42);
  CHECK(r.log.sites[0].python[0].function == "step");
  CHECK(r.log.sites[0].python[0].user);
  CHECK(r.log.sites[1].frames == std::vector<std::uint64_t>{0x1000, 0x2004});
  REQUIRE(r.log.modules.size() == 1);
  CHECK(r.log.modules[0].path == "/opt/app/bin/app");
  CHECK(r.log.modules[0].bias == 0x800);
  REQUIRE(r.log.allocations.size() == 1);
  CHECK(r.log.allocations[0].site == std::optional<std::uint32_t>(1));
}

TEST_CASE("alloc sites: a full table counts the sites it could not keep", "[sites]") {
  test::TempDir dir;
  auto limits = test::small_limits(8, 4);
  limits.sites = 2;
  {
    test::ScopedWriter w(dir / "ring", limits);
    CHECK(w->add_site(site_of({1})) == 0);
    CHECK(w->add_site(site_of({2})) == 1);
    CHECK(w->add_site(site_of({3})) == ring::kNoSite);
    CHECK(w->add_site(site_of({2})) == 1);  // a kept one is still found
  }
  const RingRead r = read_ring(dir / "ring");
  CHECK(r.log.sites.size() == 2);
  CHECK(r.log.sites_dropped == 1);
}

TEST_CASE("alloc sites: why a Python line is missing comes back with the site", "[sites]") {
  test::TempDir dir;
  {
    test::ScopedWriter w(dir / "ring", test::small_limits(8, 4));
    auto e = site_of({0x10});
    e.python_state = ring::PythonState::no_python_code;
    CHECK(w->add_site(e) == 0);
    e.python_state = ring::PythonState::unreadable;
    CHECK(w->add_site(e) == 1);
    e.python_state = ring::PythonState::read;
    CHECK(w->add_site(e) == 2);
  }
  const RingRead r = read_ring(dir / "ring");
  REQUIRE(r.log.sites.size() == 3);
  CHECK(r.log.sites[0].python.empty());
  CHECK(r.log.sites[0].python_note.find("running no Python code") != std::string::npos);
  CHECK(r.log.sites[1].python_note.find("CPython 3.9 to 3.13") != std::string::npos);
  CHECK(r.log.sites[2].python_note.empty());
}

TEST_CASE("symbolizer: a return address in this binary is named from its own symbols", "[sites]") {
  const ModuleRecord m = this_binary();
  Symbolizer symbols({m});
  const auto probe = reinterpret_cast<std::uint64_t>(&cudadiag_site_probe);
  const auto f = symbols.frame(probe + 4);
  CHECK(f.module == m.path);
  CHECK(f.function == "cudadiag_site_probe");
  CHECK(f.offset == 4);
  // Outside every module: the address alone.
  const auto none = symbols.frame(8);
  CHECK(none.module.empty());
  CHECK(none.function.empty());
  CHECK(report::origin_text(report::AllocationOrigin{{}, {f}, ""}) ==
        "host: cudadiag_site_probe+0x4 (" + std::filesystem::path(m.path).filename().string() + ")");
}

TEST_CASE("symbolizer: a file that is not an ELF file, or not there, leaves the address unnamed", "[sites]") {
  test::TempDir dir;
  { std::ofstream(dir / "junk.so") << "not an ELF file at all, just text that is long enough to be read"; }
  Symbolizer symbols({ModuleRecord{0x1000, 0x2000, 0x1000, (dir / "junk.so").string()},
                      ModuleRecord{0x3000, 0x4000, 0x3000, (dir / "gone.so").string()}});
  const auto a = symbols.frame(0x1010);
  CHECK(a.function.empty());
  CHECK(a.offset == 0x10);
  CHECK(report::origin_text(report::AllocationOrigin{{}, {a}, ""}) == "host: junk.so+0x10");
  CHECK(symbols.frame(0x3010).function.empty());
}

TEST_CASE("symbolizer: another user's private file is not read", "[sites]") {
  if (geteuid() != 0) {
    std::puts("SKIPPED: needs root (a file of another user)");
    return;
  }
  test::TempDir dir;
  const ModuleRecord self = this_binary();
  const auto copy = dir / "private.bin";
  std::filesystem::copy_file(self.path, copy);
  REQUIRE(chown(copy.c_str(), 65534, 65534) == 0);
  REQUIRE(chmod(copy.c_str(), 0600) == 0);
  ModuleRecord m = self;
  m.path = copy.string();
  Symbolizer symbols({m});
  const auto probe = reinterpret_cast<std::uint64_t>(&cudadiag_site_probe);
  CHECK(symbols.frame(probe + 4).function.empty());  // root may read it; a program's ring must not make it
  REQUIRE(chmod(copy.c_str(), 0644) == 0);
  Symbolizer readable({m});
  CHECK(readable.frame(probe + 4).function == "cudadiag_site_probe");
}

TEST_CASE("allocation origin: the user's Python line first, the host stack in the report", "[sites]") {
  report::AllocationOrigin o;
  o.python = {{"/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", 125, "forward", false},
              {"/home/u/train.py", 42, "step", true}};
  o.host = {{0x10, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "cuMemAlloc_v2", 4},
            {0x20, "/opt/app/liballoc.so", "make", 0x1c}};
  CHECK(report::origin_text(o) ==
        "/home/u/train.py:42 in step (innermost: /usr/lib/python3/dist-packages/torch/nn/modules/linear.py:125 in "
        "forward)");
  o.python.clear();
  CHECK(report::origin_text(o) == "host: cuMemAlloc_v2 < make+0x1c (liballoc.so)");
  o.python_note = "no Python line: why";
  CHECK(report::origin_text(o) == "host: cuMemAlloc_v2 < make+0x1c (liballoc.so) (no Python line: why)");
  // The runtime linked into a program: its local frames and the entry point lead up to the caller.
  o.python_note.clear();
  o.host = {{0x10, "/opt/app/app", "libcudart_static_5382377d", 0x2e},
            {0x20, "/opt/app/app", "cudaMalloc", 0x1f3},
            {0x30, "/opt/app/app", "main", 0x2f},
            {0x40, "/usr/lib/x86_64-linux-gnu/libc.so.6", "", 0x2724a},
            {0x50, "/usr/lib/x86_64-linux-gnu/libc.so.6", "__libc_start_main", 0x85},
            {0x60, "/opt/app/app", "_start", 0x21},
            {0x70, "/opt/app/app", "more", 0x1}};
  CHECK(report::origin_text(o) ==
        "host: cudaMalloc < main+0x2f (app) < libc.so.6+0x2724a < __libc_start_main+0x85 (libc.so.6) < _start+0x21 (app) "
        "< ...");
}

TEST_CASE("allocation origin: JSON round trip, and a bad address is named", "[sites]") {
  report::AllocationOrigin o;
  o.python = {{"/home/u/train.py", 42, "step", true}};
  o.host = {{0x7f0000001234, "/opt/app/liballoc.so", "make", 0x1c}, {0x10, "", "", 0}};
  o.python_note = "";
  const auto j = report::to_json(o);
  const report::JsonReader rd("x.json");
  const auto back = report::read_allocation_origin(rd, j, "/o");
  CHECK(report::to_json(back) == j);
  REQUIRE(back.host.size() == 2);
  CHECK(back.host[0].address == 0x7f0000001234);
  auto bad = j;
  bad["host"][0]["address"] = "12";
  CHECK_THROWS_WITH(report::read_allocation_origin(rd, bad, "/o"), Catch::Contains("/o/host/0/address"));
}
