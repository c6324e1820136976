# step8_nfe: a trained model's samples against the model evaluations of
# each sampler (step8_nfe.tsv: NFE, then probe-FD of Euler and of Heun,
# then the RMS distance from the same samples drawn with many small steps,
# of Euler and of Heun; each its mean, lowest and highest over checkpoints).
set datafile separator '\t'
set termoption noenhanced
set multiplot layout 1,2 title 'The same noise sampled at 2 to 64 model evaluations (mean over checkpoints, bars: lowest to highest)' font ',11'
set grid lc rgb '#dddddd'
set logscale x 2
set xlabel 'model evaluations (NFE)'
set key top right
set title 'distance from the answer of many small steps (Heun, 128 evaluations)'
set logscale y 10
set ylabel 'RMS distance (pixels in [-1, 1])'
plot 'step8_nfe.tsv' using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#4477aa' title 'Euler', \
     '' using 1:11:12:13 with yerrorlines lw 2 pt 5 lc rgb '#ee6677' title 'Heun'
set title 'probe-FD of 1,000 samples'
set ylabel 'probe-FD (log scale)'
plot 'step8_nfe.tsv' using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#4477aa' title 'Euler', \
     '' using 1:5:6:7 with yerrorlines lw 2 pt 5 lc rgb '#ee6677' title 'Heun'
unset multiplot
