#!/usr/bin/env bash
# `cudadiag env` on a GPU host: the report must agree with nvidia-smi (device count,
# names, UUIDs, driver version, compute capability), the CUDA probe must have run, and
# hiding every GPU (CUDA_VISIBLE_DEVICES="") must give exit 3 / no_device.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"

"$CUDADIAG" env >"$OUT/env.txt" 2>"$OUT/env.stderr"
rc_text=$?
"$CUDADIAG" env --format json -o "$OUT/env.json" 2>"$OUT/env-json.stderr"
rc_json=$?
CUDA_VISIBLE_DEVICES= "$CUDADIAG" env --format json -o "$OUT/env-hidden.json" 2>"$OUT/env-hidden.stderr"
rc_hidden=$?

smi_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
smi_driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
smi_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
smi_uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -1)
smi_cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
smi_ecc=$(nvidia-smi --query-gpu=ecc.mode.current --format=csv,noheader 2>/dev/null | head -1)

printf '%-34s %-44s %-44s %s\n' CHECK OBSERVED EXPECTED RESULT
row "env text exit code (0 or 1)" "$([[ $rc_text == 0 || $rc_text == 1 ]] && echo ok || echo "$rc_text")" ok
row "env json exit code (0 or 1)" "$([[ $rc_json == 0 || $rc_json == 1 ]] && echo ok || echo "$rc_json")" ok
row "gpu.ran" "$(jget "$OUT/env.json" "d['gpu']['ran']")" True
row "verdict.status in ok/findings" "$(jget "$OUT/env.json" "d['verdict']['status'] in ('ok','findings')")" True
row "nvml available" "$(jget "$OUT/env.json" "d['driver']['nvml']['available']")" True
row "devices visible to CUDA" "$(jget "$OUT/env.json" "sum(1 for x in d['devices'] if x.get('visible_to_cuda'))")" "$smi_count"
row "driver.version" "$(jget "$OUT/env.json" "d['driver'].get('version')")" "$smi_driver"
row "devices[0].name" "$(jget "$OUT/env.json" "d['devices'][0]['name']")" "$smi_name"
row "devices[0].uuid (CUDA == NVML)" "$(jget "$OUT/env.json" "d['devices'][0]['cuda']['uuid']")" "$smi_uuid"
row "devices[0] matched to NVML" "$(jget "$OUT/env.json" "d['devices'][0]['nvml'] is not None")" True
row "devices[0].cuda.compute_capability" "$(jget "$OUT/env.json" "d['devices'][0]['cuda']['compute_capability']")" "$smi_cc"
row "cuda_driver_version_string set" "$(jget "$OUT/env.json" "bool(d['driver'].get('cuda_driver_version_string'))")" True
row "ECC (nvml) vs nvidia-smi" "$(jget "$OUT/env.json" "d['devices'][0]['nvml']['ecc_mode']['current'] if d['devices'][0]['nvml']['ecc_mode'] else 'n/a'" | tr 'A-Z' 'a-z')" "$(echo "$smi_ecc" | tr 'A-Z' 'a-z' | sed 's/\[n\/a\]/n\/a/')"
row "hidden GPUs: exit code" "$rc_hidden" 3
row "hidden GPUs: verdict.status" "$(jget "$OUT/env-hidden.json" "d['verdict']['status']")" no_device

echo
echo "GPU model:   $(jget "$OUT/env.json" "d['devices'][0]['name']")  (cc $(jget "$OUT/env.json" "d['devices'][0]['cuda']['compute_capability']"), $(jget "$OUT/env.json" "d['devices'][0]['cuda']['multiprocessors']") SMs, smem optin $(jget "$OUT/env.json" "d['devices'][0]['cuda']['shared_mem_per_block_optin']"))"
echo "Driver:      $(jget "$OUT/env.json" "d['driver'].get('version')")  CUDA driver API $(jget "$OUT/env.json" "d['driver'].get('cuda_driver_version_string')"), runtime loaded $(jget "$OUT/env.json" "d['driver'].get('cuda_runtime_version_loaded_string')")"
echo "ECC:         $(jget "$OUT/env.json" "d['devices'][0]['nvml']['ecc_mode']")  errors $(jget "$OUT/env.json" "d['devices'][0]['nvml']['ecc_errors']")"
echo "Remapped:    $(jget "$OUT/env.json" "d['devices'][0]['nvml']['remapped_rows']")"
echo "NVML unavailable fields: $(jget "$OUT/env.json" "d['devices'][0]['nvml'].get('unavailable')")"
echo "Kernel log:  $(jget "$OUT/env.json" "{k: v for k, v in d['host']['kernel_log'].items() if k != 'xid_recent'}")"
echo "Verdict:     $(jget "$OUT/env.json" "d['verdict']")"
echo "Hidden GPUs: $(jget "$OUT/env-hidden.json" "d['verdict']['reasons'][0]")"
exit $fail
