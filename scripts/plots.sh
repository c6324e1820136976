#!/bin/sh
# plots.sh: the ablation's figures, drawn with gnuplot (pngcairo).
#
#   sh scripts/plots.sh [RUNS_DIR [OUT_DIR]]      (or: make plots)
#
# RUNS_DIR defaults to runs/, OUT_DIR to RUNS_DIR/plots. It reads
#   RUNS_DIR/<run>/loss.tsv     step, loss, gradient norm, largest attention logit
#   RUNS_DIR/<run>/samples.png  8x8 samples of the run
# and the runs' numbers through `step6_ablation table --tsv`, which parses
# every metrics.json (this script never reads JSON itself). It draws
#   loss.png       training loss of every run, smoothed
#   lr2e3.png      the lr 2e-3 pair, with the baseline and QK-norm at the default lr
#   max_logit.png  the largest attention logit over training: baseline vs QK-norm
#   val_mse.png    val MSE of each run, with the band of one seed gap
#   val_curve.png  val MSE along the run, for the runs that wrote val.tsv (val_every)
#   val_mse_seeds.png  every seed's val MSE, each configuration's mean and
#                  spread, the band of the baseline's spread
#   samples.png    every run's samples side by side
# No speed figure: the runs were timed while they shared the machine with
# whatever else ran (lab speed times the configurations fairly).
# A run that is missing is left out with a note; a figure with no run at all
# is not drawn. STEP6 names the program (default: step6_ablation/step6_ablation
# next to this script).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
RUNS=${1:-$here/../runs}
OUT=${2:-$RUNS/plots}
STEP6=${STEP6:-$here/../step6_ablation/step6_ablation}

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plots.sh: gnuplot is not installed (apt-get install gnuplot-nox, or: make deps)" >&2
    exit 1
fi
if [ ! -x "$STEP6" ]; then
    echo "plots.sh: $STEP6 is not built (make step6)" >&2
    exit 1
fi
if [ ! -d "$RUNS" ]; then
    echo "plots.sh: no runs folder $RUNS" >&2
    exit 1
fi
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# name, label, present, params, val_mse, probe_fd, ms_step, spikes, base_mean, gap
"$STEP6" table --tsv "$RUNS" > "$tmp/summary.tsv"
grep -v '^#' "$tmp/summary.tsv" | awk -F'\t' '$3 == 1' > "$tmp/present.tsv" || true

label_of() { awk -F'\t' -v n="$1" '$1 == n { print $2 }' "$tmp/summary.tsv"; }

# A smoothed copy of each loss.tsv: the mean of the last W steps, W about a
# fortieth of the run (at least 5), so the curves of runs that differ by a
# few thousandths can be told apart; the same for the logit column, which is
# also kept as it is, to be drawn faintly behind.
have_loss=""
missing=""
names=$(grep -v '^#' "$tmp/summary.tsv" | cut -f1)
for name in $names; do
    f="$RUNS/$name/loss.tsv"
    if [ -s "$f" ] && [ "$(wc -l < "$f")" -gt 1 ]; then
        n=$(($(wc -l < "$f") - 1))
        w=$((n / 40)); [ "$w" -ge 5 ] || w=5
        # columns: step, smoothed loss, smoothed logit, raw logit
        awk -v w="$w" 'NR > 1 { i++; s += $2; t += $4; k = i % w;
                                 if (i > w) { s -= b[k]; t -= c[k] } b[k] = $2; c[k] = $4;
                                 n = i < w ? i : w; print $1, s / n, t / n, $4 }' "$f" > "$tmp/$name.dat"
        have_loss="$have_loss $name"
    else
        missing="$missing $name"
    fi
done
[ -z "$missing" ] || echo "plots.sh: no loss.tsv yet for:$missing (left out)"

# The colour of each run, the same in every figure; the lr 2e-3 runs dashed.
# (gnuplot's "#AARRGGBB" with AA = c8 draws the faint copies)
color_of() {
    case "$1" in
        p11_base_s0) echo '#000000' ;;   p11_base_s1) echo '#777777' ;;
        p11_rmsnorm) echo '#1f77b4' ;;   p11_qknorm) echo '#d62728' ;;
        p11_swiglu) echo '#2ca02c' ;;    p11_rope) echo '#9467bd' ;;
        p11_all) echo '#ff7f0e' ;;       p11_base_lr2e3) echo '#17becf' ;;
        *) echo '#e377c2' ;;
    esac
}
dash_of() { case "$1" in *lr2e3) echo 2 ;; *) echo 1 ;; esac; }

# One gnuplot "plot" clause per run that has a loss.tsv. $1: the runs to
# draw, $2: the column (2 smoothed loss, 3 smoothed logit). With $3 = raw,
# column 4 (the logit of every step) is drawn first, faint and untitled.
curves() {
    sep=""
    if [ "${3:-}" = raw ]; then
        for name in $1; do
            case " $have_loss " in *" $name "*) ;; *) continue ;; esac
            printf '%s"%s" using 1:4 with lines lw 1 lc rgb "#c8%s" notitle' \
                "$sep" "$tmp/$name.dat" "$(color_of "$name" | cut -c2-)"
            sep=", \\
    "
        done
    fi
    for name in $1; do
        case " $have_loss " in *" $name "*) ;; *) continue ;; esac
        printf '%s"%s" using 1:%s with lines lw 2 dt %s lc rgb "%s" title "%s"' \
            "$sep" "$tmp/$name.dat" "$2" "$(dash_of "$name")" "$(color_of "$name")" "$(label_of "$name")"
        sep=", \\
    "
    done
}

# Tick marks for a log-scaled loss axis: gnuplot would only label powers of
# ten, and a loss curve spans less than one. So: the "nice" numbers 1, 1.2,
# 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten that fall between the
# smallest and largest value (finer steps when the curves span less than 3x) in column 2 of the given runs' curves.
log_tics() {
    for name in $1; do
        case " $have_loss " in *" $name "*) cat "$tmp/$name.dat" ;; esac
    done | awk 'NR == 1 || $2 < lo { lo = $2 } NR == 1 || $2 > hi { hi = $2 }
        END { if (!(lo > 0)) exit;
              nm = split(hi / lo < 3 ? "1 1.1 1.2 1.3 1.4 1.5 1.6 1.8 2 2.2 2.5 2.8 3 3.5 4 4.5 5 6 7 8 9" : "1 1.2 1.5 2 2.5 3 4 5 6 8", m, " ");
              p = 10 ^ int(log(lo) / log(10) - 1); out = "";
              for (; p <= hi * 10; p *= 10) for (i = 1; i <= nm; i++) { v = m[i] * p;
                  if (v >= lo * 0.97 && v <= hi * 1.03) out = out (out ? ", " : "") sprintf("\"%g\" %g", v, v) }
              if (out) print "set ytics (" out ")" }'
}

count_in() { c=0; for name in $1; do case " $have_loss " in *" $name "*) c=$((c + 1)) ;; esac; done; echo $c; }

common='set terminal pngcairo size 1000,640 font "Sans,12" noenhanced
set grid lc rgb "#dddddd"
set key outside right top box opaque
set border lw 1.2'

drawn=""
all="p11_base_s0 p11_base_s1 p11_rmsnorm p11_qknorm p11_swiglu p11_rope p11_all p11_base_lr2e3 p11_qknorm_lr2e3"

# $OUT/$1: the training loss of the runs $3 on a log scale, titled $2.
loss_plot() {
    gnuplot <<EOF
$common
set output "$OUT/$1"
set title "$2"
set xlabel "training step"
set ylabel "flow-matching loss (log scale)"
set logscale y
set autoscale yfix
set offsets 0, 0, graph 0.03, graph 0.03
$(log_tics "$3")
plot $(curves "$3" 2)
EOF
}

if [ "$(count_in "$all")" -gt 0 ]; then
    loss_plot loss.png "Training loss of every run (mean of a trailing window; lr 2e-3 runs dashed)" "$all"
    drawn="$drawn loss.png"
fi

# val MSE along the run: the runs trained with val_every > 0 write val.tsv
# (step, val MSE on the fixed exam), the same exam as the final score.
val_runs=""
for name in $names; do
    [ -s "$RUNS/$name/val.tsv" ] && [ "$(wc -l < "$RUNS/$name/val.tsv")" -gt 1 ] && val_runs="$val_runs $name"
done
if [ -n "$val_runs" ]; then
    plot=""; sep=""
    for name in $val_runs; do
        plot="$plot$sep\"$RUNS/$name/val.tsv\" using 1:2 skip 1 with linespoints pt 7 ps 0.6 lw 2 dt $(dash_of "$name") lc rgb \"$(color_of "$name")\" title \"$(label_of "$name")\""
        sep=", "
    done
    gnuplot <<EOF
$common
set output "$OUT/val_curve.png"
set title "val MSE along the run (the fixed exam every val_every steps; lr 2e-3 runs dashed)"
set xlabel "training step"
set ylabel "val MSE"
set autoscale yfix
set offsets 0, 0, graph 0.05, graph 0.05
plot $plot
EOF
    drawn="$drawn val_curve.png"
fi

pair="p11_base_s0 p11_qknorm p11_base_lr2e3 p11_qknorm_lr2e3"
if [ "$(count_in "p11_base_lr2e3 p11_qknorm_lr2e3")" -gt 0 ]; then
    loss_plot lr2e3.png "Learning rate 2e-3 (dashed) against the default lr (solid): baseline and QK-norm" "$pair"
    drawn="$drawn lr2e3.png"
else
    echo "plots.sh: neither lr 2e-3 run has a loss.tsv: no lr2e3.png"
fi

if [ "$(count_in "$pair")" -gt 0 ]; then
    gnuplot <<EOF
$common
set output "$OUT/max_logit.png"
set title "Largest |attention logit| of each step, over all blocks and heads\n(faint: every step; bold: mean of a trailing window; lr 2e-3 runs dashed)"
set xlabel "training step"
set ylabel "max |q.k| / sqrt(head_dim)"
plot $(curves "$pair" 3 raw)
EOF
    drawn="$drawn max_logit.png"
fi

if [ -s "$tmp/present.tsv" ]; then
    mean=$(awk -F'\t' 'NR == 1 { print $9 }' "$tmp/present.tsv")
    gap=$(awk -F'\t' 'NR == 1 { printf "%.4f", $10 }' "$tmp/present.tsv")
    case "$mean" in
        nan|NaN|"") band="" ; bandnote="(no seed gap yet: it needs both baselines)" ;;
        *) band="set object 1 rect from graph 0, first $mean - $gap to graph 1, first $mean + $gap behind fc rgb '#cfe3f5' fs solid 1.0 noborder
set arrow 1 from graph 0, first $mean to graph 1, first $mean nohead dt 2 lc rgb '#4c72b0'"
           bandnote="(band: baseline mean +- one seed gap = $gap; inside it, a change is noise)" ;;
    esac
    gnuplot <<EOF
$common
set datafile separator "\t"
set output "$OUT/val_mse.png"
set title "Val MSE of each run, lower is better; the lr 2e-3 runs in grey\n$bandnote"
set ylabel "val MSE"
set xtics rotate by -30 left
set xrange [-0.5:*]
set offsets 0, 0.5, graph 0.1, graph 0.1
set key off
set bmargin 6
$band
is_lr(n) = strstrt(n, "lr2e3") > 0
plot "$tmp/present.tsv" using 0:(is_lr(strcol(1)) ? NaN : \$5):xtic(2) with points pt 7 ps 1.8 lc rgb "#c44e52", \
     "" using 0:(is_lr(strcol(1)) ? \$5 : NaN) with points pt 7 ps 1.8 lc rgb "#888888", \
     "" using 0:5:(sprintf("%.4f", \$5)) with labels offset 0,1.2
EOF
    drawn="$drawn val_mse.png"
else
    echo "plots.sh: no run has a metrics.json yet: no val_mse.png"
fi

# Every seed of every configuration: the runs as dots, each configuration's
# mean with +- one spread (sample standard deviation over its seeds), and the
# band of one spread around the baseline's mean.
"$STEP6" table --tsv-seeds "$RUNS" > "$tmp/seeds.tsv"
awk -F'\t' '$1 == "run"' "$tmp/seeds.tsv" > "$tmp/seed_runs.tsv"
awk -F'\t' '$1 == "mean"' "$tmp/seeds.tsv" > "$tmp/seed_means.tsv"   # all: a configuration not run keeps its label
if [ -s "$tmp/seed_runs.tsv" ]; then
    base=$(awk -F'\t' '$2 == 0 && $4 >= 2 { printf "%.6f %.6f", $5, $6 }' "$tmp/seed_means.tsv")
    if [ -n "$base" ]; then
        bmean=${base% *}; bsd=${base#* }
        band="set object 1 rect from graph 0, first $bmean - $bsd to graph 1, first $bmean + $bsd behind fc rgb '#cfe3f5' fs solid 1.0 noborder
set arrow 1 from graph 0, first $bmean to graph 1, first $bmean nohead dt 2 lc rgb '#4c72b0'"
        bandnote="band: the baseline's mean +- one spread of its seeds ($(printf '%.4f' "$bsd"))"
    else
        band=""; bandnote="(no band: the baseline needs two seeds or more)"
    fi
    gnuplot <<EOF
$common
set datafile separator "\t"
set output "$OUT/val_mse_seeds.png"
set title "Val MSE of every seed (dots) and each configuration's mean +- one spread (bars)\n$bandnote"
set ylabel "val MSE (lower is better)"
set xtics rotate by -30 left
set xrange [-0.5:7.5]
set offsets 0, 0, graph 0.08, graph 0.08
set key inside top right box opaque
set bmargin 6
$band
plot "$tmp/seed_means.tsv" using 2:5:(\$4 >= 2 ? \$6 : 0):xtic(3) with yerrorbars pt 5 ps 1.4 lw 2 lc rgb "#c44e52" title "mean +- spread", \
     "$tmp/seed_runs.tsv" using (\$2 + 0.15):5 with points pt 7 ps 0.9 lc rgb "#333333" title "one seed"
EOF
    drawn="$drawn val_mse_seeds.png"
fi

# Samples: a 3 x 3 grid, one panel per run (gnuplot reads PNG through libgd).
nsamp=0
panels=""
for name in $all; do
    if [ -s "$RUNS/$name/samples.png" ]; then
        nsamp=$((nsamp + 1))
        panels="$panels
set title \"$(label_of "$name")\"
plot \"$RUNS/$name/samples.png\" binary filetype=png with rgbimage notitle"
    else
        panels="$panels
set title \"$(label_of "$name") (missing)\"
plot [0:1][0:1] NaN notitle"
    fi
done
if [ "$nsamp" -gt 0 ]; then
    gnuplot <<EOF
set terminal pngcairo size 1050,1150 font "Sans,13" noenhanced
set output "$OUT/samples.png"
unset border; unset xtics; unset ytics; unset key
set size ratio -1
set multiplot layout 3,3 title "Samples of every run: 20 Euler steps, the same noise for all" margins 0.01,0.99,0.01,0.93 spacing 0.01,0.05
$panels
unset multiplot
EOF
    drawn="$drawn samples.png"
else
    echo "plots.sh: no run has a samples.png yet: no samples.png"
fi

echo "plots.sh: wrote$drawn into $OUT"
