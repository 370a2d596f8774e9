#include <catch2/catch.hpp>

#include "util/cli_docs.h"

using namespace cudadiag;

namespace {

ProgramDoc sample() {
  ProgramDoc d;
  d.name = "cudadiag";
  d.version = "0.1.0";
  d.summary = "triage CUDA illegal-memory-access failures";
  d.footer = "Exit codes: 0 ok, 2 usage";
  d.commands.push_back({"run", ".leading dot and a back\\slash", "Examples:\n  cudadiag run -- ./app",
                        {{{"-o", "--output"}, "FILE", "Write to FILE", {}, false},
                         {{"--format"}, "TEXT", "Output format", {"text", "json", "md"}, false},
                         {{"command"}, "TEXT", "CMD ARGS", {}, true}}});
  d.commands.push_back({"show", "Render a report", "", {{{"--it's"}, "", "a quote in a name", {}, false}}});
  return d;
}

}  // namespace

TEST_CASE("cli docs: the man page escapes roff and lists every command with its options") {
  const std::string man = render_man_page(sample());
  CHECK(man.rfind(".TH CUDADIAG 1 ", 0) == 0);
  CHECK_THAT(man, Catch::Contains(".SS cudadiag run\n\\&.leading dot and a back\\eslash\n"));
  CHECK_THAT(man, Catch::Contains(".B \\-o, \\-\\-output FILE\nWrite to FILE\n"));
  CHECK_THAT(man, Catch::Contains("Output format (one of: text json md)"));
  CHECK_THAT(man, Catch::Contains(".nf\nExamples:\n  cudadiag run \\-\\- ./\\:app\n.fi"));
  CHECK_THAT(man, Catch::Contains(".SH EXIT STATUS\nExit codes: 0 ok, 2 usage"));
  // Positional arguments come before the named options.
  CHECK(man.find(".B command") < man.find(".B \\-o"));
}

TEST_CASE("cli docs: the bash completion offers commands, options and an option's choices, quoted") {
  const std::string bash = render_bash_completion(sample());
  CHECK_THAT(bash, Catch::Contains("compgen -W 'run show'"));
  CHECK_THAT(bash, Catch::Contains("--format) COMPREPLY=($(compgen -W 'text json md' -- \"$cur\")); return ;;"));
  CHECK_THAT(bash, Catch::Contains("compgen -W '-o --output --format'"));
  CHECK_THAT(bash, !Catch::Contains("command"));  // a positional is no option word
  CHECK_THAT(bash, Catch::Contains("'--it'\\''s'"));
  CHECK_THAT(bash, Catch::EndsWith("complete -o filenames -F _cudadiag cudadiag\n"));
}

TEST_CASE("cli docs: comma lists complete after their last comma; a positional's choices replace file names") {
  ProgramDoc d = sample();
  d.commands.push_back({"repro", "Run a suite", "",
                        {{{"--profiles"}, "TEXT", "Profiles", {"native", "blocking"}, false, true},
                         {{"--suite"}, "TEXT", "Suite", {"default", "smoke"}, false}}});
  d.commands.push_back({"fault", "One fault", "", {{{"case"}, "TEXT", "Catalog id", {"fault.oob-write", "fault.x"}, true}}});
  const std::string bash = render_bash_completion(d);
  // --profiles native,bl<TAB>: the word after the comma, kept after "native,".
  CHECK_THAT(bash, Catch::Contains("--profiles) local head=\"\"; [[ $cur == *,* ]] && head=\"${cur%,*},\"; "
                                   "COMPREPLY=($(compgen -P \"$head\" -W 'native blocking' -- \"${cur##*,}\"))"));
  CHECK_THAT(bash, Catch::Contains("--suite) COMPREPLY=($(compgen -W 'default smoke' -- \"$cur\")); return ;;"));
  // fault <TAB>: the catalog's ids, not file names; show <TAB> still file names.
  CHECK_THAT(bash, Catch::Contains("else COMPREPLY=($(compgen -W 'fault.oob-write fault.x' -- \"$cur\")); fi"));
  CHECK_THAT(bash, Catch::Contains("else COMPREPLY=($(compgen -f -- \"$cur\")); fi"));
}

TEST_CASE("cli docs: the man page has an ENVIRONMENT section before EXIT STATUS") {
  ProgramDoc d = sample();
  d.environment = {{"NO_COLOR", "Set and not empty: no colour"}, {"CUDADIAG_REDACT_KEY", "The key"}};
  const std::string man = render_man_page(d);
  CHECK_THAT(man, Catch::Contains(".SH ENVIRONMENT\n.TP\n.B NO_COLOR\nSet and not empty: no colour\n.TP\n.B "
                                  "CUDADIAG_REDACT_KEY\nThe key\n"));
  CHECK(man.find(".SH ENVIRONMENT") < man.find(".SH EXIT STATUS"));
  CHECK_THAT(render_man_page(sample()), !Catch::Contains(".SH ENVIRONMENT"));
}
