#!/bin/sh
# progress_curve.sh: class accuracy against images seen, from the guidance
# sweeps of one run's kept checkpoints (step7_guidance sweep of each, named
# STEP.tsv after the step it was kept at), drawn with step7_progress.gp.
#
#   sh scripts/progress_curve.sh SWEEPS_DIR BATCH OUT_DIR
set -eu
DIR=${1:?usage: progress_curve.sh SWEEPS_DIR BATCH OUT_DIR}
BATCH=${2:?usage: progress_curve.sh SWEEPS_DIR BATCH OUT_DIR}
OUT=${3:?usage: progress_curve.sh SWEEPS_DIR BATCH OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
ws=$(ls "$DIR"/*.tsv | head -1 | xargs awk '!/^#/ { printf "%s ", $1 }')
{
    printf '# images seen\tclass accuracy at w = %s\n' "$ws"
    for step in $(ls "$DIR" | sed -n 's/\.tsv$//p' | sort -n); do
        f="$DIR/$step.tsv"
        awk -v images=$((step * BATCH)) '!/^#/ { a = a "\t" $3 } END { print images a }' "$f"
    done
} > "$OUT/step7_progress.tsv"
cd "$OUT"
{ printf "set terminal pngcairo size 800,450 font 'DejaVu Sans,10'\nset output 'step7_progress.png'\nws = '%s'\n" "$ws"; cat "$here/../step7_guidance/plots/step7_progress.gp"; } | gnuplot
echo "progress_curve.sh: $OUT/step7_progress.tsv and step7_progress.png"
