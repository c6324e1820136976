# step5_angles: the angle of each row pair at each row of the grid, base 100
# against base 10,000 (step5_angles.tsv: two blocks, the row then each pair's
# angle in degrees). From the program: the grid G, the pairs per axis Q, the
# two bases as text, and how many pairs of each turn less than 10 degrees.
set datafile separator '\t'
set multiplot layout 1,2 title 'The angle of each row pair at each row of the grid: a pair that stays under 10° can barely tell rows apart' font ',11'
set logscale y
set yrange [0.01:1000]
set xrange [0.8:G - 1 + 0.2]
set xtics 1
set format y '%g'
set grid lc rgb '#dddddd'
set xlabel 'row of the token (steps from row 0, where every angle is 0)'
set ylabel 'angle of the pair (degrees, log scale)'
set key bottom right font ',9' maxrows 3 box opaque
set palette defined (0 '#440154', 0.5 '#21918c', 1 '#fde725')
unset colorbox
do for [b = 0:1] {
    # the legend names the pairs once, on the left
    set title sprintf('base %s: %d of %d pairs turn less than 10° by row %d', base_text[b + 1], slow[b + 1], Q, G - 1)
    plot 10 lc rgb '#999999' dt 2 lw 2 title '10°', \
         for [i = 0:Q - 1] 'step5_angles.tsv' index b every ::1 using 1:(column(i + 2)) with linespoints pt 7 ps 0.6 lw 2 \
             lc palette frac (Q > 1 ? i / (Q - 1.0) : 0) title (b == 0 ? sprintf('pair %d', i) : '')
    unset key
}
unset multiplot
