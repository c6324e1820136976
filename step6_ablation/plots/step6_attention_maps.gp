# step6_attention_offsets and step6_attention_centre (step6_ablation attention-maps):
# each layer's mean attention of two trained models, learned positions (top
# row) and 2D RoPE (bottom row), one heat map a layer (the .tsv: one block a
# model and layer, the second model's after the first one's depth1 blocks).
# From the program: tsv (the data's name), offsets (1: by offset over every
# query; 0: the centre query's over the grid), g (the grid's side), depth1
# and depth2 (each model's layers), t, label1 and label2, and lo and hi (the
# colour range, in units of even attention).
depth = depth1 > depth2 ? depth1 : depth2
set multiplot layout 2,depth title sprintf("%s\n{/*0.85 %s}\n{/*0.85 mean over the images (noised to t = %.2f) and the heads; 1 = even attention (1/L); log colour scale}", \
    offsets ? "Where a patch looks, by offset" : "Where the centre patch looks", \
    offsets ? "every query's attention to the key dx columns right and dy rows down" : \
    sprintf("the query at row %d, column %d (from 0)", g / 2, g / 2), t)
set palette defined (0 '#000004', 1 '#3b0f70', 2 '#8c2981', 3 '#de4968', 4 '#fe9f6d', 5 '#fcfdbf')
set logscale cb
set cbrange [lo:hi]
set size ratio -1
set tics out nomirror scale 0.5
set xlabel (offsets ? 'dx (columns)' : 'key column')
set ylabel (offsets ? 'dy (rows)' : 'key row')
# offsets run from -(g - 1) to g - 1, grid positions from 0 to g - 1; the
# rows go down the page, as in the image
from = offsets ? -(g - 0.5) : -0.5
set xrange [from:g - 0.5]
set yrange [g - 0.5:from]
# colour-bar labels at round numbers inside the range: fine steps when the
# range is under a decade (a log axis would show only one label), 1-2-5
# steps when it spans several (fine ones would overlap)
array fine[13] = [0.5, 0.7, 0.8, 0.9, 1, 1.1, 1.2, 1.5, 2, 3, 5, 7, 10]
array coarse[13] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]
set cbtics ('1' 1)
tics = 0
do for [i = 1:13] {
    v = hi < 10 * lo ? fine[i] : coarse[i]
    if (v >= lo && v <= hi) {
        if (tics == 0) { set cbtics (sprintf('%g', v) v) } else { set cbtics add (sprintf('%g', v) v) }
        tics = tics + 1
    }
}
do for [k = 0:1] {
    do for [l = 1:depth] {
        if (l > (k ? depth2 : depth1)) { set multiplot next } else {
            set title sprintf('%s, layer %d', k ? label2 : label1, l) noenhanced
            plot tsv.'.tsv' index (k * depth1 + l - 1) using 1:2:3 with image notitle
        }
    }
}
unset multiplot
