# step4_params: one FFN's parameters against its hidden width H, GELU and
# SwiGLU (step4_params.tsv: block 0 the two lines over H; block 1 the three
# widths the configs give, with two lines of text each). From the program:
# D, the range of H, GELU's count at 4·D, and SwiGLU's difference to it in %.
set datafile separator '\t'
set title sprintf("One FFN's parameters at D = %d: SwiGLU's 3 matrices at 2/3 of GELU's width cost the same (%+.2f%%)", D, swiglu_vs_gelu)
set xlabel 'hidden width H (features; tics every 64)'
set ylabel 'parameters of one FFN (thousands)'
set xrange [H_lo:H_hi]
set xtics 64
set grid lc rgb '#dddddd'
set key bottom right box opaque
# each mark's two lines of text, placed where no line runs: GELU's below
# right, SwiGLU's above left (the rounded one higher, clear of 341's)
plot 'step4_params.tsv' index 0 using 1:($2/1000) with lines lw 2 lc rgb '#1f77b4' title 'GELU FFN: 2 matrices (H, D), (D, H)', \
     '' index 0 using 1:($3/1000) with lines lw 2 lc rgb '#d62728' title 'SwiGLU: 3 matrices', \
     gelu_params/1000.0 lc rgb '#1f77b4' dt 2 title "GELU's count at 4·D", \
     '' index 1 using 1:($2/1000) with points pt 7 ps 1.5 lc rgb 'black' notitle, \
     '' index 1 every ::0::0 using 1:($2/1000):3 with labels left offset 1,-1.2 font ',9' notitle, \
     '' index 1 every ::0::0 using 1:($2/1000):4 with labels left offset 1,-2.3 font ',9' notitle, \
     '' index 1 every ::1::1 using 1:($2/1000):3 with labels right offset -1,2.3 font ',9' notitle, \
     '' index 1 every ::1::1 using 1:($2/1000):4 with labels right offset -1,1.2 font ',9' notitle, \
     '' index 1 every ::2::2 using 1:($2/1000):3 with labels right offset -1,3.6 font ',9' notitle, \
     '' index 1 every ::2::2 using 1:($2/1000):4 with labels right offset -1,2.5 font ',9' notitle
