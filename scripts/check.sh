#!/bin/sh
# check.sh: make check's loop: each test program in its folder (tests/'s from
# the root), on after a failure with KEEP_GOING set; each appends what it ran,
# failed and skipped to LOG (tests/testutil.h), summed up at the end.
#
#   KEEP_GOING=yes sh scripts/check.sh BUILD LOG TEST...
build=$1 log=$2; shift 2
: >"$log"; failed=; n=0; root=$(pwd)
for t in "$@"; do
    echo "== $t"; n=$((n + 1))
    d=${t#"$build"/}; d=${d%/*}; [ "$d" != tests ] || d=.
    (cd "$d" && TINYDIT_CHECK_LOG="$log" TINYDIT_CHECK_WHO="${t##*/}" "$root/$t") ||
        { failed="$failed $t"; [ -n "$KEEP_GOING" ] || break; }
done
awk -v programs=$n -v failed="$failed" -f mk/check_summary.awk "$log"
[ -z "$failed" ]
