# step8_times: where training draws its times, uniform against logit-normal
# (step8_times.tsv: bin centre, then the density of 100,000 uniform draws,
# of 100,000 logit-normal ones, and the logit-normal's exact density).
set datafile separator '\t'
set termoption noenhanced
set grid lc rgb '#dddddd'
set title 'Training times: uniform against logit-normal, t = sigmoid(u), u ~ N(0, 1)'
set xlabel 'time t (0: noise, 1: the image)'
set ylabel 'density'
set xrange [0:1]
set yrange [0:*]
set style fill transparent solid 0.35
set object 1 rect from 0.3, graph 0 to 0.7, graph 1 fc rgb '#f2f2f2' behind
plot 'step8_times.tsv' using 1:2 with boxes lc rgb '#4477aa' title 'uniform (draws)', \
     '' using 1:3 with boxes lc rgb '#ee6677' title 'logit-normal (draws)', \
     '' using 1:4 with lines lw 2 lc rgb '#aa3344' title 'logit-normal, exact'
