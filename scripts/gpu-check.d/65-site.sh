#!/usr/bin/env bash
# The fault site from the GPU's own core dump, on the device: `cudadiag run` arms dumps
# by default on every rung but the sanitizer's and reads them itself. The programs of the
# `run` section (tests/programs, nvcc ones rebuilt here with -lineinfo), a hang written
# below (not in the repository), and the fault catalog's kernels (`cudadiag fault`: the
# verdict's child runs unarmed, and a case that failed runs once more armed, its site run,
# by default). Each `run` program runs twice: with the kernel log and with
# --no-kernel-log. Checks, per program:
#   every fault   a site on the native rung: kernel, file:line, block and thread
#   overruns      the fence rung's site places the proven address at the exact byte
#                 ("N bytes past the end of allocation #k"), N equal to memcheck's
#                 distance for the same program (--sanitize always). A store that faults
#                 on the guard after its warp moved on leaves a dump with the SM's
#                 exception and error PC: then the site names kernel and line from that
#                 PC, the store's width, no thread and no address; memcheck gives thread
#                 and byte
#   hang          timeout at the deadline, the dump from the driver's pipe names the
#                 spinning kernel and the line where its warps wait
#   the same site with and without --no-kernel-log
# and, with no options but the ones named (dumps armed by default):
#   fault catalog           every case as expected (the verdict's child unarmed); every
#                           GPU exception has a site run and a site
#   fault oob-write --allocator fence
#                           the catalog's store past the end: the text output (its
#                           verdict) names oob_write_kernel and a memory_faults.cu line,
#                           from the site run
#   attention --misalign-bytes 8
#                           the unarmed run's 716, a site (kernel and line) from its site run
#   repro, repro --no-coredump
#                           each twice, alternating: the same verdict (healthy, every
#                           expectation met), no site run, and the fastest run with dumps
#                           on at most 1.15x the fastest with --no-coredump
#   run -- oob_static       the verdict's first line names kernel and line
#   run -- clean            every rung runs once, no site run
#   run --no-coredump       nothing armed, no site, no site run
#   run --timeout 15 -- hang
#                           ends in under 60 s, exposed as a GPU hang naming kernel and
#                           line, the rungs above the named hang not run
# Prints one table (program, kernel log, rung, kernel, line, block/thread, byte offset,
# memcheck's offset, dump size and read time), then the default-option checks. Reports
# under $OUT/65-site. Exits 1 on any mismatch.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/65-site"
rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/progs" "$dir/catalog"
PYTHON=${PYTHON:-python3}
PROGRAMS=tests/programs
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

# --- programs, with line information ----------------------------------------------------
cat >"$dir/progs/hang.cu" <<'CU'
#include <cstdio>
__global__ void spin_on_flag(volatile int* flag) {
  while (*flag == 0) {
  }
}
int main() {
  int* flag = nullptr;
  cudaMalloc(&flag, sizeof(int));
  cudaMemset(flag, 0, sizeof(int));
  spin_on_flag<<<4, 64>>>(flag);
  std::printf("sync: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
CU
build() {  # NAME NVCC-ARGS...
  local name=$1
  shift
  "$nvcc" -O2 -lineinfo -arch=native -o "$dir/bin/$name" "$@" >"$dir/build.$name.log" 2>&1 ||
    echo "building $name failed (see $dir/build.$name.log)"
}
build oob_static "$PROGRAMS/oob_write.cu" &
build clean "$PROGRAMS/clean.cu" &
build use_after_free "$PROGRAMS/use_after_free.cu" &
build misaligned "$PROGRAMS/misaligned.cu" &
build device_assert "$PROGRAMS/device_assert.cu" &
build libwrite_past_end.so -shared -Xcompiler -fPIC "$PROGRAMS/write_past_end.cu" &
build hang "$dir/progs/hang.cu" &
wait

# --- runs -------------------------------------------------------------------------------
# one NAME LOG RUNGS SANITIZE TIMEOUT CMD...: LOG is "kmsg" or "nokmsg".
one() {
  local name=$1 log=$2 rungs=$3 sanitize=$4 timeout=$5
  shift 5
  local -a flags=()
  [[ $log == nokmsg ]] && flags=(--no-kernel-log)
  "$CUDADIAG" run ${flags[@]+"${flags[@]}"} --rungs "$rungs" --sanitize "$sanitize" --timeout "$timeout" \
    --keep-dumps "$dir" --format json -o "$dir/$name.$log.json" -- "$@" >"$dir/$name.$log.stdout" 2>"$dir/$name.$log.stderr"
  echo $? >"$dir/$name.$log.rc"
}
for log in kmsg nokmsg; do
  one oob_static $log native,fence always 120 "$dir/bin/oob_static"
  # The fence rung recycles freed buffers; fence-front keeps the quarantine that places a
  # use after free.
  one use_after_free $log native,fence-front always 120 "$dir/bin/use_after_free"
  one misaligned $log native never 120 "$dir/bin/misaligned"
  one device_assert $log native never 120 "$dir/bin/device_assert"
  # --sanitize auto, as by default: memcheck runs once the fence exposed the overrun, and
  # gives the site of a store the dump cannot place.
  one torch_custom_op $log native,fence,sanitizer auto 300 "$PYTHON" "$PROGRAMS/torch_custom_op.py" "$dir/bin/libwrite_past_end.so"
  one triton_no_mask $log native,fence,sanitizer auto 300 "$PYTHON" "$PROGRAMS/triton_no_mask.py"
  one hang $log native never 15 "$dir/bin/hang"
done

# The fault catalog's kernels, through the bundled children.
cases=$("$CUDADIAG" list --kernel fault --format json |
  python3 -c 'import json,sys; print(" ".join(c["id"] for c in json.load(sys.stdin)["cases"]))')
for c in $cases; do
  "$CUDADIAG" fault "$c" --allocator fence-back --no-bisect -q --format json -o "$dir/catalog/$c.json" \
    2>"$dir/catalog/$c.stderr"
done

# With the defaults: `run` with no options beyond the ones named (dumps armed by default).
# plain NAME ARGS... -- CMD...: the report in default/NAME.json, stderr beside it, the
# wall time in default/NAME.time.
mkdir -p "$dir/default"
plain() {
  local name=$1
  shift
  local t0
  t0=$(date +%s.%N)
  "$CUDADIAG" run --format json -o "$dir/default/$name.json" "$@" >"$dir/default/$name.stdout" \
    2>"$dir/default/$name.stderr"
  echo $? >"$dir/default/$name.rc"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b-a}' >"$dir/default/$name.time"
}
plain oob_static -- "$dir/bin/oob_static"
plain clean -- "$dir/bin/clean"
plain no_coredump --no-coredump -- "$dir/bin/oob_static"
plain hang --timeout 15 -- "$dir/bin/hang"

# `fault` and `repro` with their dump defaults. timed NAME CMD...: stdout, stderr, exit
# code and wall time under default/.
timed() {
  local name=$1
  shift
  local t0
  t0=$(date +%s.%N)
  "$CUDADIAG" "$@" >"$dir/default/$name.stdout" 2>"$dir/default/$name.stderr"
  echo $? >"$dir/default/$name.rc"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f\n", b-a}' >"$dir/default/$name.time"
}
timed fault_oob_write fault oob-write --allocator fence
timed fault_oob_write_json fault oob-write --allocator fence --format json -o "$dir/default/fault_oob_write.json"
timed attention_misalign attention --seq-len 512 --misalign-bytes 8 --format json -o "$dir/default/attention_misalign.json"
for i in 1 2; do
  timed "repro_nocd_$i" repro --no-coredump --format json -o "$dir/default/repro_nocd_$i.json"
  timed "repro_$i" repro --format json -o "$dir/default/repro_$i.json"
done

python3 - "$dir" <<'PY'
import glob, json, os, re, sys
d = sys.argv[1]
bad = []

def check(what, cond):
    if not cond:
        bad.append(what)

def load(path):
    try:
        return json.load(open(path))
    except Exception as e:
        bad.append(f"{os.path.basename(path)}: no report ({e})")
        return None

def site_of(r):
    s = (r or {}).get("fault_sites") or []
    return next((x for x in s if "unreadable" not in x), None)

def line_of(s):
    return f"{os.path.basename(s['file'])}:{s['line']}" if s and s.get("file") and s.get("line") is not None else "-"

def triple(t):
    return "(" + ",".join(str(v) for v in t) + ")" if t else "?"

def byte_offset(s):
    m = re.match(r"(\d+) bytes (past the end|before the start|into)", (s or {}).get("access", {}).get("placement", ""))
    return int(m.group(1)) if m else None

def memcheck_finding(rep):
    for r in rep["results"]:
        if r["profile"] != "sanitizer" or not isinstance(r.get("sanitizer"), dict):
            continue
        for f in r["sanitizer"].get("findings", []):
            if f.get("kernel") and f.get("line") is not None:
                return f
    return None

def store_after_warp(s):
    # A store that faulted on a guard after its warp (and grid) had moved on: the dump
    # has the SM's exception and error PC only (lib/coredump/fault_site.cpp), or the
    # armed run even ended without reporting it (seen on the H100, driver 580).
    return s is None or (not s.get("thread") and not (s.get("faulting") or {}).get("lanes"))

def sm_site_ok(what, s, line_file):
    # The SM's error PC names kernel, line and the store's width; no thread, no address.
    check(f"{what}: a site from the SM's error PC (kernel and line)", s is not None)
    if s is None:
        return
    check(f"{what}: kernel named from the SM's error PC, got {s.get('kernel')!r}", bool(s.get("kernel")))
    check(f"{what}: line in {line_file}, got {line_of(s)}", line_of(s).startswith(line_file))
    a = s.get("access") or {}
    check(f"{what}: the store and its width, got {a.get('kind')} {a.get('bytes')}",
          a.get("kind") == "write" and a.get("bytes") in (1, 2, 4, 8, 16))
    check(f"{what}: no thread and no address claimed, and says why",
          not s.get("thread") and not a.get("address") and bool(s.get("thread_note")))

def memcheck_offset(rep):
    for r in rep["results"]:
        if r["profile"] != "sanitizer" or not isinstance(r.get("sanitizer"), dict):
            continue
        for f in r["sanitizer"].get("findings", []):
            n = f.get("nearest_allocation") or f.get("nearest")
            if n and "distance_bytes" in n:
                # memcheck counts the first byte past the end as "1 bytes after"; the
                # placement counts it as "0 bytes past the end".
                return n["distance_bytes"] - 1 if n.get("relation") == "after" else n["distance_bytes"]
    return None

rows = []
expect_line = {"oob_static": "oob_write.cu", "use_after_free": "use_after_free.cu", "misaligned": "misaligned.cu",
               "device_assert": "device_assert.cu", "torch_custom_op": "write_past_end.cu",
               "triton_no_mask": "triton_no_mask.py", "hang": "hang.cu"}
overruns = ("oob_static", "torch_custom_op", "triton_no_mask")
sites_by_log = {}
for name in expect_line:
    for log in ("kmsg", "nokmsg"):
        rep = load(os.path.join(d, f"{name}.{log}.json"))
        if rep is None:
            continue
        by = {r["profile"]: r for r in rep["results"]}
        mc = memcheck_offset(rep)
        for rung in ("native", "fence", "fence-front"):
            r = by.get(rung)
            if r is None:
                continue
            s = site_of(r)
            if name == "hang":
                w = (s or {}).get("waiting") or [{}]
                where = f"{os.path.basename(w[0].get('file', '?'))}:{w[0].get('line')}" if w[0] else "-"
                rows.append((name, log, rung, r["outcome"], (w[0].get("function") or "-")[:28], where,
                             f"{w[0].get('warps', '?')} warps", "-", "-", s))
                check(f"{name} {log}: timeout, got {r['outcome']}", r["outcome"] == "timeout")
                check(f"{name} {log}: the dump names spin_on_flag", "spin_on_flag" in (w[0].get("function") or ""))
                check(f"{name} {log}: the warps wait at hang.cu:3 or :4", where in ("hang.cu:3", "hang.cu:4"))
            else:
                off = byte_offset(s) if rung == "fence" else None
                rows.append((name, log, rung, r["outcome"], ((s or {}).get("kernel") or "-")[:28], line_of(s),
                             f"{triple((s or {}).get('thread'))} of {triple((s or {}).get('block'))}",
                             "-" if off is None else str(off), "-" if mc is None or rung != "fence" else str(mc), s))
                # The rung that exposes the fault: native for the faulting programs, the
                # fence for the overruns (natively they land in mapped memory, no fault).
                exposing = (rung == "fence") if name in overruns else (rung == "native")
                if exposing and name in overruns and store_after_warp(s):
                    # The dump keeps no thread of such a store: kernel and line come from the
                    # SM's error PC, thread and byte from memcheck.
                    check(f"{name} {log} {rung}: cuda_error, got {r['outcome']}", r["outcome"] == "cuda_error")
                    sm_site_ok(f"{name} {log} {rung}", s, expect_line[name])
                    f = memcheck_finding(rep)
                    check(f"{name} {log}: memcheck names kernel, {expect_line[name]} and thread",
                          bool(f) and os.path.basename(f.get("file", "")).startswith(expect_line[name])
                          and bool(f.get("thread")) and bool(f.get("block")))
                    if f:
                        rows.append((name, log, "memcheck", "cuda_error", (f.get("kernel") or "-")[:28],
                                     f"{os.path.basename(f['file'])}:{f['line']}",
                                     f"{triple(f.get('thread'))} of {triple(f.get('block'))}",
                                     str(mc) if mc is not None else "-", str(mc) if mc is not None else "-", None))
                    off = mc
                elif exposing:
                    check(f"{name} {log} {rung}: cuda_error, got {r['outcome']}", r["outcome"] == "cuda_error")
                    check(f"{name} {log} {rung}: a site", s is not None)
                    check(f"{name} {log} {rung}: kernel named", bool((s or {}).get("kernel")))
                    check(f"{name} {log} {rung}: line in {expect_line[name]}, got {line_of(s)}",
                          line_of(s).startswith(expect_line[name]))
                    check(f"{name} {log} {rung}: block and thread", bool((s or {}).get("block")) and
                          bool((s or {}).get("thread")))
                if rung == "fence" and name in overruns:
                    check(f"{name} {log}: exact byte offset past the end, got {off}", off is not None)
                    if mc is not None:
                        check(f"{name} {log}: byte offset {off} equals memcheck's {mc}", off == mc)
            if s:
                # Addresses differ between processes; the placement does not.
                sites_by_log.setdefault((name, rung), {})[log] = (s.get("kernel"), line_of(s), s.get("thread"),
                                                                  s.get("access", {}).get("placement"))
# Where the placed allocation was made (the interposer's stack at allocation, named by the
# parent from the program's own symbols; the user's Python line).
origins = []
for name, rung in (("use_after_free", "fence-front"), ("triton_no_mask", "fence")):
    rep = load(os.path.join(d, f"{name}.nokmsg.json"))
    r = next((x for x in (rep or {}).get("results", []) if x["profile"] == rung), None)
    s = site_of(r)
    if not s or not (s.get("access") or {}).get("placement"):
        continue  # not placed in this run: nothing to name
    o = (s.get("access") or {}).get("allocated_at")
    check(f"{name} {rung}: the placed allocation says where it was made", bool(o))
    if not o:
        continue
    host = o.get("host", [])
    origins.append((name, rung, host, o.get("python", []), o.get("python_note", "")))
    if name == "use_after_free":
        check(f"{name}: allocated in main of the program", any(f.get("function") == "main" and
              f.get("module", "").endswith("/use_after_free") for f in host))
    else:
        check(f"{name}: the user's Python line",
              any(f.get("user") and f.get("file", "").endswith("triton_no_mask.py") for f in o.get("python", [])))
for (name, rung), by_log in sites_by_log.items():
    # A store the dump could not place in one of the two runs (it faulted after its warp
    # moved on there, while a load faulted first in the other) has no site to compare.
    if len(by_log) == 2 and all(v[0] for v in by_log.values()):
        check(f"{name} {rung}: the same site with and without --no-kernel-log", by_log["kmsg"] == by_log["nokmsg"])

for path in sorted(glob.glob(os.path.join(d, "catalog", "*.json"))):
    rep = load(path)
    if rep is None:
        continue
    for r in rep["results"]:
        s = site_of(r)
        check(f"{r['case_id']}: as expected (the verdict's child unarmed, the default)",
              r.get("expectation_met") is not False)
        klass = (r.get("error") or {}).get("class")
        # A GPU exception leaves a dump; a launch refused by the runtime does not.
        if r["outcome"] != "cuda_error" or klass not in ("memory_fault", "misaligned", "device_assert",
                                                          "illegal_instruction", "launch_failure"):
            continue
        check(f"{r['case_id']}: a site run after the unarmed run's {klass}",
              bool((r.get("details", {}).get("coredump") or {}).get("site_run")))
        rows.append((r["case_id"], "kmsg", r["profile"], r["outcome"], ((s or {}).get("kernel") or "-")[:28],
                     line_of(s), f"{triple((s or {}).get('thread'))} of {triple((s or {}).get('block'))}", "-", "-", s))
        if r["case_id"] == "fault.oob-write" and store_after_warp(s):
            # A store past the end: the SM's error PC names kernel and line (see above).
            sm_site_ok(f"{r['case_id']} (default arming)", s, "memory_faults.cu")
            check(f"{r['case_id']}: the kernel is oob_write_kernel", "oob_write_kernel" in ((s or {}).get("kernel") or ""))
            continue
        check(f"{r['case_id']}: a site with kernel, line and thread", bool(s and s.get("kernel") and s.get("file")
                                                                            and s.get("thread")))

print(f"\n  {'program':26} {'log':6} {'rung':8} {'outcome':11} {'kernel':28} {'line':22} {'thread of block':26} "
      f"{'byte':>5} {'memchk':>6} {'dump':>9} {'read':>7}")
for name, log, rung, outcome, kernel, line, who, off, mc, s in rows:
    size = f"{s['dump_bytes'] / 1e6:.2f}MB" if s else "-"
    read = f"{s['read_ms']:.0f}ms" if s else "-"
    print(f"  {name:26} {log:6} {rung:8} {outcome:11} {kernel:28} {line:22} {who:26} {off:>5} {mc:>6} {size:>9} {read:>7}")
for name, rung, host, python, note in origins:
    named = [f"{f['function']}+{f.get('offset', 0):#x}" for f in host if f.get("function")][:4]
    py = [f"{os.path.basename(f['file'])}:{f['line']}" for f in python]
    print(f"  allocated at ({name}, {rung}): {' < '.join(py + named) or '-'}{' (' + note + ')' if note else ''}")
# --- the defaults --------------------------------------------------------------------
def plain(name):
    rep = load(os.path.join(d, "default", name + ".json"))
    rc = int(open(os.path.join(d, "default", name + ".rc")).read())
    secs = float(open(os.path.join(d, "default", name + ".time")).read())
    err = open(os.path.join(d, "default", name + ".stderr")).read()
    return rep, rc, secs, err

def site_runs(rep):
    return [r["profile"] for r in rep["results"] if (r.get("details", {}).get("coredump") or {}).get("site_run")]

defaults = []
# A store past the end, no options: the verdict's first line names kernel and line.
rep, rc, secs, err = plain("oob_static")
if rep:
    first = rep["verdict"]["reasons"][0]
    defaults.append(("run -- oob_static", f"{rep['verdict']['status']} {secs:.0f}s", first[:110]))
    check(f"oob_static default: exposed, exit 1 (got {rep['verdict']['status']}, {rc})",
          rep["verdict"]["status"] == "exposed" and rc == 1)
    check("oob_static default: dumps armed by default", rep["run"]["coredump"]["armed"] is True)
    check(f"oob_static default: the verdict's first line names fill_inclusive and oob_write.cu:8 (got {first[:160]})",
          "fill_inclusive" in first and "oob_write.cu:8" in first)
# A clean program: each rung once, never re-run.
rep, rc, secs, err = plain("clean")
if rep:
    runs = {r["profile"]: len(r.get("details", {}).get("runs", [])) for r in rep["results"]}
    defaults.append(("run -- clean", f"{rep['verdict']['status']} {secs:.0f}s", f"runs per rung {runs}"))
    check(f"clean default: clean, exit 0 (got {rep['verdict']['status']}, {rc})",
          rep["verdict"]["status"] == "clean" and rc == 0)
    check(f"clean default: each rung ran once (got {runs})", runs and all(n == 1 for n in runs.values()))
    check(f"clean default: no site run (got {site_runs(rep)})", not site_runs(rep) and "once more" not in err)
# --no-coredump: nothing armed, no site, no site run.
rep, rc, secs, err = plain("no_coredump")
if rep:
    sites = sum(len(r.get("fault_sites") or []) for r in rep["results"])
    defaults.append(("run --no-coredump -- oob_static", f"{rep['verdict']['status']} {secs:.0f}s",
                     f"armed {rep['run']['coredump']['armed']}, {sites} sites, site runs {site_runs(rep)}"))
    check("no_coredump: not armed", rep["run"]["coredump"]["armed"] is False)
    check(f"no_coredump: no site and no site run (got {sites}, {site_runs(rep)})", sites == 0 and not site_runs(rep))
    check(f"no_coredump: still exposed by the fence (got {rep['run']['first_exposed_by']})",
          rep["verdict"]["status"] == "exposed" and rep["run"]["first_exposed_by"] == "fence")
# A hang with --timeout 15: under 60 s, named with kernel and line, the rungs above not run.
rep, rc, secs, err = plain("hang")
if rep:
    first = rep["verdict"]["reasons"][0]
    ran = [r["profile"] for r in rep["results"]]
    defaults.append(("run --timeout 15 -- hang", f"{rep['verdict']['status']} {secs:.0f}s", first[:110]))
    check(f"hang default: ended in under 60 s (took {secs:.1f} s)", secs < 60)
    check(f"hang default: exposed, exit 1 (got {rep['verdict']['status']}, {rc})",
          rep["verdict"]["status"] == "exposed" and rc == 1)
    check(f"hang default: a GPU hang naming spin_on_flag at hang.cu:3 or :4 (got {first[:160]})",
          "GPU hang" in first and "spin_on_flag" in first and ("hang.cu:3" in first or "hang.cu:4" in first))
    check(f"hang default: one rung ran (got {ran})", ran == ["native"])
    check("hang default: says the rungs above were not run", "the rungs above were not run" in first)

# fault oob-write under the fence, dump defaults: the verdict (text) names kernel and line
# from the site run.
text = open(os.path.join(d, "default", "fault_oob_write.stdout")).read()
rc = int(open(os.path.join(d, "default", "fault_oob_write.rc")).read())
m = re.search(r"memory_faults\.cu:\d+", text)
site_line = next((l.strip() for l in text.splitlines() if "fault site" in l), "-")
defaults.append(("fault oob-write --allocator fence", f"rc {rc}", site_line[:110]))
check(f"fault oob-write: exit 0, as expected (got {rc})", rc == 0)
check("fault oob-write: the output names oob_write_kernel", "oob_write_kernel" in text)
check(f"fault oob-write: the output names a memory_faults.cu line (got {m.group(0) if m else None})", m is not None)
rep = load(os.path.join(d, "default", "fault_oob_write.json"))
if rep:
    r = rep["results"][0]
    check(f"fault oob-write (json): cuda_error from the unarmed run (got {r['outcome']})", r["outcome"] == "cuda_error")
    check("fault oob-write (json): details.coredump.site_run says the site run ran",
          bool((r.get("details", {}).get("coredump") or {}).get("site_run")))
    s = site_of(r)
    check(f"fault oob-write (json): the site names oob_write_kernel at memory_faults.cu (got {line_of(s)})",
          "oob_write_kernel" in ((s or {}).get("kernel") or "") and line_of(s).startswith("memory_faults.cu"))

# attention with a misaligned base: the unarmed run's 716, the site from its site run.
rep = load(os.path.join(d, "default", "attention_misalign.json"))
if rep:
    r = rep["results"][0]
    s = site_of(r)
    code = (r.get("error") or {}).get("code")
    defaults.append(("attention --misalign-bytes 8", f"{r['outcome']} {code}",
                     f"{((s or {}).get('kernel') or '-')[:60]} at {line_of(s)}"))
    check(f"attention misalign: cuda_error 716 from the unarmed run (got {r['outcome']} {code})",
          r["outcome"] == "cuda_error" and code == 716)
    check(f"attention misalign: a site from the site run naming a kernel and a line (got {line_of(s)})",
          bool((s or {}).get("kernel")) and line_of(s) != "-")

# repro with dumps on (the default) against --no-coredump: the same verdict, no site run
# when every expectation is met, and no more than 1.15x the wall time.
times = {"on": [], "off": []}
verdicts = {}
for i in (1, 2):
    for mode, name in (("off", f"repro_nocd_{i}"), ("on", f"repro_{i}")):
        rep = load(os.path.join(d, "default", name + ".json"))
        rc = int(open(os.path.join(d, "default", name + ".rc")).read())
        secs = float(open(os.path.join(d, "default", name + ".time")).read())
        times[mode].append(secs)
        if rep is None:
            continue
        unmet = [f"{r['case_id']} [{r['profile']}]" for r in rep["results"] if r.get("expectation_met") is False]
        sited = [r["case_id"] for r in rep["results"] if (r.get("details", {}).get("coredump") or {}).get("site_run")]
        verdicts.setdefault(mode, set()).add(rep["verdict"]["status"])
        print(f"  repro {'--no-coredump' if mode == 'off' else '(dumps on)   '} run {i}: {rep['verdict']['status']}, "
              f"exit {rc}, {len(rep['results'])} results, {len(unmet)} unmet, {len(sited)} site runs, {secs:.2f} s")
        check(f"{name}: healthy, exit 0 (got {rep['verdict']['status']}, {rc})",
              rep["verdict"]["status"] == "healthy" and rc == 0)
        check(f"{name}: every expectation met (unmet: {unmet})", not unmet)
        check(f"{name}: no site run when every expectation is met (got {sited})", not sited)
check(f"repro: the same verdict with and without dumps (got {verdicts})",
      verdicts.get("on") == verdicts.get("off") and len(verdicts.get("on", ())) == 1)
if times["on"] and times["off"]:
    on, off = min(times["on"]), min(times["off"])
    ratio = on / off if off > 0 else float("inf")
    print(f"  repro wall time: dumps on {' '.join(f'{t:.2f}' for t in times['on'])} s, --no-coredump "
          f"{' '.join(f'{t:.2f}' for t in times['off'])} s; fastest {on:.2f} s / {off:.2f} s = {ratio:.3f}x (limit 1.15x)")
    defaults.append(("repro (dumps on) / --no-coredump", f"{ratio:.3f}x", f"{on:.2f} s / {off:.2f} s"))
    check(f"repro: dumps on at most 1.15x the wall time of --no-coredump (got {ratio:.3f}x)", ratio <= 1.15)

print(f"\n  {'with the defaults':34} {'verdict':18} first line of the verdict")
for what, verdict, line in defaults:
    print(f"  {what:34} {verdict:18} {line}")

print(f"\n65-site: {'all checks passed' if not bad else str(len(bad)) + ' mismatch(es)'}")
for b in bad:
    print("  MISMATCH", b)
sys.exit(1 if bad else 0)
PY
