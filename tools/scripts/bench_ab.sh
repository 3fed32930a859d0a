#!/usr/bin/env bash
# bench_ab.sh - A/B of two clops builds with `clops bench`, run alternately in one
# shell run (ABBA order: A B, B A, A B, ...), so both sides see the same machine
# load; prints, per row both sides measured, the median op GB/s of each side,
# the median of the rounds' B/A ratios with its range, and each side's median
# ratio to its own same-run copy.
#
#   tools/scripts/bench_ab.sh [--rounds N] [--out DIR] [--bench CLOPS | --own-bench] A_BUILD B_BUILD [-- BENCH OPTIONS]
#
# A_BUILD, B_BUILD: build directories (each holds libclops.so.0 and bin/clops).
# By default one bench runs both sides, B_BUILD/bin/clops (or --bench CLOPS),
# with LD_LIBRARY_PATH set to the side's build directory (the binary's RUNPATH
# gives way to it): the same rows and the same bench code, only the library
# differs, so an old build whose bench lacks an option (--planes) still runs
# every row. --own-bench runs each build's own bin/clops instead.
# BENCH OPTIONS go to `clops bench` (default: --ops unpool --sizes 16M --widths 4
# --reps 7); --json is added. Raw JSON documents are kept in DIR (default: a
# new directory under /tmp, named at the end).
#
# Example (old worktree against this build; the rows of many small planes with
# their first-execution rows):
#   git worktree add /tmp/wt-old b8552b2 && cmake -S /tmp/wt-old -B /tmp/wt-old/build \
#       -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/wt-old/build -j2 --target clops
#   tools/scripts/bench_ab.sh --rounds 7 /tmp/wt-old/build build -- --device 0 --ops unpool \
#       --widths 4 --sizes 16M --planes 4x512x14x14,4x64x64x64
set -euo pipefail

rounds=5
out=""
bench=""
own=0
usage() { # exit status (0: --help, on stdout; else on stderr)
    if [ "${1:-2}" = 0 ]; then sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
    sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit "${1:-2}"
}
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --bench) bench="$2"; shift 2 ;;
    --own-bench) own=1; shift ;;
    -h|--help) usage 0 ;;
    --) break ;;
    -*) echo "bench_ab.sh: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || usage
a_dir=$(cd "$1" && pwd)
b_dir=$(cd "$2" && pwd)
shift 2
[ "${1:-}" = "--" ] && shift
if [ $# -eq 0 ]; then set -- --ops unpool --sizes 16M --widths 4 --reps 7; fi
case "$rounds" in ''|*[!0-9]*|0) echo "bench_ab.sh: --rounds takes a positive number" >&2; exit 2 ;; esac
[ -n "$bench" ] || bench="$b_dir/bin/clops"
for d in "$a_dir" "$b_dir"; do
    [ -e "$d/libclops.so.0" ] || { echo "bench_ab.sh: $d has no libclops.so.0" >&2; exit 2; }
done
[ -n "$out" ] || out=$(mktemp -d /tmp/bench_ab.XXXXXX)
mkdir -p "$out"

run_side() { # side round bench-options...
    local side="$1" round="$2" dir exe
    shift 2
    if [ "$side" = A ]; then dir="$a_dir"; else dir="$b_dir"; fi
    exe="$bench"
    [ "$own" = 1 ] && exe="$dir/bin/clops"
    if ! LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$exe" bench "$@" --json \
        >"$out/$side.$round.json" 2>"$out/$side.$round.err"; then
        echo "bench_ab.sh: side $side, round $round failed ($exe, library $dir):" >&2
        tail -5 "$out/$side.$round.err" >&2
        exit 1
    fi
}

echo "# A: $a_dir"
echo "# B: $b_dir"
echo "# bench: $([ "$own" = 1 ] && echo "each build's bin/clops" || echo "$bench") bench $* --json; $rounds rounds, ABBA"
for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then order="A B"; else order="B A"; fi
    for side in $order; do
        [ -t 2 ] && printf '\r\033[K# round %d/%d: %s' "$r" "$rounds" "$side" >&2
        run_side "$side" "$r" "$@"
    done
done
[ -t 2 ] && printf '\r\033[K' >&2

python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys

out, rounds = sys.argv[1], int(sys.argv[2])

def key(r):
    what = r["order"] if r["order"] else "%s/%s" % (r["indices"], r["index_type"])
    return (r["op_short"], what, r.get("execution", "repeated"), r["width"], r["block"] or 0,
            "x".join(map(str, r["input_shape"])))

rows, order = {}, []
for side in "AB":
    for i in range(1, rounds + 1):
        with open("%s/%s.%d.json" % (out, side, i)) as f:
            doc = json.load(f)
        for r in doc["results"]:
            k = key(r)
            if k not in rows:
                rows[k] = {"A": {}, "B": {}}
                order.append(k)
            rows[k][side][i] = r

med = statistics.median
print("%-7s %-22s %-9s %3s %3s %-14s %9s %9s %7s %-13s %6s %6s" % (
    "op", "variant", "execution", "w", "b", "input", "A GB/s", "B GB/s", "B/A", "B/A range", "A/copy", "B/copy"))
skipped = 0
for k in order:
    a, b = rows[k]["A"], rows[k]["B"]
    both = sorted(set(a) & set(b))
    if not both:
        skipped += 1
        continue
    ratios = [b[i]["op_gbps"] / a[i]["op_gbps"] for i in both if a[i]["op_gbps"] > 0]
    ag, bg = med([a[i]["op_gbps"] for i in both]), med([b[i]["op_gbps"] for i in both])
    ac = med([a[i]["ratio"] or 0 for i in both])
    bc = med([b[i]["ratio"] or 0 for i in both])
    rr = "%.2f-%.2f" % (min(ratios), max(ratios)) if ratios else "-"
    print("%-7s %-22s %-9s %3d %3s %-14s %9.2f %9.2f %7.2f %-13s %6.2f %6.2f" % (
        k[0], k[1], k[2], k[3], k[4] or "-", k[5], ag, bg, med(ratios) if ratios else 0, rr, ac, bc))
if skipped:
    print("# %d rows measured by one side only (left out)" % skipped)
print("# B/A: median over the %d rounds of B's op GB/s / A's in the same round (> 1: B faster); "
      "x/copy: median ratio to that run's copy" % rounds)
print("# raw JSON: %s" % out)
PY
