#!/bin/sh
# valgrind.sh: step 6's training under valgrind memcheck (make valgrind,
# which builds PROG first: see mk/hardening.mk).
#
#   sh scripts/valgrind.sh PROG LOG_DIR [train options...]
#
# Two runs of the given (small) configuration: a fresh one stopped at step 2
# with a checkpoint (--stop-after 2, exit 4), then --resume to the end (exit
# 0), so saving and loading are both checked. --error-exitcode=99 fails a run
# on any invalid read or write, use of an uninitialised value or "definitely
# lost" block. One thread: valgrind runs threads one at a time anyway, and
# libgomp's pool would only add noise. OpenBLAS picks its kernels from CPUID;
# OPENBLAS_CORETYPE=Haswell keeps it on AVX2 ones (valgrind cannot run AVX-512).
[ $# -ge 2 ] || { sed -n 5p "$0" | sed 's/^# *//' >&2; exit 2; }
prog=$1 logs=$2; shift 2
opts="$*"   # plain words, no spaces inside one
command -v valgrind >/dev/null || { echo "make valgrind: valgrind not found (make hardening-deps)"; exit 1; }
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
fail=0
for phase in "fresh 4 --stop-after 2" "resume 0 --resume"; do
    set -- $phase; name=$1 want=$2; shift 2
    log=$logs/valgrind-$name.log rc=0
    echo "== make valgrind ($name): step6_ablation train $opts $* (log: $log)"
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell \
        valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite --show-leak-kinds=definite --num-callers=30 \
        "$prog" train --name valgrind $opts --out "$out" "$@" >"$log" 2>&1 || rc=$?
    grep -E "ERROR SUMMARY|definitely lost|in use at exit|All heap blocks were freed|resuming|trained|stop" "$log" |
        grep -v " step [0-9]" | sed 's/^==[0-9]*== //'
    [ $rc -eq "$want" ] || { echo "make valgrind ($name): FAILED: exit $rc, expected $want; see $log"; fail=1; }
done
[ $fail -eq 0 ] || exit 1
echo "make valgrind: OK"
