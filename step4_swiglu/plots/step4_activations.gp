# step4_activations: GELU and SiLU (SwiGLU's gate) and their slopes, as the
# model's own functions give them (step4_activations.tsv: x, GELU, SiLU, and
# their slopes). From the program: where each curve dips lowest, and how low.
set datafile separator '\t'
set multiplot layout 1,2 title 'GELU and SiLU, the gate of SwiGLU: smooth switches, open for large x, shut for very negative x' font ',11'
set grid lc rgb '#dddddd'
set key top left box opaque
set xlabel 'input x (for SiLU: the gate g = W1 x)'
set xrange [-5:5]
set title 'the curves (gelu\_forward, swiglu\_forward with value 1)'
set ylabel 'output'
set yrange [-1:5]
set label 1 sprintf('GELU min %.3f at x = %.2f', gelu_min, gelu_min_x) at graph 0.03, graph 0.62 tc rgb '#1f77b4'
set label 2 sprintf('SiLU min %.3f at x = %.2f', silu_min, silu_min_x) at graph 0.03, graph 0.55 tc rgb '#d62728'
set label 3 '' at gelu_min_x, gelu_min point pt 7 ps 1 lc rgb '#1f77b4'
set label 4 '' at silu_min_x, silu_min point pt 7 ps 1 lc rgb '#d62728'
plot x lc rgb '#999999' dt 2 title 'x (fully open)', \
     'step4_activations.tsv' using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'GELU(x) = x Φ(x)', \
     '' using 1:3 with lines lw 2 lc rgb '#d62728' title 'SiLU(x) = x σ(x)'
unset label
set title 'their slopes (gelu\_backward, swiglu\_backward)'
set ylabel 'd output / d x'
set yrange [-0.2:1.2]
plot 1 lc rgb '#999999' dt 2 title 'slope 1', \
     'step4_activations.tsv' using 1:4 with lines lw 2 lc rgb '#1f77b4' title "GELU'(x)", \
     '' using 1:5 with lines lw 2 lc rgb '#d62728' title "SiLU'(x)"
unset multiplot
