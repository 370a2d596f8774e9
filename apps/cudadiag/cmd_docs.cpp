// `cudadiag docs man|bash` (hidden): the man page and the bash completion script, made
// at build time from this binary's own option parser (lib/util/cli_docs renders them).
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "cases/catalog.h"
#include "commands.h"
#include "profiles/profile.h"
#include "run/rungs.h"
#include "suite/suite.h"
#include "util/build_info.h"
#include "util/choices.h"
#include "util/cli_docs.h"
#include "util/errors.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

// What `cudadiag docs` writes: the man page or the bash completion script.
enum class DocKind : std::uint8_t { man, bash };
inline constexpr ChoiceTable<DocKind, 2> kDocKinds{{{DocKind::man, "man"}, {DocKind::bash, "bash"}}};

// "TEXT:{text,json,md}" -> text, json, md: the words an IsMember check accepts.
std::vector<std::string> choices_of(const std::string& type_name) {
  const auto open = type_name.find('{');
  const auto close = type_name.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  std::vector<std::string> out;
  std::string word;
  for (std::size_t i = open + 1; i <= close; ++i) {
    if (type_name[i] == ',' || i == close) {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += type_name[i];
    }
  }
  return out;
}

OptionDoc option_doc(const CLI::Option& o) {
  OptionDoc d;
  for (const auto& s : o.get_snames()) d.names.push_back("-" + s);
  for (const auto& l : o.get_lnames()) d.names.push_back("--" + l);
  d.positional = d.names.empty();
  if (d.positional) d.names.push_back(o.get_name());
  const std::string type = o.get_type_name();
  if (o.get_type_size_max() > 0) d.value = type.substr(0, type.find(':'));
  d.description = o.get_description();
  d.choices = choices_of(type);
  return d;
}

std::vector<OptionDoc> options_of(const CLI::App& app) {
  std::vector<OptionDoc> out;
  for (const CLI::Option* o : app.get_options())
    if (!o->get_group().empty()) out.push_back(option_doc(*o));
  return out;
}

// The words an option or positional takes that its parser reads itself (comma lists,
// catalog ids): taken from the tables the parsers use, so completion offers what is
// accepted and nothing else.
struct WordsOf {
  const char* command;
  const char* option;  // "--rungs", or a positional's name
  std::vector<std::string> (*words)();
  bool comma_list;
};

std::vector<std::string> rung_words() {
  std::vector<std::string> out;
  for (const run::Rung r : run::all_rungs()) out.emplace_back(run::to_string(r));
  return out;
}
std::vector<std::string> case_id_words() {
  std::vector<std::string> out;
  for (const auto& c : cases::all_cases()) out.push_back(c.id);
  return out;
}
std::vector<std::string> fault_case_words() {
  std::vector<std::string> out;
  for (const auto& c : cases::all_cases())
    if (c.family == cases::Family::fault) out.push_back(c.id);
  return out;
}
std::vector<std::string> kernel_family_words() {
  std::vector<std::string> out;
  for (const auto& f : cases::families()) out.emplace_back(cases::to_string(f.id));
  return out;
}
std::vector<std::string> profile_words() { return profiles::base_profile_names(); }

const WordsOf kWordsOf[] = {
    {"run", "--rungs", rung_words, true},          {"repro", "--suite", suite::embedded_suite_names, false},
    {"repro", "--profiles", profile_words, true},  {"repro", "--case", case_id_words, false},
    {"fault", "case", fault_case_words, false},      {"list", "--kernel", kernel_family_words, false},
};

void add_words(CommandDoc& c) {
  for (const auto& w : kWordsOf) {
    if (c.name != w.command) continue;
    for (auto& o : c.options)
      if (std::find(o.names.begin(), o.names.end(), w.option) != o.names.end()) {
        o.choices = w.words();
        o.comma_list = w.comma_list;
      }
  }
}

// The environment variables cudadiag reads (its children's own, set by cudadiag, are
// not listed: CUDADIAG_RING*, CUDADIAG_FENCE_*, CUDADIAG_RESULT_FD).
std::vector<EnvironmentDoc> environment_doc() {
  return {
      {"NO_COLOR", "Set and not empty: no colour in the text and the log (as --no-color). Empty or unset: colour "
                   "on a terminal only."},
      {"COLUMNS", "The width text views are laid out for, in columns; else the terminal's width, else 80."},
      {"CUDADIAG_REDACT_KEY_FILE", "A file holding the site's key for --redact's tokens, when --redact-key gives "
                                   "none; reports redacted with one key pair up."},
      {"CUDADIAG_REDACT_KEY", "The key itself, when neither --redact-key nor CUDADIAG_REDACT_KEY_FILE gives one."},
      {"CUDADIAG_NVDISASM", "The nvdisasm that reads the fault site out of GPU core dumps (else PATH, CUDA_HOME, "
                            "/usr/local/cuda)."},
      {"CUDA_VISIBLE_DEVICES", "The GPUs this job may use: env and repro list and run on these only. Without "
                               "it, Slurm's SLURM_STEP_GPUS or SLURM_JOB_GPUS, or GPU_DEVICE_ORDINAL."},
      {"CUDA_DEVICE_MAX_CONNECTIONS", "Kept when set; else set to 1 in every case child of repro."},
      {"CUDA_HOME", "Where compute-sanitizer and nvdisasm are looked for after PATH (then CUDA_PATH)."},
      {"PATH", "Where run's command, compute-sanitizer and nvdisasm are looked for (run --env PATH=... first)."},
      {"LD_PRELOAD", "run's fence rungs put the program's own preloads after the interposer."},
      {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
       "With this or another of the driver's core dump variables set (CUDA_COREDUMP_FILE, ...), run, repro, "
       "fault and index-select keep the user's GPU core dump settings, arm none of their own and say so once."},
      {"TMPDIR", "Where the rings, memcheck's files and GPU core dumps of a run are written (else /tmp)."},
  };
}

ProgramDoc program_doc(const CLI::App& root) {
  ProgramDoc doc;
  doc.name = "cudadiag";
  doc.version = build_info().version;
  doc.summary = root.get_description();
  if (doc.summary.rfind(doc.name + ": ", 0) == 0) doc.summary.erase(0, doc.name.size() + 2);
  doc.footer = root.get_footer();
  doc.options = options_of(root);
  for (const CLI::App* sub : root.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    doc.commands.push_back({sub->get_name(), sub->get_description(), sub->get_footer(), options_of(*sub)});
  for (auto& c : doc.commands) add_words(c);
  doc.environment = environment_doc();
  return doc;
}

}  // namespace

void set_docs_command(CLI::App& app) {
  auto kind = std::make_shared<DocKind>(DocKind::man);
  auto* cmd = app.add_subcommand("docs", "");  // empty description: hidden
  cmd->group("");
  cmd->add_option_function<std::string>(
         "kind", [kind](const std::string& s) { *kind = *parse_choice(kDocKinds, s); }, "man or bash")
      ->required()
      ->check(CLI::IsMember(choice_names(kDocKinds)));
  cmd->callback([kind, &app] {
    const ProgramDoc doc = program_doc(app);
    std::cout << (*kind == DocKind::man ? render_man_page(doc) : render_bash_completion(doc));
    std::cout.flush();
    if (!std::cout) throw UsageError("cannot write to standard output");
    set_exit_code(kExitOk);
  });
}

}  // namespace cudadiag::app
