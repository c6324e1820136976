# step7_progress: how a class-conditional model learns to follow its labels
# as it trains (step7_progress.tsv: images seen, then class accuracy at each
# swept w, from `step7_guidance sweep` of the run's kept checkpoints). From
# the script: ws, the swept w as words.
set datafile separator '\t'
set termoption noenhanced
set grid lc rgb '#dddddd'
set title 'Class accuracy of the samples as training goes on (EMA weights, 500 samples a point)'
set xlabel 'training images seen'
set ylabel 'class accuracy'
set format x '%.0s%c'
set yrange [0:1]
set key top left
plot for [i = 1:words(ws)] 'step7_progress.tsv' using 1:(column(i + 1)) with linespoints lw 2 pt 7 \
     title sprintf('w = %s', word(ws, i)), 0.5 dt 3 lc rgb '#777777' title 'goal 0.5', \
     0.1 dt 2 lc rgb '#999999' title 'chance (1 in 10)'
