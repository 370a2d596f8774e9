#include "report/annotate.h"

#include "taxonomy/taxonomy.h"

namespace cudadiag::report {
namespace {

const taxonomy::ErrorEntry* lookup(const ErrorInfo& e) {
  // The code is authoritative; the name covers errors recorded without a code.
  if (e.code != 0) {
    if (const auto* entry = taxonomy::find(e.code, e.source.value_or(taxonomy::ErrorSource::runtime))) return entry;
  }
  return taxonomy::find_by_name(e.name);
}

}  // namespace

void annotate_error(ErrorInfo& e) {
  const auto* entry = lookup(e);
  if (!entry) {
    e.error_class = taxonomy::ErrorClass::unknown;
    e.sticky = true;  // an unknown error may have corrupted the context: assume it did
    if (e.meaning.empty()) e.meaning = "an error code not in cudadiag's taxonomy";
    if (e.next_step.empty())
      e.next_step =
          "look the code up in driver_types.h (runtime) or cuda.h (driver) and re-run the case "
          "in a fresh process to see whether it repeats";
    return;
  }
  if (e.code == 0) e.code = entry->driver_name == e.name ? entry->driver_code : entry->code;
  if (e.name.empty()) e.name = std::string(e.source == taxonomy::ErrorSource::driver ? entry->driver_name : entry->name);
  if (!e.source)
    e.source = entry->driver_name == e.name ? taxonomy::ErrorSource::driver : taxonomy::ErrorSource::runtime;
  e.error_class = entry->error_class;
  e.sticky = entry->sticky;
  e.meaning = std::string(entry->meaning);
  e.next_step = std::string(entry->next_step);
}

}  // namespace cudadiag::report
