set terminal pngcairo size 900,450 enhanced font 'DejaVu Sans,10'
set output 'step5_angles.png'
set datafile separator '\t'
set multiplot layout 1,2 title 'The angle of each row pair at each row of the grid: a pair that stays under 10° can barely tell rows apart' font ',11'
set logscale y
set yrange [0.01:1000]
set xrange [0.8:7.2]
set xtics 1
set format y '%g'
set grid lc rgb '#dddddd'
set xlabel 'row of the token (steps from row 0, where every angle is 0)'
set ylabel 'angle of the pair (degrees, log scale)'
set key bottom right font ',9' maxrows 3 box opaque
set palette defined (0 '#440154', 0.5 '#21918c', 1 '#fde725')
unset colorbox
set title 'base 100: 1 of 8 pairs turn less than 10° by row 7'
plot 10 lc rgb '#999999' dt 2 lw 2 title '10°', \
     'step5_angles.tsv' index 0 every ::1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0 title 'pair 0', \
     'step5_angles.tsv' index 0 every ::1 using 1:3 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.142857 title 'pair 1', \
     'step5_angles.tsv' index 0 every ::1 using 1:4 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.285714 title 'pair 2', \
     'step5_angles.tsv' index 0 every ::1 using 1:5 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.428571 title 'pair 3', \
     'step5_angles.tsv' index 0 every ::1 using 1:6 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.571429 title 'pair 4', \
     'step5_angles.tsv' index 0 every ::1 using 1:7 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.714286 title 'pair 5', \
     'step5_angles.tsv' index 0 every ::1 using 1:8 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.857143 title 'pair 6', \
     'step5_angles.tsv' index 0 every ::1 using 1:9 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 1 title 'pair 7'
unset key
set title 'base 10,000: 4 of 8 pairs turn less than 10° by row 7'
plot 10 lc rgb '#999999' dt 2 lw 2 title '10°', \
     'step5_angles.tsv' index 1 every ::1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0 notitle, \
     'step5_angles.tsv' index 1 every ::1 using 1:3 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.142857 notitle, \
     'step5_angles.tsv' index 1 every ::1 using 1:4 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.285714 notitle, \
     'step5_angles.tsv' index 1 every ::1 using 1:5 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.428571 notitle, \
     'step5_angles.tsv' index 1 every ::1 using 1:6 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.571429 notitle, \
     'step5_angles.tsv' index 1 every ::1 using 1:7 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.714286 notitle, \
     'step5_angles.tsv' index 1 every ::1 using 1:8 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 0.857143 notitle, \
     'step5_angles.tsv' index 1 every ::1 using 1:9 with linespoints pt 7 ps 0.6 lw 2 lc palette frac 1 notitle
unset key
unset multiplot

unset output
