# step8_nfe: a trained model's probe-FD against the model evaluations of
# each sampler (step8_nfe.tsv: NFE, then Euler's mean, lowest and highest
# over the checkpoints, then Heun's).
set datafile separator '\t'
set grid lc rgb '#dddddd'
set logscale x 2
set title 'probe-FD of 1,000 samples against model evaluations (mean, bars: lowest to highest checkpoint)'
set xlabel 'model evaluations (NFE)'
set ylabel 'probe-FD (lower: closer to the test images)'
set key top right
plot 'step8_nfe.tsv' using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#4477aa' title 'Euler', \
     '' using 1:5:6:7 with yerrorlines lw 2 pt 5 lc rgb '#ee6677' title 'Heun'
