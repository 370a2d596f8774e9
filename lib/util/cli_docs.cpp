#include "util/cli_docs.h"

#include <cctype>

namespace cudadiag {
namespace {

// Text for roff: backslashes as \e, a line never starting with '.' or '\'', hyphens
// written \- so that option names can be searched for and copied, a break point after
// '|' and '/' so that long lists and paths never overflow a line.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    switch (c) {
      case '\\': out += "\\e"; break;
      case '-': out += "\\-"; break;
      // Lists like "none|32B|64B|128B|..." and paths may break after a bar or a slash.
      case '|': out += "|\\:"; break;
      case '/': out += "/\\:"; break;
      default: out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string option_synopsis(const OptionDoc& o) {
  std::string out;
  for (const auto& n : o.names) out += (out.empty() ? "" : ", ") + n;
  if (!o.value.empty()) out += " " + o.value;
  return out;
}

void options_section(std::string& out, const std::vector<OptionDoc>& options) {
  for (const auto& o : options) {
    out += ".TP\n.B " + roff(option_synopsis(o)) + "\n";
    std::string text = o.description.empty() ? std::string("(no description)") : o.description;
    if (!o.choices.empty()) {
      text += " (one of:";
      for (const auto& c : o.choices) text += " " + c;
      text += ")";
    }
    out += roff(text) + "\n";
  }
}

// A word safe inside a bash single-quoted string.
std::string shell_word(const std::string& w) {
  std::string out;
  for (const char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out;
}

// A bash identifier made of the program's name.
std::string function_name(const std::string& program) {
  std::string out = "_";
  for (const char c : program) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

}  // namespace

std::string render_man_page(const ProgramDoc& doc) {
  std::string upper;
  for (const char c : doc.name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out;
  out += ".TH " + upper + " 1 \"\" \"" + roff(doc.name + " " + doc.version) + "\" \"User Commands\"\n";
  out += ".ad l\n";  // ragged right: option lists and paths have few spaces to stretch
  out += ".SH NAME\n" + roff(doc.name) + " \\- " + roff(doc.summary) + "\n";
  out += ".SH SYNOPSIS\n.B " + roff(doc.name) + "\n.I COMMAND\n[\\fIOPTIONS\\fR]\n";
  out += ".SH DESCRIPTION\n" + roff(doc.summary) + "\n";
  if (!doc.options.empty()) {
    out += ".SH OPTIONS\n";
    options_section(out, doc.options);
  }
  out += ".SH COMMANDS\n";
  for (const auto& c : doc.commands) {
    out += ".SS " + roff(doc.name + " " + c.name) + "\n" + roff(c.description) + "\n";
    std::vector<OptionDoc> positional, named;
    for (const auto& o : c.options) (o.positional ? positional : named).push_back(o);
    options_section(out, positional);
    options_section(out, named);
    if (!c.footer.empty()) out += ".PP\n.nf\n" + roff(c.footer) + "\n.fi\n";
  }
  if (!doc.environment.empty()) {
    out += ".SH ENVIRONMENT\n";
    for (const auto& e : doc.environment) out += ".TP\n.B " + roff(e.name) + "\n" + roff(e.description) + "\n";
  }
  if (!doc.footer.empty()) out += ".SH EXIT STATUS\n" + roff(doc.footer) + "\n";
  return out;
}

namespace {

// The COMPREPLY line for a set of words: the current word completed from them, or for a
// comma list the part after its last comma, kept after what comes before it.
std::string reply_from(const OptionDoc& o) {
  std::string list;
  for (const auto& ch : o.choices) list += (list.empty() ? "" : " ") + ch;
  if (!o.comma_list) return "COMPREPLY=($(compgen -W '" + shell_word(list) + "' -- \"$cur\"))";
  return "local head=\"\"; [[ $cur == *,* ]] && head=\"${cur%,*},\"; COMPREPLY=($(compgen -P \"$head\" -W '" +
         shell_word(list) + "' -- \"${cur##*,}\")); compopt -o nospace 2>/dev/null";
}

}  // namespace

std::string render_bash_completion(const ProgramDoc& doc) {
  const std::string fn = function_name(doc.name);
  std::string out;
  out += "# bash completion for " + doc.name + " (generated from its option parser)\n";
  out += fn + "() {\n";
  out += "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n";
  out += "  local cmd=${COMP_WORDS[1]}\n";
  out += "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n";
  std::string commands, program_options;
  for (const auto& c : doc.commands) commands += (commands.empty() ? "" : " ") + c.name;
  for (const auto& o : doc.options)
    for (const auto& n : o.names) program_options += " " + n;
  out += "    COMPREPLY=($(compgen -W '" + shell_word(commands + program_options) + "' -- \"$cur\"))\n";
  out += "    return\n  fi\n";
  out += "  case $cmd in\n";
  for (const auto& c : doc.commands) {
    std::string words, choices, otherwise = "COMPREPLY=($(compgen -f -- \"$cur\"))";
    for (const auto& o : c.options) {
      if (o.positional) {
        if (!o.choices.empty()) otherwise = reply_from(o);
        continue;
      }
      for (const auto& n : o.names) words += (words.empty() ? "" : " ") + n;
      if (!o.choices.empty()) {
        std::string pattern;
        for (const auto& n : o.names) pattern += (pattern.empty() ? "" : "|") + n;
        choices += "        " + pattern + ") " + reply_from(o) + "; return ;;\n";
      }
    }
    out += "    " + c.name + ")\n";
    if (!choices.empty()) out += "      case $prev in\n" + choices + "      esac\n";
    out += "      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W '" + shell_word(words) + "' -- \"$cur\")); else " +
           otherwise + "; fi\n";
    out += "      ;;\n";
  }
  out += "  esac\n}\n";
  out += "complete -o filenames -F " + fn + " " + doc.name + "\n";
  return out;
}

}  // namespace cudadiag
