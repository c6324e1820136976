#!/bin/sh
# scorecard_batch.sh COMMIT [TURNS]: a run's scorecard with SCORECARD_BATCH
# (images run at a time) at 250 and at 64, in alternating turns:
# step6_ablation of COMMIT built twice, the constant set in each, each trains
# 2 steps of the quick preset (val checks off) and scores them. Prints a line a turn and batch: peak memory (/usr/bin/time),
# the scorecard's wall time and parts (metrics.json), and its two numbers in
# full, to show what changes in their last bits. Needs CIFAR_DIR.
set -eu
[ $# -ge 1 ] || { echo "usage: scripts/scorecard_batch.sh COMMIT [TURNS]" >&2; exit 2; }
commit=$1 turns=${2:-4}
[ -n "${CIFAR_DIR:-}" ] || { echo "scorecard_batch.sh: set CIFAR_DIR to CIFAR-10's binary folder" >&2; exit 2; }
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/src" 2>/dev/null; rm -rf "$tmp"' EXIT
unset OPENBLAS_CORETYPE
git -C "$root" worktree add -q --detach "$tmp/src" "$commit"
for b in 250 64; do
    sed -i "s/^#define SCORECARD_BATCH [0-9]*/#define SCORECARD_BATCH $b/" "$tmp/src/common/eval/scorecard.h"
    make -s -C "$tmp/src" -j"$(nproc)" step6_ablation/step6_ablation >/dev/null
    cp "$tmp/src/step6_ablation/step6_ablation" "$tmp/s6_$b"
done
echo "turn batch peak_MB wall_s val_s sampling_s probe_s val_mse probe_fd"
for turn in $(seq "$turns"); do
    for b in 250 64; do
        rm -rf "$tmp/run"
        (cd "$root" && /usr/bin/time -f %M -o "$tmp/rss" "$tmp/s6_$b" train --name s --preset quick \
            --set steps=2 --set val_every=0 --out "$tmp/run" >/dev/null 2>&1)
        python3 - "$tmp/run/s/metrics.json" "$tmp/rss" "$turn" "$b" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d['scorecard_seconds']; r = d['raw']
print(sys.argv[3], sys.argv[4], int(open(sys.argv[2]).read()) // 1024, '%.1f' % d['wall_seconds'],
      '%.2f' % t['val_mse'], '%.2f' % t['sampling'], '%.2f' % t['probe_fd'], repr(r['val_mse']),
      repr(r['uncond']['probe_fd']))
PY
    done
done
