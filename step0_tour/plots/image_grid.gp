# A grid of image panels (tinydit_flow_path, tinydit_euler_walk,
# tinydit_samples): the data file holds every pixel of the canvas as
# x, y, red, green, blue, drawn with rgbimage. From the program: the figure's
# name and heading, the canvas's width W and height H in pixels, and the
# labels of the columns and rows as gnuplot tic lists (rows: '' for none).
set title heading font ',12'
set termoption noenhanced
# rows grow downwards, as on an image
set xrange [-0.5:W - 0.5]
set yrange [H - 0.5:-0.5]
set size ratio -1
unset border
unset key
set tics scale 0 font ',11'
eval 'set xtics ' . column_labels . ' nomirror'
unset x2tics
unset y2tics
if (strlen(row_labels) > 0) { eval 'set ytics nomirror ' . row_labels } else { unset ytics }
eval sprintf("plot '%s.tsv' using 1:2:3:4:5 with rgbimage", name)
