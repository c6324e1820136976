#!/bin/sh
# results.sh: a runs folder as committed results, without the checkpoints.
#
#   sh scripts/results.sh PRESET RUNS_DIR [DEST]      (or: make results PRESET=quick RUNS=dir)
#
# DEST defaults to results/PRESET. For every run of RUNS_DIR that has a
# metrics.json it copies metrics.json, loss.tsv and samples.png (the
# checkpoints stay behind: megabytes each), then renders, from the copies:
#   table.txt   step6_ablation table
#   curves.txt  step6_ablation table --curves: the loss window by window
#   step1.txt   step1_scorecard on the baseline's seeds (the noise)
#   plots/      scripts/plots.sh, step 1's figures, and the attention maps
#               (these read the checkpoints, so they come from RUNS_DIR)
#   report.md   lab report
#   README.md   the machine, the commit, the commands, the wall time of the runs
# RUNNER (optional) says how the runs were scheduled, e.g.
#   RUNNER="two at a time (xargs -P 2), one thread each, under nice"
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
PRESET=${1:?usage: results.sh PRESET RUNS_DIR [DEST]}
RUNS=${2:?usage: results.sh PRESET RUNS_DIR [DEST]}
DEST=${3:-$root/results/$PRESET}
STEP6=${STEP6:-$root/step6_ablation/step6_ablation}
LAB=${LAB:-$root/lab/lab}
STEP1=${STEP1:-$root/step1_scorecard/step1_scorecard}
RUNNER=${RUNNER:-}

for prog in "$STEP6" "$LAB" "$STEP1"; do
    [ -x "$prog" ] || { echo "results.sh: $prog is not built (make all)" >&2; exit 1; }
done
[ -d "$RUNS" ] || { echo "results.sh: no runs folder $RUNS" >&2; exit 1; }
RUNS=$(cd "$RUNS" && pwd)
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
[ "$RUNS" != "$DEST" ] || { echo "results.sh: RUNS_DIR and DEST are the same folder" >&2; exit 1; }

# 1. the runs' small files
n=0
for dir in "$RUNS"/*/; do
    name=$(basename "$dir")
    [ -f "$dir/metrics.json" ] || continue
    mkdir -p "$DEST/$name"
    for f in metrics.json loss.tsv val.tsv samples.png; do
        [ -f "$dir/$f" ] && cp "$dir/$f" "$DEST/$name/$f"
    done
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "results.sh: no run in $RUNS has a metrics.json" >&2; exit 1; }
echo "results.sh: $n runs copied into $DEST"

# 2. the table and step 1's noise, read from the copies (run from DEST's
# parent, so the text names the folder as a reader of the repository sees it)
cd "$DEST/.."
rel="$(basename "$(pwd)")/$(basename "$DEST")"
"$STEP6" table "$(basename "$DEST")" | sed "s|runs in $(basename "$DEST")|runs in $rel|" > "$DEST/table.txt"
"$STEP6" table --curves "$(basename "$DEST")" > "$DEST/curves.txt"
set -- "$DEST"/p11_base_s*
mkdir -p "$DEST/plots"
if [ -e "$1" ] && [ $# -ge 2 ]; then
    "$STEP1" "$@" --figures "$DEST/plots" | sed "s|$DEST/|$rel/|g" > "$DEST/step1.txt"
fi

# 3. the plots; the attention maps need the checkpoints of RUNS_DIR
STEP6="$STEP6" sh "$here/plots.sh" "$DEST" "$DEST/plots"
"$LAB" attention-maps --runs "$RUNS" --out "$DEST/plots" > "$DEST/plots/attention_maps.txt" 2>&1 || {
    rm -f "$DEST/plots/attention_maps.txt"   # no maps: no file, rather than an error naming this machine's folders
    echo "results.sh: no attention maps (they need $RUNS/p11_base_s0 and p11_rope with their checkpoints)"
}
rm -f "$DEST"/plots/*.gp "$DEST"/plots/*.log     # the PNGs and their data stay

# 4. the report, with its links to the plots
"$LAB" report "$DEST" > /dev/null
sed -i "s|$DEST|$rel|g" "$DEST/report.md"

# 5. README.md: where, when, with what
"$STEP6" table --tsv-seeds "$DEST" > "$DEST/.seeds.tsv"
# the seeds of the upgrades (the baseline always has two or more)
seeds=$(awk -F'\t' '$1 == "mean" && $2 > 0 && $4 > m { m = $4 } END { print m + 0 }' "$DEST/.seeds.tsv")
seeds_opt=""
[ "$seeds" -le 1 ] || seeds_opt=" --seeds $seeds"
cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain 2>/dev/null | grep -v '^??' | head -1 || true)
{
    # the record of the runs and nothing else (tests/test_results_readmes.c
    # holds it to this shape); results/README.md says what the files are
    echo "# $rel: the $PRESET preset"
    echo
    echo "## Machine"
    echo
    echo "- CPU: ${cpu:-unknown}, $(nproc) cores; $(uname -sr)"
    echo
    echo "## Code"
    echo
    echo "- commit \`$commit\`${dirty:+ (with uncommitted changes)}"
    echo
    echo "## Commands"
    echo
    [ -z "$RUNNER" ] || { echo "- runs scheduled: $RUNNER"; echo; }
    echo '```sh'
    echo "make -j2 all"
    echo "lab/lab ablation --preset $PRESET$seeds_opt --out RUNS"
    echo "make results PRESET=$PRESET RUNS=RUNS"
    echo '```'
    echo
    echo "## Date"
    echo
    echo "- copied from \`$(basename "$RUNS")\` by \`scripts/results.sh\` on $(date -u '+%Y-%m-%d')"
    echo
    echo "## Wall time"
    echo
    echo "| run | seed | training steps (min, \`train_seconds\`) | scorecard (min, \`scorecard_seconds\`) |"
    echo "|---|---:|---:|---:|"
    awk -F'\t' '$1 == "run" { printf "| %s | %d | %.1f | %.1f |\n", $8, $4, $6 / 60, $7 / 60 }' "$DEST/.seeds.tsv"
    awk -F'\t' '$1 == "run" { t += $6; s += $7; n++ }
        END { printf "\n- In all: %d runs, %.0f min of training steps and %.0f min of scorecards, summed run by run\n", n, t / 60, s / 60 }' "$DEST/.seeds.tsv"
} > "$DEST/README.md"
rm -f "$DEST/.seeds.tsv"
echo "results.sh: wrote $DEST/{table.txt,curves.txt,step1.txt,report.md,README.md,plots/}"
