#!/bin/sh
# results.sh: a runs folder as committed results, without the checkpoints.
#
#   sh scripts/results.sh PRESET RUNS_DIR [DEST]      (or: make results PRESET=quick RUNS=dir)
#
# DEST defaults to results/PRESET. For every run of RUNS_DIR that has a
# metrics.json it copies metrics.json, loss.tsv, samples.png and a guidance
# sweep's guidance.tsv (the
# checkpoints stay behind: megabytes each), then renders, from the copies:
#   table.txt   step6_ablation table
#   curves.txt  step6_ablation table --curves: the loss window by window
#   step1.txt   step1_scorecard on the baseline's seeds (the noise)
#   plots/      scripts/plots.sh, step 1's figures, and the attention maps
#               (these read the checkpoints, so they come from RUNS_DIR)
#   guidance.txt  step7_guidance curves, when runs have a guidance sweep
#               (its figure, step7_curves.png, in plots/)
#   recipe.txt, nfe.txt  step8_recipe table and curves, when runs with an
#               EMA (r8_*) are among them (the figure step8_nfe.png in plots/)
# The first four only when step 6's runs (p11_*) are among them.
#   report.md   lab report
#   README.md   scripts/results_readme.sh: what the runs recorded of
#               themselves (machine, probe, command, date) and their wall time
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
PRESET=${1:?usage: results.sh PRESET RUNS_DIR [DEST]}
RUNS=${2:?usage: results.sh PRESET RUNS_DIR [DEST]}
DEST=${3:-$root/results/$PRESET}
STEP6=${STEP6:-$root/step6_ablation/step6_ablation}
LAB=${LAB:-$root/lab/lab}
STEP1=${STEP1:-$root/step1_scorecard/step1_scorecard}
STEP7=${STEP7:-$root/step7_guidance/step7_guidance}

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
    for f in metrics.json loss.tsv val.tsv samples.png samples_ema.png guidance.tsv nfe.tsv; do
        [ -f "$dir/$f" ] && cp "$dir/$f" "$DEST/$name/$f"
    done
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "results.sh: no run in $RUNS has a metrics.json" >&2; exit 1; }
echo "results.sh: $n runs copied into $DEST"

# 2. step 6's runs (p11_*): the table and step 1's noise, read from the
# copies (run from DEST's parent, so the text names the folder as a reader of
# the repository sees it); the plots; the attention maps need the
# checkpoints of RUNS_DIR; the report, with its links to the plots
cd "$DEST/.."
rel="$(basename "$(pwd)")/$(basename "$DEST")"
mkdir -p "$DEST/plots"
set -- "$DEST"/p11_*
if [ -e "$1" ]; then
    "$STEP6" table "$(basename "$DEST")" | sed "s|runs in $(basename "$DEST")|runs in $rel|" > "$DEST/table.txt"
    "$STEP6" table --curves "$(basename "$DEST")" > "$DEST/curves.txt"
    set -- "$DEST"/p11_base_s*
    if [ -e "$1" ] && [ $# -ge 2 ]; then
        "$STEP1" "$@" --figures "$DEST/plots" | sed "s|$DEST/|$rel/|g" > "$DEST/step1.txt"
    fi
    STEP6="$STEP6" sh "$here/plots.sh" "$DEST" "$DEST/plots"
    "$STEP6" attention-maps --runs "$RUNS" --out "$DEST/plots" > "$DEST/plots/attention_maps.txt" 2>&1 || {
        rm -f "$DEST/plots/attention_maps.txt"   # no maps: no file, rather than an error naming this machine's folders
        echo "results.sh: no attention maps (they need $RUNS/p11_base_s0 and p11_rope with their checkpoints)"
    }
    "$LAB" report "$DEST" > /dev/null
    sed -i "s|$DEST|$rel|g" "$DEST/report.md"
fi

# 3. step 7's guidance sweeps: their table and curves
set -- "$DEST"/*_s*/guidance.tsv
if [ -e "$1" ]; then
    "$STEP7" curves $(for f in "$@"; do echo "${f#"$(pwd)"/}"; done) --figures "$DEST/plots" |
        sed '/^figures:/d' > "$DEST/guidance.txt"
fi
rm -f "$DEST"/plots/*.gp "$DEST"/plots/*.log     # the PNGs and their data stay

# 4. step 8's runs (those with an EMA, r8_*): raw and EMA over seeds, and
# probe-FD against model evaluations (step8_recipe nfe of each checkpoint)
set -- $(for f in "$DEST"/r8_uniform_s* "$DEST"/r8_*_s*; do [ -e "$f" ] && echo "$f"; done | awk '!seen[$0]++')   # the baseline first
if [ $# -gt 0 ]; then
    "$root/step8_recipe/step8_recipe" table $(for f in "$@"; do echo "${f#"$(pwd)"/}"; done) > "$DEST/recipe.txt"
    set -- "$DEST"/r8_*_s*/nfe.tsv
    if [ -e "$1" ]; then
        "$root/step8_recipe/step8_recipe" curves $(for f in "$@"; do echo "${f#"$(pwd)"/}"; done) \
            --figures "$DEST/plots" | sed '/^figures:/d' > "$DEST/nfe.txt"
    fi
fi
rm -f "$DEST"/plots/*.gp "$DEST"/plots/*.log

# 5. README.md: the runs' own records (machine, probe, command, date, wall time)
sh "$here/results_readme.sh" "$DEST"
echo "results.sh: wrote $DEST: $(cd "$DEST" && ls -d -- *.txt *.md plots | tr '\n' ' ')"
