# step5_scores: q.k after RoPE at every offset from q to k on the grid, with q
# at three slots and over every pair of slots (step5_scores.tsv: four blocks of
# row offset, column offset, score). From the program: the grid G, head_dim,
# seed and base of the run, the range of the scores [smin, smax], the three
# q slots (q_row, q_col), and the largest spread within one offset.
set datafile separator '\t'
set multiplot layout 2,2 title sprintf("RoPE: q.k depends only on the offset from q to k, so the same cell has the same colour wherever q sits\n(one random q and k, head\\_dim %d, seed %d, base %g; the box is 1 down, 2 right)", head_dim, seed, base) font ',11'
set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')
set cbrange [smin:smax]
set cblabel 'score q.k'
# rows grow downwards, as on the image
set xrange [-(G - 0.5):G - 0.5]
set yrange [G - 0.5:-(G - 0.5)]
set xtics 2
set ytics 2
set size ratio -1
set xlabel 'column offset (k right of q)'
set ylabel 'row offset (k below q)'
set object 1 rect from 1.5,0.5 to 2.5,1.5 front fillstyle empty border lc rgb 'red' lw 2
set label 1 'q' at 0,0 center front font ',10' tc rgb 'white'
do for [p = 1:3] {
    set title sprintf('q at (%d,%d), k at each of the %d slots', q_row[p], q_col[p], G * G)
    plot 'step5_scores.tsv' index p - 1 using 2:1:3 with image notitle
}
set title sprintf("all %d x %d pairs of slots, by offset: the mean\n(the scores at one offset differ by at most %.1e)", G * G, G * G, spread)
plot 'step5_scores.tsv' index 3 using 2:1:3 with image notitle
unset multiplot
