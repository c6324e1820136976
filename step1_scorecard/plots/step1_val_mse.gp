# step1_val_mse: every seed's val MSE, with the band of one spread around the
# mean of all seeds and the tutorial's yardstick, the first pair's seed gap
# around their mean (step1_val_mse.tsv: seed, val MSE, run). From the program:
# n seeds, their mean and spread, the first pair's mean and gap, the y range.
set title sprintf("What noise looks like: the baseline's val MSE at %d seeds\n{/*0.85 the same recipe, only the seed changes; a change to the model must move val MSE by more than this}", n)
set xlabel 'seed'
set ylabel 'val MSE (lower is better)'
set xrange [-0.7:n - 1 + 0.7]
set yrange [y_lo:y_hi]
set xtics 1
set grid ytics
set format y '%.4f'
set encoding utf8
set key below
plot mean + sd + 0*x with filledcurves y1=mean - sd fc rgb '#bcd7ee' fs solid 0.6 \
         title sprintf('mean ± 1 spread over the %d seeds: %.4f ± %.4f', n, mean, sd), \
     pair_mean + gap + 0*x with filledcurves y1=pair_mean - gap fc rgb '#d9822b' fs transparent pattern 4 border lc rgb '#d9822b' \
         title sprintf("the tutorial's yardstick: mean of seeds 0, 1 ± their seed gap (%.4f)", gap), \
     mean with lines lc rgb '#1f4e79' lw 2 title 'mean of all seeds', \
     'step1_val_mse.tsv' using 1:2 with points pt 7 ps 1.6 lc rgb '#000000' title 'one run', \
     '' using 1:2:(sprintf('%.4f', $2)) with labels offset 0,1.1 notitle
