// Stand-in for a cudadiag child in the runner and executor tests: the first
// argument picks a behaviour (see usage()). No CUDA, no project libraries.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace {

int result_fd() {
  const char* v = std::getenv("CUDADIAG_RESULT_FD");
  return v ? std::atoi(v) : -1;
}

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::exit(90);
    }
    off += static_cast<size_t>(n);
  }
}

void sleep_seconds(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

void flood(unsigned long long bytes) {
  std::string line(1023, 'x');
  line += '\n';
  write_all(2, "flood starts\n");
  unsigned long long done = 0;
  write_all(1, "HEAD-MARKER\n");
  done += 12;
  while (done + line.size() < bytes) {
    write_all(1, line);
    done += line.size();
  }
  std::string end = "TAIL-MARKER\n";
  write_all(1, end);
  write_all(2, "flood ends\n");
}

// A grandchild in a session of its own (setsid) that sleeps `seconds`; prints
// "grandchild <pid>" on stdout. quiet: its stdio goes to /dev/null (it holds no pipe).
pid_t escape(double seconds, bool quiet) {
  const pid_t pid = ::fork();  // no CUDA here: fork without exec is fine
  if (pid == 0) {
    ::setsid();
    if (quiet) {
      const int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    sleep_seconds(seconds);
    ::_exit(0);
  }
  std::printf("grandchild %d\n", static_cast<int>(pid));
  std::fflush(stdout);
  return pid;
}

// As a driver with dumps armed: the file `dump` copied to CUDA_COREDUMP_FILE (%p: the
// pid). False when dumps are not armed.
bool write_armed_dump(const std::string& dump) {
  const char* pattern = std::getenv("CUDA_COREDUMP_FILE");
  const char* armed = std::getenv("CUDA_ENABLE_COREDUMP_ON_EXCEPTION");
  if (!pattern || !armed || std::string(armed) != "1") return false;
  std::string path = pattern;
  const auto at = path.find("%p");
  if (at != std::string::npos) path.replace(at, 2, std::to_string(::getpid()));
  std::FILE* in = std::fopen(dump.c_str(), "rb");
  std::FILE* out = std::fopen(path.c_str(), "wb");
  char buffer[65536];
  for (size_t n; in && out && (n = std::fread(buffer, 1, sizeof buffer, in)) > 0;) std::fwrite(buffer, 1, n, out);
  if (in) std::fclose(in);
  if (out) std::fclose(out);
  return true;
}

bool dumps_armed() {
  const char* armed = std::getenv("CUDA_ENABLE_COREDUMP_ON_EXCEPTION");
  return armed && std::string(armed) == "1";
}

// The names of this process's environment that arm GPU core dumps or the wait for one.
nlohmann::json dump_env_names() {
  auto names = nlohmann::json::array();
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("CUDA_COREDUMP_", 0) == 0 || name == "CUDADIAG_DUMP_LINGER_MS" ||
        (name.rfind("CUDA_ENABLE_", 0) == 0 && name.find("COREDUMP") != std::string::npos))
      names.push_back(name);
  }
  return names;
}

// {"log": PATH}: one line per case run, "<case_id> armed|unarmed", appended.
void log_run(const nlohmann::json& c, const nlohmann::json& params) {
  if (!params.contains("log")) return;
  if (std::FILE* f = std::fopen(params["log"].get<std::string>().c_str(), "a")) {
    std::fprintf(f, "%s %s\n", c.value("case_id", "?").c_str(), dumps_armed() ? "armed" : "unarmed");
    std::fclose(f);
  }
}

// Mimics `cudadiag __run-case --spec JSON`: one line per case on the result fd.
int protocol(int argc, char** argv) {
  std::string spec;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--spec") == 0) spec = argv[i + 1];
  if (spec.empty()) {
    std::fprintf(stderr, "protocol: --spec missing\n");
    return 2;
  }
  const auto request = nlohmann::json::parse(spec);
  const int fd = result_fd();
  std::string late_dump;  // late-dump: written only while the child waits after its last case
  for (const auto& c : request.at("cases")) {
    const int index = c.at("index").get<int>();
    const auto params = c.value("params", nlohmann::json::object());
    std::string fake = params.value("fake", "ok");
    // {"fail_on_device": "GPU-x"}: a faulty GPU, sticky errors there and only there.
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (params.contains("fail_on_device") && visible && params["fail_on_device"] == visible) fake = "sticky";
    std::printf("running case %d (%s)\n", index, fake.c_str());
    std::fflush(stdout);
    log_run(c, params);
    nlohmann::json line{{"index", index}};
    // {"show_env": true}: details.dump_env lists the dump variables the child was given.
    if (params.value("show_env", false)) line["details"]["dump_env"] = dump_env_names();
    // store: a store onto unmapped memory. Unarmed, the synchronize reports it (sticky
    // 700); armed, the run sees success and the driver writes the dump later, only while
    // the process lives (lib/fence/dump_linger.h), as measured on an H100.
    if (fake == "store") fake = dumps_armed() ? "late-dump" : "sticky";
    if (fake == "segv") {
      std::raise(SIGSEGV);
    } else if (fake == "slow") {
      sleep_seconds(0.3);
      line["outcome"] = "ok";
      line["details"]["pid"] = ::getpid();
    } else if (fake == "hang") {
      for (;;) sleep_seconds(3600);
    } else if (fake == "late-dump") {
      // A store's fault with dumps armed: the run sees success, and the driver writes the
      // dump later, only while the process still lives (lib/fence/dump_linger.h).
      late_dump = params.value("dump", "");
      line["outcome"] = "ok";
      line["duration_ms"] = 0.5;
    } else if (fake == "sticky" || fake == "sticky-dump" || fake == "abort-dump") {
      // sticky-dump: as a driver with dumps armed, the file params["dump"] is written to
      // CUDA_COREDUMP_FILE (%p: the pid) before the error surfaces. abort-dump: then the
      // driver aborts the process (no skip_abort), and the case reports nothing.
      if (fake != "sticky") write_armed_dump(params.value("dump", ""));
      if (fake == "abort-dump") std::abort();
      line["outcome"] = "cuda_error";
      line["error"] = {{"code", 700},
                       {"name", "cudaErrorIllegalAddress"},
                       {"source", "runtime"},
                       {"surfaced_at", "synchronize"},
                       {"api_call", "cudaDeviceSynchronize"}};
      line["duration_ms"] = 1.5;
      write_all(fd, line.dump() + "\n");
      write_all(fd, "{\"done\":false}\n");
      return 0;
    } else {
      line["outcome"] = "ok";
      line["duration_ms"] = 0.5;
      line["details"]["pid"] = ::getpid();
    }
    write_all(fd, line.dump() + "\n");
  }
  write_all(fd, "{\"done\":true}\n");
  // As cudadiag's own site-run child does after its case: wait for a dump when asked to; the
  // driver writes it meanwhile, then aborts the process.
  if (!late_dump.empty() && std::getenv("CUDADIAG_DUMP_LINGER_MS") && write_armed_dump(late_dump)) std::abort();
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: fake_child exit N | segv | abort | sleep S | ignore-term S | flood BYTES"
               " | result TEXT | env NAME | fd-open N | protocol|__run-case --spec JSON"
               " | escape S | escape-ignore-term S | escape-exit S\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  const char* arg = argc > 2 ? argv[2] : nullptr;
  if (mode == "exit" && arg) return std::atoi(arg);
  if (mode == "segv") std::raise(SIGSEGV);
  if (mode == "abort") std::abort();
  if (mode == "sleep" && arg) {
    sleep_seconds(std::atof(arg));
    return 0;
  }
  if (mode == "ignore-term" && arg) {
    std::signal(SIGTERM, SIG_IGN);
    sleep_seconds(std::atof(arg));
    return 0;
  }
  // A grandchild that left the session; then sleep (escape), sleep deaf to SIGINT and
  // SIGTERM (escape-ignore-term), or exit at once leaving it behind (escape-exit).
  if ((mode == "escape" || mode == "escape-ignore-term" || mode == "escape-exit") && arg) {
    if (mode == "escape-ignore-term") {
      std::signal(SIGTERM, SIG_IGN);
      std::signal(SIGINT, SIG_IGN);
    }
    escape(std::atof(arg), mode == "escape-exit");
    if (mode == "escape-exit") return 0;
    sleep_seconds(std::atof(arg));
    return 0;
  }
  if (mode == "flood" && arg) {
    flood(std::strtoull(arg, nullptr, 10));
    return 0;
  }
  if (mode == "result" && arg) {
    write_all(result_fd(), arg);
    return 0;
  }
  if (mode == "env" && arg) {
    const char* v = std::getenv(arg);
    write_all(result_fd(), v ? v : "<unset>");
    return 0;
  }
  if (mode == "fd-open" && arg) {
    // What a program sees of the result pipe: on stdout, never on the pipe itself.
    const char* v = std::getenv("CUDADIAG_RESULT_FD");
    const bool open = ::fcntl(std::atoi(arg), F_GETFD) != -1;
    std::printf("fd %s %s; CUDADIAG_RESULT_FD=%s\n", arg, open ? "open" : "closed", v ? v : "<unset>");
    return 0;
  }
  // `__run-case` is what the executor passes to the real binary.
  if (mode == "protocol" || mode == "__run-case") return protocol(argc, argv);
  return usage();
}
