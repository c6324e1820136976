set terminal pngcairo size 800,760 enhanced font 'DejaVu Sans,10'
set output 'step5_scores.png'
set datafile separator '\t'
set multiplot layout 2,2 title "RoPE: q.k depends only on the offset from q to k, so the same cell has the same colour wherever q sits\n(one random q and k, head\\_dim 32, seed 0, base 100; the box is 1 down, 2 right)" font ',11'
set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')
set cbrange [-14.5266:-0.644019]
set cblabel 'score q.k'
set xrange [-7.5:7.5]
set yrange [7.5:-7.5]
set xtics 2
set ytics 2
set size ratio -1
set xlabel 'column offset (k right of q)'
set ylabel 'row offset (k below q)'
set object 1 rect from 1.5,0.5 to 2.5,1.5 front fillstyle empty border lc rgb 'red' lw 2
set label 1 'q' at 0,0 center front font ',10' tc rgb 'white'
set title 'q at (0,0), k at each of the 64 slots'
plot 'step5_scores.tsv' index 0 using 2:1:3 with image notitle
set title 'q at (3,4), k at each of the 64 slots'
plot 'step5_scores.tsv' index 1 using 2:1:3 with image notitle
set title 'q at (6,5), k at each of the 64 slots'
plot 'step5_scores.tsv' index 2 using 2:1:3 with image notitle
set title "all 64 x 64 pairs of slots, by offset: the mean\n(the scores at one offset differ by at most 1.5e-06)"
plot 'step5_scores.tsv' index 3 using 2:1:3 with image notitle
unset multiplot

unset output
