# tinydit_gradient_sizes: the RMS of the loss's gradient over each part's
# weights, in the order the backward pass reaches them (left to right), at
# the initialisation and for the trained shipped model
# (tinydit_gradient_sizes.tsv: part, at step 0, trained).
set title "The gradient's size through the model, in the order the backward pass reaches each part:\nat step 0 (the initialisation) and after training (the shipped model), on the same images"
set logscale y
set format y '10^{%L}'
set ylabel 'RMS of the gradient over the part''s weights'
set xtics rotate by -40 nomirror
set ytics nomirror
set grid ytics lc rgb '#dddddd'
set key top right
set datafile separator '\t'
set bmargin 7
set rmargin 8
plot 'tinydit_gradient_sizes.tsv' using 0:2:xtic(1) with linespoints lw 2 pt 7 lc rgb '#2166ac' title 'at step 0', \
     '' using 0:3 with linespoints lw 2 pt 5 lc rgb '#b2182b' title 'trained'
