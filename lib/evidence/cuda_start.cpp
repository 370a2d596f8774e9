#include "evidence/cuda_start.h"

namespace cudadiag::evidence {

bool cuda_could_not_start(taxonomy::ErrorClass error_class) {
  return error_class == taxonomy::ErrorClass::no_device || error_class == taxonomy::ErrorClass::driver_mismatch;
}

bool cuda_could_not_start(const report::Result& r) {
  return r.outcome == report::Outcome::cuda_error && r.error && cuda_could_not_start(r.error->error_class);
}

}  // namespace cudadiag::evidence
