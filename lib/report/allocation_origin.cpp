#include "report/allocation_origin.h"

#include <fmt/format.h>

#include "report/fault_site.h"
#include "report/json_reader.h"
#include "util/path_name.h"

namespace cudadiag::report {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t kHostFramesShown = 4;

// A frame of the CUDA driver or runtime: in their libraries, the runtime linked into the
// program (its local symbols are named libcudart_static_<hash>), or an allocating entry point.
bool runtime_frame(const OriginHostFrame& f) {
  const std::string name = base_name(f.module);
  if (name.rfind("libcuda.so", 0) == 0 || name.rfind("libcudart", 0) == 0) return true;
  const std::string& fn = f.function;
  return fn.rfind("libcudart_static_", 0) == 0 || fn.rfind("cudaMalloc", 0) == 0 || fn.rfind("cuMemAlloc", 0) == 0;
}

std::string python_text(const OriginPythonFrame& f) {
  std::string t = f.line > 0 ? fmt::format("{}:{}", f.file, f.line) : f.file;
  if (!f.function.empty()) t += " in " + f.function;
  return t;
}

std::string host_text(const OriginHostFrame& f) {
  if (f.module.empty()) return hex(f.address);
  if (f.function.empty()) return fmt::format("{}+{:#x}", base_name(f.module), f.offset);  // an offset into the file
  return fmt::format("{}+{:#x} ({})", f.function, f.offset, base_name(f.module));
}

}  // namespace

std::string origin_text(const AllocationOrigin& o) {
  std::string t;
  const OriginPythonFrame* user = nullptr;
  for (const auto& f : o.python)
    if (f.user) {
      user = &f;
      break;
    }
  if (user) {
    t = python_text(*user);
    if (!o.python.empty() && &o.python.front() != user) t += " (innermost: " + python_text(o.python.front()) + ")";
  } else if (!o.python.empty()) {
    t = python_text(o.python.front());
  }
  // The CUDA driver's and runtime's own frames say nothing about the program: the text
  // starts at the allocating call ("cudaMalloc < main+0x2f (app)").
  std::size_t first = 0;
  std::string call;
  if (!user)
    for (std::size_t i = 0; i < o.host.size(); ++i)
      if (runtime_frame(o.host[i])) {
        first = i + 1;
        if (!o.host[i].function.empty() && o.host[i].function.rfind("libcudart_static_", 0) != 0) call = o.host[i].function;
      }
  std::string host = call;
  std::size_t shown = 0;
  // The user's Python line says it: the interpreter's own frames are left to the report.
  for (std::size_t i = first; !user && i < o.host.size(); ++i) {
    if (shown == kHostFramesShown) {
      host += " < ...";
      break;
    }
    host += (host.empty() ? "" : " < ") + host_text(o.host[i]);
    ++shown;
  }
  if (!host.empty()) t += (t.empty() ? "" : "; ") + std::string("host: ") + host;
  if (!o.python_note.empty()) t += " (" + o.python_note + ")";
  return t;
}

json to_json(const AllocationOrigin& o) {
  json j = json::object();
  if (!o.python.empty()) {
    json py = json::array();
    for (const auto& f : o.python)
      py.push_back(json{{"file", f.file}, {"line", f.line}, {"function", f.function}, {"user", f.user}});
    j["python"] = std::move(py);
  }
  json host = json::array();
  for (const auto& f : o.host) {
    json e{{"address", hex(f.address)}, {"module", f.module}};
    if (!f.function.empty()) e["function"] = f.function;
    e["offset"] = f.offset;
    host.push_back(std::move(e));
  }
  j["host"] = std::move(host);
  if (!o.python_note.empty()) j["python_note"] = o.python_note;
  return j;
}

AllocationOrigin read_allocation_origin(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  AllocationOrigin o;
  const json python = rd.array_or_empty(j, "python", p);
  for (std::size_t i = 0; i < python.size(); ++i) {
    const std::string fp = JsonReader::element_pointer(JsonReader::member_pointer(p, "python"), i);
    rd.object(python[i], fp);
    OriginPythonFrame f;
    f.file = rd.string_or(python[i], "file", fp);
    if (const json* v = rd.find(python[i], "line", fp))
      f.line = static_cast<std::int32_t>(rd.integer(*v, JsonReader::member_pointer(fp, "line"), 0, 0x7fffffff));
    f.function = rd.string_or(python[i], "function", fp);
    f.user = rd.boolean_or(python[i], "user", fp, false);
    o.python.push_back(std::move(f));
  }
  const json host = rd.array_or_empty(j, "host", p);
  for (std::size_t i = 0; i < host.size(); ++i) {
    const std::string fp = JsonReader::element_pointer(JsonReader::member_pointer(p, "host"), i);
    rd.object(host[i], fp);
    OriginHostFrame f;
    f.address = read_hex(rd, rd.required(host[i], "address", fp), JsonReader::member_pointer(fp, "address"));
    f.module = rd.string_or(host[i], "module", fp);
    f.function = rd.string_or(host[i], "function", fp);
    f.offset = rd.unsigned_or(host[i], "offset", fp, 0);
    o.host.push_back(std::move(f));
  }
  o.python_note = rd.string_or(j, "python_note", p);
  return o;
}

}  // namespace cudadiag::report
