#!/bin/sh
# gap_plot.sh: does a gap close with a longer run? The val MSE difference
# between configurations against the steps, drawn with gnuplot.
#
#   sh scripts/gap_plot.sh SWEEP_DIR OUT_PNG -- SWEEP OPTIONS
#   e.g. sh scripts/gap_plot.sh runs/budget_swiglu gap.png -- --key steps \
#            --values 16000 --configs base,swiglu --seeds 2 --set val_every=500
#
# It reads `lab sweep ... --curves-tsv` (one line per val check:
# each configuration's mean over seeds minus the first configuration's, and
# the standard error of that difference) and draws, per configuration and
# value, the difference as a line with a band of +-2 standard errors (the
# width inside which the table says "not resolved"), and zero. LAB names
# the program (default: lab/lab next to this script).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: sh scripts/gap_plot.sh SWEEP_DIR OUT_PNG -- SWEEP OPTIONS" >&2; exit 2; }
SWEEP=$1; OUT=$2; shift 2
[ $# -ge 1 ] && [ "$1" = "--" ] && shift
LAB=${LAB:-$here/../lab/lab}

command -v gnuplot >/dev/null 2>&1 || { echo "gap_plot.sh: gnuplot is not installed (make deps)" >&2; exit 1; }
[ -x "$LAB" ] || { echo "gap_plot.sh: $LAB is not built (make lab)" >&2; exit 1; }
[ -d "$SWEEP" ] || { echo "gap_plot.sh: no sweep folder $SWEEP" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$LAB" sweep --out "$SWEEP" "$@" --curves-tsv > "$tmp/all.tsv"
# lines: config label value step n_ref n ref_mean mean diff se
awk -F'\t' 'NR > 1 { print $1 "\t" $3 }' "$tmp/all.tsv" | sort -u > "$tmp/series"
[ -s "$tmp/series" ] || { echo "gap_plot.sh: no val curves to compare in $SWEEP (runs with --set val_every=N, two configurations)" >&2; exit 1; }
ref=$(printf '%s\n' "$@" | awk 'prev == "--configs" { split($0, c, ","); print c[1]; exit } { prev = $0 }')
ref=${ref:-base}
key=$(printf '%s\n' "$@" | awk 'prev == "--key" { print; exit } { prev = $0 }')

plot=""
i=0
while IFS="$(printf '\t')" read -r c v; do
    i=$((i + 1))
    f="$tmp/$c-$v.dat"
    # step diff lower upper (a band of +-2 se; without a spread, the line alone)
    awk -F'\t' -v c="$c" -v v="$v" 'NR > 1 && $1 == c && $3 == v {
            se = ($10 == "nan" || $10 == "-nan") ? 0 : $10
            print $4, $9, $9 - 2 * se, $9 + 2 * se }' "$tmp/all.tsv" > "$f"
    label=$(awk -F'\t' -v c="$c" 'NR > 1 && $1 == c { print $2; exit }' "$tmp/all.tsv")
    title="$label"
    [ "$(wc -l < "$tmp/series")" -gt 1 ] && title="$label, $key $v"
    plot="$plot '$f' using 1:3:4 with filledcurves lc $i fs transparent solid 0.2 notitle,"
    plot="$plot '$f' using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc $i title '$title',"
done < "$tmp/series"

mkdir -p "$(dirname "$OUT")"
gnuplot <<EOF
set terminal pngcairo size 950,500 font ",10"
set output '$OUT'
set xlabel 'training step'
set ylabel "val MSE minus ${ref} (above 0: behind ${ref})"
set key outside right top
set grid
set title 'the val MSE gap along the run: mean over seeds, the band +-2 standard errors'
plot ${plot} 0 with lines lc rgb 'black' dt 2 title 'level with ${ref}'
EOF
echo "gap_plot.sh: wrote $OUT"
