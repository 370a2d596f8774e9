#include "cli_common.h"

#include <unistd.h>

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <thread>

#include "evidence/interruption.h"
#include "host/host_facts.h"
#include "report/redact.h"
#include "report/render.h"
#include "runner/runner.h"
#include "util/atomic_file.h"
#include "util/interrupt.h"
#include "util/log.h"
#include "util/printable.h"
#include "util/terminal.h"
#include "util/text_layout.h"

namespace cudadiag::app {
CLI::Option* add_coredump_option(CLI::App* cmd, bool& target, const std::string& armed_where) {
  target = true;
  CLI::Option* off = cmd->add_flag_callback(
      "--no-coredump", [&target] { target = false; },
      "Arm no GPU core dumps. By default " + armed_where +
          " (CUDA_ENABLE_COREDUMP_ON_EXCEPTION; never under memcheck, and never over the program's own "
          "CUDA_COREDUMP_* settings) and the fault site is read from them: kernel, line, thread, faulting address "
          "(the driver ends the process after the dump; the kernel log's Xid 31 lines then carry no address)");
  // Scripts written when dumps had to be asked for keep working (--no-coredump wins).
  cmd->add_flag_callback("--coredump", [] {}, "Accepted and ignored: GPU core dumps are armed by default");
  return off;
}

namespace {
Invocation g_invocation;

// Every paragraph of `text` wrapped at 80 columns; a line's own leading spaces are its
// indent, and its continuation lines indent two more (an example's comment, a long list).
std::string wrap_block(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(start, nl - start);
    const std::size_t lead = std::min(line.find_first_not_of(' '), line.size());
    const std::string indent(lead, ' ');
    out += line.empty() ? "\n" : text::hanging(indent, indent + "  ", line.substr(lead));
    start = nl + 1;
  }
  return out;
}

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(30); }

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return entry(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt),
                 get_column_width());
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    return entry(sub->get_display_name(true), sub->get_description(), kCommandColumn);
  }
  std::string make_description(const CLI::App* app) const override {
    const std::string d = CLI::Formatter::make_description(app);
    return d.empty() ? d : wrap_block(d.substr(0, d.size() - 1));
  }
  std::string make_usage(const CLI::App* app, std::string name) const override {
    const std::string u = CLI::Formatter::make_usage(app, std::move(name));
    return text::hanging("", "       ", u.substr(0, u.find_last_not_of('\n') + 1));
  }
  std::string make_footer(const CLI::App* app) const override {
    const std::string f = app->get_footer();
    return f.empty() ? f : wrap_block(f);
  }

 private:
  // "  --name TYPE   description wrapped under its column"; a name too wide for the
  // column takes a line of its own (wrapped itself if it must).
  static constexpr std::size_t kCommandColumn = 16;  // subcommand names are short
  std::string entry(const std::string& name, const std::string& description, std::size_t col) const {
    const std::string head = "  " + name;
    const std::string indent(col, ' ');
    if (description.empty()) return text::hanging(head, "      ", "");
    if (text::display_width(head) + 1 > col)
      return text::hanging("  ", "      ", name) + text::hanging(indent, indent, description);
    return text::hanging(text::pad_right(head, col), indent, description);
  }
};

}  // namespace

void use_help_formatter(CLI::App& root) { root.formatter(std::make_shared<HelpFormatter>()); }

void set_help_footer(CLI::App* cmd, const std::string& notes, const std::vector<std::string>& examples) {
  std::string footer = notes;
  if (!examples.empty()) footer += std::string(footer.empty() ? "" : "\n") + (examples.size() == 1 ? "Example:" : "Examples:");
  for (const auto& e : examples) footer += "\n  " + e;
  cmd->footer(footer);
}

const Invocation& invocation() { return g_invocation; }
void set_invocation(Invocation inv) { g_invocation = std::move(inv); }

evidence::Parent parent_process() {
  evidence::Parent p;
  p.self_exe = g_invocation.self_exe;
  for (char** e = g_invocation.envp; e && *e; ++e) {
    const std::string_view kv(*e);
    p.env_names.emplace_back(kv.substr(0, kv.find('=')));
  }
  p.getenv = [](const char* name) { return static_cast<const char*>(std::getenv(name)); };
  p.host_facts = [exe = g_invocation.self_exe] { return host::gather_host_facts(exe); };
  p.cpus = std::thread::hardware_concurrency();
  p.stop = &stop_flag();
  return p;
}

void add_common_options(CLI::App* cmd, CommonOptions& opts) {
  CLI::Option* format = cmd->add_option("--format", opts.format,
                                         "Output format (default: from -o's extension .json/.md/.txt, else text)")
                            ->check(CLI::IsMember({"text", "json", "md"}))
                            ->capture_default_str();
  cmd->add_option("-o,--output", opts.output,
                  "Write the output to FILE instead of stdout (- is stdout): atomically, as a new file owned by you, "
                  "mode 0644 or tighter; another user's link or file in a shared directory, or a FIFO, is refused. "
                  "Checked before any work starts")
      ->type_name("FILE");
  cmd->add_flag("-q,--quiet", opts.quiet, "Only errors on stderr");
  cmd->add_flag("-v,--verbose", opts.verbose, "More detail on stderr (repeat for debug)");
  cmd->add_flag("--redact", opts.redact,
                "Replace the hostname (long and short, any case), serials, UUIDs, PCI ids and run's --env values "
                "with tokens, wherever they appear: keyed by the site key (--redact-key, CUDADIAG_REDACT_KEY_FILE, "
                "CUDADIAG_REDACT_KEY) so reports of one key pair up, else random per report");
  cmd->add_option("--redact-key", opts.redact_key_file,
                  "File holding the site's redaction key (16 bytes or more, not readable by every user); implies "
                  "--redact")
      ->type_name("FILE");
  cmd->add_flag("--no-color", opts.no_color, "Never use colour (NO_COLOR is honoured too)");
  // Once the options are read, before the command's work: -o FILE.json / .md picks the
  // format unless --format was given, and an output path that cannot be written is an
  // error now (exit 2), not after a long run.
  cmd->parse_complete_callback([&opts, format] {
    if (format->count() == 0)
      if (const auto f = report::format_for_path(opts.output)) opts.format = std::string(report::to_string(*f));
    check_output_path(opts.output);
    opts.report_format = report::parse_format(opts.format);
    opts.color = use_color(opts);
    opts.output_shown = printable(opts.output);
    if (!opts.redact_key_file.empty()) opts.redact = true;
    if (opts.redact)
      opts.redaction = report::redaction_tokens(opts.redact_key_file, [](const char* name) {
        return static_cast<const char*>(std::getenv(name));
      });
  });
}

CLI::Option* add_allocator_option(CLI::App* cmd, profiles::Allocator& target) {
  std::vector<std::string> names{"fence"};
  for (const auto& a : profiles::kAllocators) names.emplace_back(a.name);
  return cmd
      ->add_option_function<std::string>(
          "--allocator", [&target](const std::string& s) { target = *profiles::parse_allocator(s); },
          "Device memory for the buffers: pool (slabs: overruns silent), direct (one cudaMalloc per buffer), "
          "fence-back / fence-front (flush against unmapped memory: one element past the end / before the start "
          "faults); fence means fence-back (default pool)")
      ->check(CLI::IsMember(names));
}

namespace {

// 10000000 rather than 1e+07: ranges read as the numbers a user types.
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:g}", v);
}

std::string shown_input(const std::string& text) { return "'" + printable(text) + "'"; }

// A decimal whole number within [min, max] (T's own range at most); "" when it is one.
template <class T>
std::string check_whole_number(const std::string& text, T min, T max, const std::string& range) {
  T v{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ptr != end || ec == std::errc::invalid_argument)
    return "expected a whole number in " + range + ", got " + shown_input(text);
  if (ec == std::errc::result_out_of_range || v < min || v > max)
    return "expected a whole number in " + range + ", got " + shown_input(text) + " (out of range)";
  return "";
}

}  // namespace

CLI::Validator integer_between(long long min, long long max) {
  const std::string range = fmt::format("{}..{}", min, max);
  return CLI::Validator([=](std::string& text) { return check_whole_number(text, min, max, range); },
                        range);
}

CLI::Validator unsigned_between(std::uint64_t min, std::uint64_t max) {
  const std::string range = fmt::format("{}..{}", min, max);
  return CLI::Validator([=](std::string& text) { return check_whole_number(text, min, max, range); },
                        range);
}

CLI::Validator number_between(double min, double max, const std::string& unit, bool open_min, bool open_max) {
  const std::string what = unit.empty() ? "a number" : "a number of " + unit;
  std::string range;
  if (!open_min && !open_max) {
    range = "in " + number_text(min) + ".." + number_text(max);
  } else {
    range = std::string(open_min ? "above " : "from ") + number_text(min) + (open_max ? " and below " : " up to ") +
            number_text(max);
  }
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(text.front())) ||
            !std::isfinite(v))
          return "expected " + what + " " + range + ", got " + shown_input(text);
        const bool low = open_min ? !(v > min) : !(v >= min);
        const bool high = open_max ? !(v < max) : !(v <= max);
        if (low || high) return "expected " + what + " " + range + ", got " + shown_input(text) + " (out of range)";
        return "";
      },
      // The help's type column: "FLOAT:0..1", "FLOAT:above 0 up to 10000000 seconds".
      (range.rfind("in ", 0) == 0 ? range.substr(3) : range) + (unit.empty() ? "" : " " + unit));
}

CLI::Validator seconds_between(double min, double max) { return number_between(min, max, "seconds"); }

CLI::Option* add_repeat_option(CLI::App* cmd, int& target, const std::string& what) {
  return cmd->add_option("--repeat", target, what)->check(integer_between(1, kMaxRepeat))->type_name("N");
}

CLI::Option* add_timeout_option(CLI::App* cmd, double& seconds, const std::string& what, CLI::Validator range) {
  return cmd->add_option("--timeout", seconds, what)->check(std::move(range))->type_name("SECONDS");
}

void add_deprecated_ms_alias(CLI::App* cmd, const std::string& name, double& seconds, const std::string& instead,
                             long long max_ms) {
  // Checked here, not with ->check(): CLI11 names a hidden option "" in its messages.
  cmd->add_option_function<std::string>(
         name,
         [&seconds, name, instead, max_ms](std::string text) {
           const std::string error = integer_between(1, max_ms)(text);
           if (!error.empty()) throw CLI::ValidationError(name, error);
           spdlog::warn("{} is deprecated: use {} (seconds)", name, instead);
           seconds = static_cast<double>(std::stoll(text)) / 1000.0;
         },
         "")
      ->group("");
}

void add_seed_options(CLI::App* cmd, std::string& seed, std::string* replay, const std::string& what) {
  cmd->add_option("--seed", seed,
                  "Base seed of the repeat series, decimal or 0x hex (default: a fresh one, in the report's "
                  "details.series_seed); run i draws " + what + " from its own seed")
      ->type_name("SEED");
  if (replay)
    cmd->add_option("--replay", *replay,
                    "Run once with exactly this run seed (a report's details.first_failure.seed)")
        ->type_name("SEED");
}

std::string usage_message(const std::string& command, const std::string& what) {
  std::string text = what;
  if (!command.empty()) {
    if (text.rfind(command + ": ", 0) == 0) text.erase(0, command.size() + 2);
    else if (text.rfind(command + " ", 0) == 0) text.erase(0, command.size() + 1);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return "cudadiag" + (command.empty() ? std::string() : " " + command) + ": " + printable(text);
}

void print_usage_error(const std::string& command, const std::string& what) {
  std::fputs((usage_message(command, what) + "\n").c_str(), stderr);
  std::fflush(stderr);
}

std::string subcommand_of(const CLI::App& root, const std::vector<std::string>& argv) {
  if (argv.size() < 2 || argv[1].empty() || argv[1][0] == '-') return "";
  const auto found = root.get_subcommands([&](const CLI::App* sub) { return sub->check_name(argv[1]); });
  return found.empty() ? "" : found.front()->get_name();
}

void configure_logging(const CommonOptions& opts) {
  if (opts.no_color) init_logging(false);
  if (opts.quiet) {
    spdlog::set_level(spdlog::level::err);
  } else if (opts.verbose >= 2) {
    spdlog::set_level(spdlog::level::trace);
  } else if (opts.verbose == 1) {
    spdlog::set_level(spdlog::level::debug);
  } else {
    spdlog::set_level(spdlog::level::info);
  }
}

bool use_color(const CommonOptions& opts) {
  if (opts.no_color || text::no_color_from_env()) return false;
  if (!opts.output.empty() && opts.output != "-") return false;
  return ::isatty(STDOUT_FILENO) != 0;
}

void emit_text(const std::string& text, const CommonOptions& opts) {
  // A report that cannot go where asked is kept in a private file named in the error.
  const report::Format format = opts.report_format;
  const char* extension = format == report::Format::json ? "json" : format == report::Format::md ? "md" : "txt";
  write_report(opts.output, text, extension);
  if (!opts.output.empty() && opts.output != "-") spdlog::info("wrote {}", opts.output_shown);
}

void mark_interrupted(report::Report& r) {
  if (!stop_requested()) return;
  evidence::record_interruption(r, true, "interrupted by " + runner::signal_name(stop_signal()) + ": results so far only");
}

report::RedactionInputs redaction_inputs(const CommonOptions& opts, report::RedactionInputs secrets) {
  secrets.tokens = opts.redaction;
  return secrets;
}

void emit_report(report::Report& r, const CommonOptions& opts, const report::RedactionInputs& secrets) {
  mark_interrupted(r);
  if (opts.redact) {
    report::RedactionInputs inputs = secrets;
    inputs.tokens = opts.redaction;
    report::redact(r, inputs);  // the typed report: no JSON round trip
  }
  emit_text(report::render(r, opts.report_format, opts.color, opts.verbose > 0), opts);
}

}  // namespace cudadiag::app
