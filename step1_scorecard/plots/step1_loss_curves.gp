# step1_loss_curves: the training loss of every seed of the baseline, the
# whole run and its second half up close (step1_loss_curves.tsv: one block a
# seed of step, loss, trailing mean). From the program: the number of blocks
# n, each block's seed and colour, the trailing window, and the half step.
set multiplot layout 1,2 title sprintf("The baseline trained %d times, changing only the seed: training loss\n{/*0.85 thin: every step; thick: mean of the last %d steps}", n, window)
set xlabel 'training step'
set ylabel 'flow-matching loss (MSE)'
set grid
set key top right
# the whole run: every step thin, the trailing mean thick
set title 'the whole run'
set format y '%.2f'
curves = ''
do for [b = 0:n - 1] {
    curves = curves . sprintf("%s'step1_loss_curves.tsv' index %d using 1:2 with lines lc rgb '%s' lw 0.6 notitle, '' index %d using 1:3 with lines lc rgb '%s' lw 2.2 title 'seed %d'", \
                              b ? ", " : "", b, colour[b + 1], b, colour[b + 1], seed[b + 1])
}
eval 'plot ' . curves
# up close, where single steps would swamp the differences: the trailing
# means only, where the seeds differ by the size of what later steps measure
set title 'the second half, up close: the trailing means'
set xrange [half:*]
set format y '%.3f'
stats 'step1_loss_curves.tsv' using (($1 >= half) ? $3 : NaN) nooutput
set yrange [STATS_min - 0.15*(STATS_max - STATS_min) : STATS_max + 0.15*(STATS_max - STATS_min)]
plot for [b = 0:n - 1] 'step1_loss_curves.tsv' index b using 1:3 with lines lc rgb colour[b + 1] lw 2.2 title sprintf('seed %d', seed[b + 1])
unset multiplot
