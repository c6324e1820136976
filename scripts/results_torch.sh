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
#   README.md     scripts/results_readme.sh: the runs' own records, their wall time
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
PRESET=${1:?usage: results_torch.sh PRESET TORCH_RUNS_DIR [DEST]}
RUNS=${2:?usage: results_torch.sh PRESET TORCH_RUNS_DIR [DEST]}
DEST=${3:-$root/results/$PRESET-pytorch}
STEP6=${STEP6:-$root/step6_ablation/step6_ablation}
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
sh "$here/results_readme.sh" "$DEST"
echo "results_torch.sh: $n runs into $DEST, with table.txt, compare.txt and README.md"
