#!/usr/bin/env bash
# `cudadiag repro` on the device: the default suite must be healthy, and every seed
# scenario must show its seed's behaviour. Prints one table per suite (case, profile,
# outcome, error, expected, met) and the checks; exits 1 on any mismatch.
# Then the default suite on every GPU against one: `repro --devices 0` and
# `repro --devices all` timed in turn, two rounds each; both healthy, the all-GPU run
# with every GPU's results, and on 2+ GPUs its best time at most 1.3x one GPU's. The
# plan for an 8-GPU node (--plan --plan-devices 8) and for this host's GPUs is printed.
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
rc_suites=$?

echo
echo "== repro on one GPU and on every GPU (default suite, 2 rounds each, in turn)"
"$CUDADIAG" repro --plan --plan-devices 8 >"$dir/plan8.txt" 2>&1
echo "-- plan for an 8-GPU node (--plan --plan-devices 8):"
grep -v '^  child' "$dir/plan8.txt"
"$CUDADIAG" repro --plan >"$dir/plan-all.txt" 2>&1
echo "-- plan for this host's GPUs (--plan):"
grep -v '^  child' "$dir/plan-all.txt"
for round in 1 2; do
  for which in one all; do
    devs=0
    [[ $which == all ]] && devs=all
    start=$(date +%s.%N)
    "$CUDADIAG" repro --devices "$devs" --format json -o "$dir/multi-$which-$round.json" -v \
      2>"$dir/multi-$which-$round.stderr"
    echo $? >"$dir/multi-$which-$round.rc"
    end=$(date +%s.%N)
    echo "$start $end" >"$dir/multi-$which-$round.time"
  done
done

python3 - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
bad = []

def check(cond, what):
    print(f"  [{'ok' if cond else 'MISMATCH'}] {what}")
    if not cond:
        bad.append(what)

runs = {}
for which in ("one", "all"):
    for rnd in (1, 2):
        base = os.path.join(d, f"multi-{which}-{rnd}")
        t0, t1 = map(float, open(base + ".time").read().split())
        rc = int(open(base + ".rc").read())
        try:
            rep = json.load(open(base + ".json"))
        except Exception as e:
            rep = None
            print(f"  {which} round {rnd}: no report ({e}); stderr: {open(base + '.stderr').read()[-400:]}")
        runs.setdefault(which, []).append((t1 - t0, rc, rep, base))

for which, label in (("one", "one GPU (--devices 0)"), ("all", "every GPU (--devices all)")):
    for rnd, (secs, rc, rep, _) in enumerate(runs[which], 1):
        status = rep["verdict"]["status"] if rep else "no report"
        ngpu = len(rep.get("suite", {}).get("devices", [])) if rep else 0
        print(f"  {label:28} round {rnd}: {secs:6.2f} s, verdict {status} (exit {rc}), {ngpu} GPU(s), "
              f"{len(rep['results']) if rep else 0} results")
        check(rep is not None and status == "healthy" and rc == 0, f"{label} round {rnd}: healthy with exit 0")

one_best = min(r[0] for r in runs["one"])
all_best = min(r[0] for r in runs["all"])
rep_all = runs["all"][0][2] or {}
rep_one = runs["one"][0][2] or {}
ngpu = len(rep_all.get("suite", {}).get("devices", []))
print(f"  best of 2: one GPU {one_best:.2f} s, {ngpu} GPU(s) {all_best:.2f} s, ratio {all_best / one_best:.2f}")
gpu_one = sum(1 for r in rep_one.get("results", []) if r.get("device") not in (None, "", "host"))
gpu_all = sum(1 for r in rep_all.get("results", []) if r.get("device") not in (None, "", "host"))
check(gpu_all == ngpu * gpu_one, f"every GPU ran the suite: {gpu_all} GPU results = {ngpu} x {gpu_one}")
plan = rep_all.get("suite", {}).get("plan", {})
print(f"  every-GPU run: {plan.get('children_started')} children, -j {plan.get('jobs')}")
for line in open(runs["all"][0][3] + ".stderr").read().splitlines():
    if "phases:" in line or " child " in line:
        print("    " + line.split("] ", 2)[-1][:150])
if ngpu < 2:
    print("  one GPU: ratio not applicable")
else:
    check(all_best <= 1.3 * one_best,
          f"{ngpu} GPUs in at most 1.3x one GPU's time ({all_best:.2f} s vs {one_best:.2f} s: {all_best / one_best:.2f}x)")
if bad:
    print(f"50-repro (GPUs): {len(bad)} mismatch(es)")
    sys.exit(1)
print("50-repro (GPUs): as expected")
PY
rc_multi=$?
[[ $rc_suites -eq 0 && $rc_multi -eq 0 ]]
