#!/bin/sh
# sweep_plots.sh: the figures of a learning-rate sweep, drawn with gnuplot.
#
#   sh scripts/sweep_plots.sh SWEEP_DIR [OUT_DIR] -- SWEEP OPTIONS
#   e.g. sh scripts/sweep_plots.sh runs/sweep_lr -- --key lr \
#            --values 3e-4,1e-3,2e-3 --configs base,qknorm,all --seeds 2
#
# It reads the runs through `lab sweep ... --tsv` (one line per
# run: its configuration, the value, the seed, how it ended, val MSE, loss
# spikes, the largest attention logit) and draws into OUT_DIR (default
# SWEEP_DIR/plots). Runs the folder does not hold are left out, so --seeds may
# name more seeds than some points have (make sweep-figures: 2 seeds a point,
# 4 at the edge):
#   val_mse.png     final val MSE against the value (log axis), one colour per
#                   configuration: each seed a dot, the mean a line; a run that
#                   diverged is a cross on the top edge
#   stability.png   loss spikes (per run, the mean over the seeds) and the largest
#                   attention logit against the value, per configuration
# LAB names the program (default: lab/lab next to this script).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: sh scripts/sweep_plots.sh SWEEP_DIR [OUT_DIR] -- SWEEP OPTIONS" >&2; exit 2; }
SWEEP=$1; shift
OUT=$SWEEP/plots
if [ $# -ge 1 ] && [ "$1" != "--" ]; then OUT=$1; shift; fi
[ $# -ge 1 ] && [ "$1" = "--" ] && shift
LAB=${LAB:-$here/../lab/lab}

command -v gnuplot >/dev/null 2>&1 || { echo "sweep_plots.sh: gnuplot is not installed (make deps)" >&2; exit 1; }
[ -x "$LAB" ] || { echo "sweep_plots.sh: $LAB is not built (make lab)" >&2; exit 1; }
[ -d "$SWEEP" ] || { echo "sweep_plots.sh: no sweep folder $SWEEP" >&2; exit 1; }

mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$LAB" sweep --out "$SWEEP" "$@" --tsv > "$tmp/all.tsv"
key=$(printf '%s\n' "$@" | awk 'prev == "--key" { print; exit } { prev = $0 }')

# one file per configuration: value seed outcome val_mse spikes max_logit
configs=$(awk -F'\t' 'NR > 1 && !seen[$1]++ { print $1 }' "$tmp/all.tsv")
[ -n "$configs" ] || { echo "sweep_plots.sh: the sweep has no runs" >&2; exit 1; }
top=$(awk -F'\t' 'NR > 1 && $5 == "finished" && $6 > m { m = $6 } END { print (m > 0 ? m * 1.1 : 1) }' "$tmp/all.tsv")
val_plot=""; mean_plot=""; div_plot=""; spike_plot=""; logit_plot=""
i=0
for c in $configs; do
    i=$((i + 1))
    label=$(awk -F'\t' -v c="$c" '$1 == c { print $2; exit }' "$tmp/all.tsv")
    awk -F'\t' -v c="$c" '$1 == c && $5 == "finished" { print $3, $6 }' "$tmp/all.tsv" > "$tmp/$c.dots"
    awk -F'\t' -v c="$c" -v top="$top" '$1 == c && $5 == "diverged" { print $3, top }' "$tmp/all.tsv" > "$tmp/$c.div"
    # per value with a finished seed: mean val MSE, mean loss spikes per run (the
    # points may have different numbers of seeds), the largest logit
    awk -F'\t' -v c="$c" '$1 == c {
            if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 }
            if ($5 == "finished") { s[$3] += $6; k[$3]++; sp[$3] += $7 }
            if ($8 != "nan" && $8 + 0 > ml[$3]) ml[$3] = $8 + 0
        } END { for (j = 1; j <= n; j++) { v = order[j]
            if (k[v]) printf "%s %s %s %s\n", v, s[v] / k[v], sp[v] / k[v], (ml[v] > 0 ? ml[v] : "NaN") } }' \
        "$tmp/all.tsv" | sort -g > "$tmp/$c.mean"
    val_plot="$val_plot '$tmp/$c.dots' using 1:2 with points pt 7 ps 0.8 lc $i title '$label (each seed)',"
    mean_plot="$mean_plot '$tmp/$c.mean' using 1:2 with lines lw 2 lc $i notitle,"
    [ -s "$tmp/$c.div" ] && div_plot="$div_plot '$tmp/$c.div' using 1:2 with points pt 2 ps 2 lw 2 lc $i title '$label diverged',"
    spike_plot="$spike_plot '$tmp/$c.mean' using 1:3 with linespoints pt 7 lw 2 lc $i title '$label',"
    logit_plot="$logit_plot '$tmp/$c.mean' using 1:4 with linespoints pt 7 lw 2 lc $i title '$label',"
done

gnuplot <<EOF
set terminal pngcairo size 950,500 font ",10"
set output '$OUT/val_mse.png'
set logscale x
set xlabel '$key (log scale)'
set ylabel 'final val MSE (lower is better)'
set yrange [*:$top*1.02]
set key outside right top
set grid
set title 'val MSE against $key: each seed a dot, the mean a line, a diverged run a cross on the top edge'
plot ${val_plot}${mean_plot}${div_plot%,}
EOF

gnuplot <<EOF
set terminal pngcairo size 950,700 font ",10"
set output '$OUT/stability.png'
set multiplot layout 2,1
set logscale x
set grid
set key outside right top
set xlabel '$key (log scale)'
set ylabel 'loss spikes per run'
set title 'loss spikes against $key (the mean over the seeds that finished)'
plot ${spike_plot%,}
set logscale y
set ylabel 'largest attention logit'
set title 'the largest attention logit of any seed against $key'
plot ${logit_plot%,}
unset multiplot
EOF
echo "sweep_plots.sh: wrote $OUT/val_mse.png $OUT/stability.png"
