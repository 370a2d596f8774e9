#pragma once
// The command line described once, as data, and two documents made from it at build
// time: a man page (roff) and a bash completion script. The binary fills the model
// from its own option parser (apps/cudadiag/cli_docs_model.cpp), so neither document
// can drift from what the binary accepts.
#include <string>
#include <vector>

namespace cudadiag {

struct OptionDoc {
  std::vector<std::string> names;  // "-o", "--output" (a positional: its name alone, no dash)
  std::string value;               // what it takes ("FILE", "TEXT", ...); empty for a flag
  std::string description;
  std::vector<std::string> choices;  // the words it accepts, when a fixed set
  bool positional = false;
  bool comma_list = false;  // a comma-separated list of choices ("native,fence")
};

// An environment variable the program reads, and what it does with it.
struct EnvironmentDoc {
  std::string name;  // "NO_COLOR"
  std::string description;
};

struct CommandDoc {
  std::string name;         // "repro"
  std::string description;  // one paragraph
  std::string footer;       // examples and exit codes, as the help prints them
  std::vector<OptionDoc> options;
};

struct ProgramDoc {
  std::string name;  // "cudadiag"
  std::string version;
  std::string summary;
  std::string footer;  // exit codes
  std::vector<OptionDoc> options;  // the program's own (--help, --version)
  std::vector<CommandDoc> commands;
  std::vector<EnvironmentDoc> environment;
};

// roff (man(7)) for section 1: NAME, SYNOPSIS, DESCRIPTION, COMMANDS (each with its
// options), ENVIRONMENT, EXIT STATUS. Text is escaped: a leading dot or quote, backslashes, hyphens
// in option names.
std::string render_man_page(const ProgramDoc& doc);

// A bash completion script (`complete -F`): the subcommands as the first word, each
// subcommand's options after it, the fixed choices of an option after the option (the
// word after the last comma of a comma list), a positional's choices where a word that
// is no option goes, file names elsewhere.
std::string render_bash_completion(const ProgramDoc& doc);

}  // namespace cudadiag
