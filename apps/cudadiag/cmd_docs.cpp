// `cudadiag docs man|bash` (hidden): the man page and the bash completion script, made
// at build time from this binary's own option parser (lib/util/cli_docs renders them).
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
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
