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

# gpu_count(OUT): the GPUs this machine has, told without cudadiag (a check must not take
# the word of the binary it checks): the "GPU n:" lines of `nvidia-smi -L` where
# nvidia-smi is installed (0 when it fails: no driver loaded), else the /dev/nvidiaN nodes.
function(gpu_count out)
  find_program(_nvidia_smi nvidia-smi)
  set(n 0)
  if(_nvidia_smi)
    execute_process(COMMAND ${_nvidia_smi} -L RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_QUIET)
    if(rc EQUAL 0)
      string(REGEX MATCHALL "(^|\n)GPU [0-9]+:" gpus "${listing}")
      list(LENGTH gpus n)
    endif()
  else()
    file(GLOB nodes /dev/nvidia[0-9]*)
    list(LENGTH nodes n)
  endif()
  set(${out} ${n} PARENT_SCOPE)
endfunction()

# gpu_present(OUT): true where the GPU part of a command can run: the machine has a GPU
# (gpu_count) and CUDA_VISIBLE_DEVICES, if set, does not hide every one (empty, -1, or
# Slurm's NoDevFiles).
# Where it is false a check expects what a machine without a GPU gives (exit 3, the
# reason), where it is true what the GPU gives.
function(gpu_present out)
  gpu_count(n)
  set(present OFF)
  if(n GREATER 0)
    set(present ON)
    if(DEFINED ENV{CUDA_VISIBLE_DEVICES} AND "$ENV{CUDA_VISIBLE_DEVICES}" MATCHES "^(|-1.*|NoDevFiles)$")
      set(present OFF)
    endif()
  endif()
  set(${out} ${present} PARENT_SCOPE)
endfunction()

# skip_without_gpu(): in a GPU test script, prints GPU-TEST-SKIPPED with the reason and
# ends the script where the machine has no usable GPU (a macro: its return() is the
# script's).
macro(skip_without_gpu)
  gpu_present(_skip_have_gpu)
  if(NOT _skip_have_gpu)
    gpu_count(_skip_n)
    message("GPU-TEST-SKIPPED: no usable GPU on this machine (nvidia-smi or /dev/nvidiaN: ${_skip_n} GPU(s); "
            "CUDA_VISIBLE_DEVICES='$ENV{CUDA_VISIBLE_DEVICES}')")
    return()
  endif()
endmacro()

# expect_exit_of_gpu_verdict(STATUS RC STDERR): on a machine with a GPU, env's verdict is
# ok (exit 0) or findings (exit 1); anything else fails, with STDERR.
function(expect_exit_of_gpu_verdict status rc err)
  if(status STREQUAL "ok")
    expect_eq("exit code for verdict ok (this machine has a GPU)" "${rc}" 0)
  elseif(status STREQUAL "findings")
    expect_eq("exit code for verdict findings (this machine has a GPU)" "${rc}" 1)
  else()
    message(FATAL_ERROR "verdict.status is '${status}' (exit ${rc}) on a machine with a GPU, expected ok or findings\n${err}")
  endif()
endfunction()
