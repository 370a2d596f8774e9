#include "runner/ending.h"

#include "util/choices.h"

namespace cudadiag::runner {
namespace {

constexpr ChoiceTable<Ending, 6> kEndings{{
    {Ending::result, "result"},
    {Ending::exit_code, "exit"},
    {Ending::signal, "signal"},
    {Ending::timeout, "timeout"},
    {Ending::no_result, "no_result"},
    {Ending::spawn_failed, "spawn_failed"},
}};

}  // namespace

std::string_view to_string(Ending e) { return choice_name(kEndings, e); }
std::optional<Ending> parse_ending(std::string_view text) { return parse_choice(kEndings, text); }

}  // namespace cudadiag::runner
