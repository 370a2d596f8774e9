#!/usr/bin/env bash
# `cudadiag repro` on the device: the default suite must be healthy, and every seed
# scenario must show its seed's behaviour. Prints one table per suite (case, profile,
# outcome, error, expected, met) and the checks; exits 1 on any mismatch.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/50-repro"
rm -rf "$dir" && mkdir -p "$dir"

suites="default caching-hides-overrun fa-tile-misaligned flashinfer-tma-seqlen1 ring-attention-head-slice"
for s in $suites; do
  start=$(date +%s.%N)
  "$CUDADIAG" repro --suite "$s" --format json -o "$dir/$s.json" -v 2>"$dir/$s.stderr"
  echo $? >"$dir/$s.rc"
  end=$(date +%s.%N)
  echo "$start $end" >"$dir/$s.time"
done

python3 - "$dir" $suites <<'PY'
import json, os, sys
d, suites = sys.argv[1], sys.argv[2:]
bad = []

def load(s):
    try:
        return json.load(open(os.path.join(d, s + ".json")))
    except Exception as e:
        bad.append(f"{s}: no report ({e}); stderr: {open(os.path.join(d, s + '.stderr')).read()[-400:]}")
        return None

def err(r):
    e = r.get("error")
    return f"{e.get('code')} {e.get('name')}" if e else ""

def res(rep, case, profile):
    return [r for r in rep["results"] if r["case_id"] == case and r["profile"] == profile]

def check(s, cond, what):
    print(f"  [{'ok' if cond else 'MISMATCH'}] {what}")
    if not cond:
        bad.append(f"{s}: {what}")

for s in suites:
    rep = load(s)
    if rep is None:
        continue
    rc = int(open(os.path.join(d, s + ".rc")).read())
    t0, t1 = map(float, open(os.path.join(d, s + ".time")).read().split())
    v = rep["verdict"]
    print(f"\n== {s}: verdict {v['status']} (exit {rc}), {len(rep['results'])} results, {t1 - t0:.2f} s wall")
    print(f"  {'case':44} {'profile':16} {'outcome':14} {'error':34} {'expected':30} met")
    for r in rep["results"]:
        met = r.get("expectation_met")
        print(f"  {r['case_id'][:44]:44} {r['profile'][:16]:16} {r['outcome']:14} {err(r)[:34]:34} "
              f"{(r.get('expected') or '')[:30]:30} {'-' if met is None else ('yes' if met else 'NO')}")
        if r.get("xid"):
            for x in r["xid"]:
                print(f"      xid {x.get('xid')} pid={x.get('pid')} {str(x.get('message',''))[:80]}")
    for reason in v.get("reasons", []):
        print(f"  reason: {reason}")
    check(s, v["status"] == "healthy" and rc == 0, f"verdict healthy with exit 0 (got {v['status']}, {rc})")
    if s == "default":
        runs = rep.get("suite", {}).get("plan", {}).get("case_runs", 0)
        check(s, runs >= 30, f"at least 30 case runs (got {runs})")
        check(s, t1 - t0 <= 5.0, f"default suite in at most 5 s (took {t1 - t0:.2f} s)")
        # -v: where the time went (setup, host cases, children; the longest children)
        for line in open(os.path.join(d, s + ".stderr")).read().splitlines():
            if "phases:" in line or " child " in line:
                print("  " + line.split("] ", 2)[-1][:150])
    if s == "caching-hides-overrun":
        for p, want in (("default", "silent"), ("nocache", "silent"), ("fence", "fault"), ("blocking+fence", "fault")):
            rs = res(rep, "fault.oob-write", p)
            got = rs[0]["outcome"] if rs else "missing"
            ok = got in ("ok", "mismatch") if want == "silent" else (got == "cuda_error" and rs[0]["error"]["code"] == 700)
            check(s, ok, f"oob-write under {p}: {want} (got {got} {err(rs[0]) if rs else ''})")
        # memcheck: one cudaMalloc per buffer, the overrun reported; the program sees 719
        for c in ("fault.oob-write", "fault.oob-read"):
            rs = res(rep, c, "sanitizer")
            got = rs[0]["outcome"] if rs else "missing"
            san = (rs[0].get("sanitizer") or {}) if rs else {}
            found = len(san.get("findings", []))
            ok = bool(rs) and rs[0].get("expectation_met") is True and found > 0
            check(s, ok, f"{c} under sanitizer: caught (got {got} {err(rs[0]) if rs else ''}, "
                         f"{found} memcheck finding(s): {str(san.get('first', ''))[:60]})")
    if s == "fa-tile-misaligned":
        seeds = [r for r in rep["results"] if r["case_id"].startswith("fa.seed.")]
        check(s, len(seeds) == 10 and all(r["outcome"] == "ok" for r in seeds), "all 10 seed tile configs ok")
        mis = [r for r in rep["results"] if r["case_id"] == "fa.misaligned"]
        check(s, mis and all(r["outcome"] == "cuda_error" and r["error"]["code"] == 716 for r in mis),
              f"misaligned: 716 every time ({len(mis)} runs)")
    if s == "flashinfer-tma-seqlen1":
        o = {r["case_id"]: r for r in rep["results"]}
        check(s, o.get("tma.seed-seq1.host", {}).get("outcome") == "host_invalid", "seq_len 1 rejected by the rules")
        check(s, o.get("tma.seed-seq2.host", {}).get("outcome") == "host_valid", "seq_len 2 accepted by the rules")
        check(s, o.get("tma.seed-seq1.encode", {}).get("outcome") == "cuda_error", "driver rejects seq_len 1")
        check(s, o.get("tma.seed-seq2.load", {}).get("outcome") == "ok", "seq_len 2 encodes and loads")
    if s == "ring-attention-head-slice":
        for p in ("default", "nocache", "fence"):
            for c in ("index_select.head-slice-stride", "index_select.head-slice-copy"):
                rs = res(rep, c, p)
                check(s, rs and rs[0]["outcome"] == "ok", f"{c} under {p}: ok")
        # assume-contiguous reads the wrong elements, all inside the parent tensor: wrong
        # data under every allocator, the fence included. offset-twice reads past its end.
        for p in ("default", "nocache", "fence"):
            rs = res(rep, "index_select.head-slice-assume-contiguous", p)
            check(s, rs and rs[0]["outcome"] == "mismatch", f"assume-contiguous under {p}: wrong data, no fault")
        rs = res(rep, "index_select.head-slice-offset-twice", "default")
        check(s, rs and rs[0]["outcome"] in ("mismatch", "ok"), "offset-twice under default: silent")
        rs = res(rep, "index_select.head-slice-offset-twice", "fence")
        check(s, rs and rs[0]["outcome"] == "cuda_error" and rs[0]["error"]["code"] == 700,
              "offset-twice under fence: 700 at once")

print()
if bad:
    print(f"50-repro: {len(bad)} mismatch(es)")
    for b in bad:
        print("  " + b)
    sys.exit(1)
print("50-repro: all suites as expected")
PY
