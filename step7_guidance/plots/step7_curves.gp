# step7_curves: what guidance buys and costs, from `step7_guidance sweep`
# of each checkpoint (step7_curves.tsv: a block per configuration, each
# line w, then probe-FD and class accuracy as mean, lowest seed, highest
# seed). From the program: n_configs, names (the configurations) and
# seeds (how many each), as words.
set datafile separator '\t'
set multiplot layout 1,2 title 'Guidance swept from the checkpoints: the mean over seeds, bars from the lowest seed to the highest' font ',11'
set grid lc rgb '#dddddd'
set xlabel 'guidance scale w (0: the unconditional model, 1: the conditional one)'
set key top right font ',9' box opaque
set offsets 0.2, 0.2, 0, 0
set termoption noenhanced
name(i) = sprintf('%s (%s seed%s)', word(names, i), word(seeds, i), word(seeds, i) eq '1' ? '' : 's')
set title 'probe-FD of the samples (lower: closer to the test images)'
set ylabel 'probe-FD'
plot for [c = 0:n_configs - 1] 'step7_curves.tsv' index c using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 0.7 \
     title name(c + 1)
set title 'class accuracy (the share the probe puts in the class asked for)'
set ylabel 'class accuracy'
set yrange [0:*]
set key top left
plot for [c = 0:n_configs - 1] 'step7_curves.tsv' index c using 1:5:6:7 with yerrorlines lw 2 pt 7 ps 0.7 \
     title name(c + 1), 0.1 dt 2 lc rgb '#999999' title 'chance (1 in 10)'
unset multiplot
