# step2_norm_times: the four timings as bars (step2_norm_times.tsv: pass,
# LayerNorm ms, RMSNorm ms). From the program: the tokens (R, D), threads,
# rounds, and RMSNorm's time over LayerNorm's, forward and backward.
set title sprintf("Time per call on (%d, %d) tokens, %d thread%s, median of %d turns:\nRMSNorm takes %.2fx LayerNorm's time forward and %.2fx backward", \
                  R, D, threads, threads == 1 ? "" : "s", rounds, ratio_forward, ratio_backward)
set ylabel 'milliseconds per call'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top right box opaque width 1
set grid ytics lc rgb '#dddddd'
set yrange [0:*]
set xrange [-0.6:1.6]
set offsets 0, 0, graph 0.15, 0
set xtics nomirror scale 0
plot 'step2_norm_times.tsv' using 2:xtic(1) lc rgb '#1f5fa0' title 'LayerNorm', \
     '' using 3 lc rgb '#c05000' title 'RMSNorm', \
     '' using ($0 - 1.0/6):2:(sprintf('%.2f ms', $2)) with labels offset 0,0.8 notitle, \
     '' using ($0 + 1.0/6):3:(sprintf('%.2f ms', $3)) with labels offset 0,0.8 notitle
