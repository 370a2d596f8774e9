# Helpers the CLI check scripts (tests/cli/*_check.cmake) share; include() it.

# expect_eq(WHAT GOT WANT): fails naming WHAT unless GOT is WANT (as strings).
function(expect_eq what got want)
  if(NOT "${got}" STREQUAL "${want}")
    message(FATAL_ERROR "${what}: got '${got}', expected '${want}'")
  endif()
endfunction()

# skip_when_available(DOC PART WHY): ends the check as skipped, saying WHY, when the report
# in the variable DOC found the machine's own PART (driver.PART.available: libcuda, nvml),
# which a check with a fake or no driver cannot control.
macro(skip_when_available doc part why)
  string(JSON _available GET "${${doc}}" driver ${part} available)
  if(_available)
    message("SKIPPED: ${why}")
    return()
  endif()
endmacro()

# expect_devices(DOC COUNT INDEX UUID): the report lists COUNT devices, device INDEX with UUID.
function(expect_devices doc count index uuid)
  string(JSON n LENGTH "${doc}" devices)
  expect_eq("devices listed" "${n}" "${count}")
  string(JSON u GET "${doc}" devices ${index} uuid)
  expect_eq("device ${index}'s uuid" "${u}" "${uuid}")
endfunction()
