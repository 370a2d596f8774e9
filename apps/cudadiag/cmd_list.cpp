// `cudadiag list`: the case catalog (every kernel family) with the outcome a healthy
// host gives under each profile.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "cases/catalog.h"
#include "cli_common.h"
#include "commands.h"
#include "util/text_layout.h"
#include "report/render.h"
#include "util/errors.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

const std::vector<std::string>& listed_profiles() {
  static const std::vector<std::string> p = {"default", "blocking", "nocache", "fence", "blocking+fence", "sanitizer"};
  return p;
}

struct ListOptions {
  CommonOptions common;
  std::string kernel;  // filter; empty: all
};

std::vector<const cases::CaseDef*> selected(const ListOptions& o) {
  const cases::KernelFamily* only = o.kernel.empty() ? nullptr : cases::find_family(o.kernel);
  if (!o.kernel.empty() && !only)
    throw UsageError("--kernel: unknown family '" + o.kernel + "' (known: " + cases::family_names() + ")");
  std::vector<const cases::CaseDef*> out;
  for (const auto& c : cases::all_cases())
    if (!only || c.family == only->id) out.push_back(&c);
  return out;
}

std::string render_json(const std::vector<const cases::CaseDef*>& list) {
  cases::json arr = cases::json::array();
  for (const auto* c : list) {
    cases::json expected = cases::json::object();
    for (const auto& p : listed_profiles()) expected[p] = cases::expectation_text(*c, p);
    arr.push_back(cases::json{{"id", c->id},
                              {"kernel", cases::to_string(c->family)},
                              {"title", c->title},
                              {"params", c->params},
                              {"fence_allocator", profiles::to_string(c->fence_allocator)},
                              {"deadline_ms", c->deadline_ms},
                              {"host_only", c->host_only},
                              {"expects_fault", c->expects_fault},
                              {"tags", c->tags},
                              {"expected", expected},
                              {"expected_raw", cases::to_json(c->expected)}});
  }
  return report::dump_json(cases::json{{"cases", arr}, {"profiles", listed_profiles()}}, 2) + "\n";
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

// At 80 columns: the family's line, then per case its id, its title and its expectations
// per profile, each wrapped under its own indent.
std::string render_text(const std::vector<const cases::CaseDef*>& list) {
  std::string out;
  std::optional<cases::Family> family;
  for (const auto* c : list) {
    if (c->family != family) {
      family = c->family;
      out += (out.empty() ? "" : "\n") +
             text::hanging("", "  ", fmt::format("{}: {}", cases::to_string(c->family),
                                                 cases::family(c->family).description));
    }
    out += "  " + c->id + "\n" + text::hanging("      ", "      ", c->title);
    std::string expected;
    for (const auto& p : listed_profiles())
      expected += fmt::format("{}{}={}", expected.empty() ? "" : " ", p, or_dash(cases::expectation_text(*c, p)));
    if (c->family == cases::Family::fault || c->fence_allocator != profiles::Allocator::fence_back)
      expected += fmt::format("  fence-allocator={}", profiles::to_string(c->fence_allocator));
    out += text::hanging("      ", "      ", expected);
  }
  out += "\n" + text::hanging("", fmt::format("{} cases. Expectations: ok, mismatch, silent (ok or mismatch), "
                                              "error:<class|code>, timeout; '|' separates alternatives.",
                                              list.size()));
  return out;
}

std::string md_cell(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else out += ch;
  }
  return out.empty() ? "-" : out;
}

std::string render_md(const std::vector<const cases::CaseDef*>& list) {
  std::string out = "# cudadiag case catalog\n\n| id | kernel | reproduces |";
  for (const auto& p : listed_profiles()) out += " " + p + " |";
  out += "\n|---|---|---|";
  for (size_t i = 0; i < listed_profiles().size(); ++i) out += "---|";
  out += "\n";
  for (const auto* c : list) {
    out += fmt::format("| `{}` | {} | {} |", c->id, cases::to_string(c->family), md_cell(c->title));
    for (const auto& p : listed_profiles()) out += " " + md_cell(cases::expectation_text(*c, p)) + " |";
    out += "\n";
  }
  return out;
}

void run_list(const ListOptions& o) {
  configure_logging(o.common);
  const auto list = selected(o);
  std::string text;
  switch (report::parse_format(o.common.format)) {
    case report::Format::json: text = render_json(list); break;
    case report::Format::md: text = render_md(list); break;
    case report::Format::text: text = render_text(list); break;
  }
  emit_text(text, o.common);
  set_exit_code(kExitOk);
}

}  // namespace

void set_list_command(CLI::App& app) {
  auto opts = std::make_shared<ListOptions>();
  auto* cmd = app.add_subcommand("list", "Print the case catalog with the expected outcome per profile");
  cmd->add_option("--kernel", opts->kernel, "Only this family (" + cases::family_names() + "; '-' or '_' alike)")
      ->type_name("FAMILY");
  add_common_options(cmd, opts->common);
  set_help_footer(cmd, "Exit codes: 0 listed, 2 bad input.",
                  {"cudadiag list --kernel index-select", "cudadiag list -o catalog.md"});
  cmd->callback([opts] { run_list(*opts); });
}

}  // namespace cudadiag::app
