#include <catch2/catch.hpp>

#include "report/annotate.h"

using cudadiag::report::ErrorInfo;
using cudadiag::report::annotate_error;

TEST_CASE("annotate_error fills class, sticky, meaning and next step from a runtime code") {
  ErrorInfo e;
  e.code = 700;
  e.source = cudadiag::taxonomy::ErrorSource::runtime;
  e.name = "cudaErrorIllegalAddress";
  annotate_error(e);
  CHECK(e.error_class == cudadiag::taxonomy::ErrorClass::memory_fault);
  CHECK(e.sticky);
  CHECK(e.meaning.find("address") != std::string::npos);
  CHECK(e.next_step.find("fence") != std::string::npos);
  CHECK(e.code == 700);
  CHECK(e.name == "cudaErrorIllegalAddress");
}

TEST_CASE("annotate_error uses the driver table for driver errors") {
  ErrorInfo e;
  e.code = 2;
  e.source = cudadiag::taxonomy::ErrorSource::driver;
  annotate_error(e);
  CHECK(e.error_class == cudadiag::taxonomy::ErrorClass::out_of_memory);
  CHECK_FALSE(e.sticky);
  CHECK(e.name == "CUDA_ERROR_OUT_OF_MEMORY");
}

TEST_CASE("a runtime-only code reported as driver is not mistaken for another error") {
  ErrorInfo e;
  e.code = 9;
  e.source = cudadiag::taxonomy::ErrorSource::driver;  // no CUresult 9 exists
  annotate_error(e);
  CHECK(e.error_class == cudadiag::taxonomy::ErrorClass::unknown);
  CHECK(e.sticky);
}

TEST_CASE("annotate_error falls back to the name when the code is missing") {
  ErrorInfo e;
  e.name = "CUDA_ERROR_MISALIGNED_ADDRESS";
  annotate_error(e);
  CHECK(e.error_class == cudadiag::taxonomy::ErrorClass::misaligned);
  CHECK(e.sticky);
  CHECK(e.code == 716);
  CHECK(e.source == cudadiag::taxonomy::ErrorSource::driver);

  ErrorInfo r;
  r.name = "cudaErrorInvalidConfiguration";
  annotate_error(r);
  CHECK(r.error_class == cudadiag::taxonomy::ErrorClass::launch_config);
  CHECK_FALSE(r.sticky);
  CHECK(r.code == 9);
  CHECK(r.source == cudadiag::taxonomy::ErrorSource::runtime);
}

TEST_CASE("unknown errors are classed unknown and assumed sticky") {
  ErrorInfo e;
  e.code = 4242;
  e.source = cudadiag::taxonomy::ErrorSource::runtime;
  e.name = "cudaErrorFromTheFuture";
  annotate_error(e);
  CHECK(e.error_class == cudadiag::taxonomy::ErrorClass::unknown);
  CHECK(e.sticky);
  CHECK_FALSE(e.next_step.empty());
  CHECK(e.code == 4242);
  CHECK(e.name == "cudaErrorFromTheFuture");
}

TEST_CASE("annotate_error overwrites stale taxonomy fields but keeps the context") {
  ErrorInfo e;
  e.code = 710;
  e.source = cudadiag::taxonomy::ErrorSource::runtime;
  e.error_class = cudadiag::taxonomy::ErrorClass::memory_fault;
  e.sticky = false;
  e.api_call = "cudaDeviceSynchronize";
  e.surfaced_at = "synchronize";
  e.message = "device-side assert triggered";
  annotate_error(e);
  CHECK(e.error_class == cudadiag::taxonomy::ErrorClass::device_assert);
  CHECK(e.sticky);
  CHECK(e.api_call == "cudaDeviceSynchronize");
  CHECK(e.surfaced_at == "synchronize");
  CHECK(e.message == "device-side assert triggered");
  CHECK(e.name == "cudaErrorAssert");
}
