# step3_logit_growth: the largest logit of one head against the scale of q and
# k, without and with QK-norm, on log-log axes (step3_logit_growth.tsv: scale,
# without, with). From the program: head_dim, and the scales of the attention
# maps, marks[1..3].
bound = sqrt(head_dim)
do for [i = 1:3] {
    set arrow from marks[i], graph 0 to marks[i], graph 1 nohead lc rgb '#aaaaaa' dt 3 back
    set label sprintf('x%d', marks[i]) at marks[i], graph 0.04 offset 0.4,0 tc rgb '#666666'
}
set title sprintf("Without QK-norm the largest logit grows with the square of the q, k scale;\nwith QK-norm it stays put, below the bound √d = %.2f (d = %d)", bound, head_dim)
set logscale xy
set format x '10^{%L}'
set format y '10^{%L}'
set xlabel 'scale of q and k (both multiplied by it; dimensionless)'
set ylabel 'largest |q·k| / √d over the head (dimensionless)'
set key top left box opaque
set grid xtics ytics lc rgb '#dddddd'
set mxtics 10
plot 'step3_logit_growth.tsv' using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#c03030' title 'without QK-norm', \
     '' using 1:3 with linespoints pt 5 ps 0.6 lw 2 lc rgb '#2060b0' title 'with QK-norm (gains at 1)', \
     bound with lines dt 2 lw 2 lc rgb '#333333' title 'bound √d'
