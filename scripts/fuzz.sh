#!/bin/sh
# fuzz.sh: libFuzzer on the parsers of untrusted bytes, one target after the
# other (make fuzz, which builds the targets first: see mk/hardening.mk).
#
#   sh scripts/fuzz.sh BIN_DIR SECONDS TARGET...
#
# Each target (BIN_DIR/fuzz_TARGET) starts from its committed seeds in
# fuzz/corpus/TARGET/ and keeps what it learns in fuzz/out/TARGET/corpus (not
# committed); BIN_DIR/TARGET.dict (made by make: the config target's, with
# every key of the config tables), else fuzz/TARGET.dict, where there is one,
# gives libFuzzer the words of the format (keys, enum names, JSON keys) and
# the numbers at the edges of int, uint64 and float, which random byte flips
# almost never spell in decimal. -max_len: cifar up to 4 records and the control byte; a --set line
# is short. A crash stops the run, leaves fuzz/out/TARGET/crash-<sha1>, and
# fails: copy that file into fuzz/regressions/TARGET/ and fix the bug;
# tests/test_fuzz_corpus.c then replays it in every `make check`.
[ $# -ge 3 ] || { sed -n 5p "$0" | sed 's/^# *//' >&2; exit 2; }
bin=$1 seconds=$2; shift 2
for t in "$@"; do
    mkdir -p "fuzz/out/$t/corpus" || exit 1
    log=fuzz/out/$t.log rc=0 dict=
    echo "== fuzz $t for $seconds s (log: $log)"
    case $t in cifar) maxlen=12300 ;; config) maxlen=1024 ;; *) maxlen=4096 ;; esac
    for d in "$bin/$t.dict" "fuzz/$t.dict"; do [ -n "$dict" ] || [ ! -f "$d" ] || dict=-dict=$d; done
    "$bin/fuzz_$t" -max_total_time="$seconds" -print_final_stats=1 -max_len=$maxlen -timeout=10 \
        -rss_limit_mb=2048 $dict -artifact_prefix="fuzz/out/$t/" "fuzz/out/$t/corpus" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
    grep -E "INITED|DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb" "$log"
    if [ $rc -ne 0 ]; then
        tail -40 "$log"; echo "fuzz $t: FAILED (exit $rc): see $log and fuzz/out/$t/"; exit 1
    fi
done
