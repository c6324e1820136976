# step8_orders: Euler against Heun on a flow whose answer is known
# (step8_orders.tsv: model evaluations, then each sampler's largest error).
# On log-log axes a method of order p is a line of slope -p.
set datafile separator '\t'
set grid lc rgb '#dddddd'
set logscale xy 2
set format y '10^{%L}'
set logscale y 10
set title 'From N(0, 1) to N(0.5, 1.5^2): the error at t = 1 against the model evaluations'
set xlabel 'model evaluations (NFE)'
set ylabel 'largest |x(1) - exact|'
set key top right
plot 'step8_orders.tsv' using 1:2 with linespoints lw 2 pt 7 lc rgb '#4477aa' title 'Euler (one a step)', \
     '' using 1:3 with linespoints lw 2 pt 5 lc rgb '#ee6677' title 'Heun (two a step)', \
     '' using 1:($2 > 0 ? 0.5 * 8 / $1 : 1/0) with lines dt 2 lc rgb '#777777' title 'slope 1', \
     '' using 1:(0.5 * 64 / ($1 * $1)) with lines dt 3 lc rgb '#777777' title 'slope 2'
