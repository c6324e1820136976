#!/bin/sh
# results_torch.sh: PyTorch runs (tools/torch_train.py train) as committed
# results, set beside the C runs of the same preset.
#
#   sh scripts/results_torch.sh PRESET TORCH_RUNS_DIR [DEST]
#
# DEST defaults to results/PRESET-pytorch. It copies each run's metrics.json
# and loss.tsv, then writes
#   table.txt     step6_ablation table of the PyTorch runs alone
#   compare.txt   step6_ablation table --compare results/PRESET DEST: the C
#                 runs' means against PyTorch's, configuration by configuration
#   README.md     the machine, the commit, the commands, the wall time
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
PRESET=${1:?usage: results_torch.sh PRESET TORCH_RUNS_DIR [DEST]}
RUNS=${2:?usage: results_torch.sh PRESET TORCH_RUNS_DIR [DEST]}
DEST=${3:-$root/results/$PRESET-pytorch}
STEP6=${STEP6:-$root/step6_ablation/step6_ablation}
RUNNER=${RUNNER:-}
[ -x "$STEP6" ] || { echo "results_torch.sh: $STEP6 is not built (make all)" >&2; exit 1; }
[ -d "$root/results/$PRESET" ] || { echo "results_torch.sh: no C results in results/$PRESET to compare with" >&2; exit 1; }
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
case "$DEST" in "$root"/*) rel=${DEST#"$root"/} ;; *) rel=$DEST ;; esac   # as a reader of the repository sees it
n=0
for dir in "$RUNS"/*/; do
    [ -f "$dir/metrics.json" ] || continue
    name=$(basename "$dir")
    mkdir -p "$DEST/$name"
    cp "$dir/metrics.json" "$dir/loss.tsv" "$DEST/$name/"
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "results_torch.sh: no run in $RUNS has a metrics.json" >&2; exit 1; }

cd "$root"
"$STEP6" table "$rel" > "$DEST/table.txt"
"$STEP6" table --compare "results/$PRESET" "$rel" > "$DEST/compare.txt"
cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
torch=$(awk -F'"' '/"implementation"/ { print $4; exit }' "$DEST"/*/metrics.json)
{
    # the record of the runs and nothing else (tests/test_results_readmes.c
    # holds it to this shape)
    echo "# $rel: the $PRESET preset in PyTorch"
    echo
    echo "## Machine"
    echo
    echo "- CPU: ${cpu:-unknown}, $(nproc) cores; $(uname -sr)"
    echo
    echo "## Code"
    echo
    echo "- commit \`$commit\`; \`tools/torch_train.py train\` on $torch"
    echo
    echo "## Commands"
    echo
    [ -z "$RUNNER" ] || { echo "- runs scheduled: $RUNNER"; echo; }
    echo '```sh'
    echo "/usr/bin/python3 tools/torch_train.py train --name p11_rope_s1 --preset $PRESET --set seed=1 --set pos=rope2d --out TORCH_RUNS"
    echo "sh scripts/results_torch.sh $PRESET TORCH_RUNS"
    echo '```'
    echo
    echo "## Date"
    echo
    echo "- copied from \`$(basename "$RUNS")\` by \`scripts/results_torch.sh\` on $(date -u '+%Y-%m-%d')"
    echo
    echo "## Wall time"
    echo
    echo "| run | seed | training steps (min) | ms/step |"
    echo "|---|---:|---:|---:|"
    for m in "$DEST"/*/metrics.json; do
        python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print("| %s | %d | %.1f | %.0f |" % (m["name"], m["seed"], m["train_seconds"] / 60, m["ms_per_step"]))' "$m"
    done
} > "$DEST/README.md"
echo "results_torch.sh: $n runs into $DEST, with table.txt, compare.txt and README.md"
