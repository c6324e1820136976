#!/bin/sh
# step_figures.sh: each step's figures into DIR, from the project root
# (make tutorial, plots, docs-figures).
#
#   sh scripts/step_figures.sh DIR STEP1_RUNS STEP7_RUNS
#
# Step 1's from the baseline's seeds STEP1_RUNS/p11_base_s* (-: none; the
# tutorial's step 1 draws its own), steps 2 to 5's computed on the spot,
# step 7's grid from the shipped model and its curves from the sweeps
# STEP7_RUNS/c10_*_s*/guidance.tsv (make guidance-sweeps), if any. DIR is
# absolute: the steps run in their folders.
set -e
dir=$1 step1=$2 step7=$3
if [ "$step1" != - ]; then
    set -- "$step1"/p11_base_s*
    if [ -e "$1" ] && [ $# -ge 2 ]; then
        echo "step1_scorecard $* --figures $dir"
        step1_scorecard/step1_scorecard "$@" --figures "$dir"
    else echo "plots: no step 1 figures: $step1 has fewer than two p11_base_s* runs"; fi
fi
for s in step2_rmsnorm step3_qknorm step4_swiglu step5_rope2d; do
    echo "cd $s && ./$s --figures $dir"
    (cd $s && ./$s --figures "$dir")
done
(cd step7_guidance && ./step7_guidance --figures "$dir" > /dev/null)
echo "figures: step7_grid.png in $dir"
set -- "$step7"/c10_*_s*/guidance.tsv
if [ -e "$1" ]; then step7_guidance/step7_guidance curves "$@" --figures "$dir"
else echo "plots: no step 7 curves: $step7 has no c10_*_s*/guidance.tsv (make guidance-sweeps)"; fi
