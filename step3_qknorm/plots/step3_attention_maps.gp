# step3_attention_maps: one head's softmax attention as six heat maps, without
# QK-norm (top row) and with it (bottom row), at three growths of q and k
# (step3_attention_maps.tsv: six blocks of L rows by L weights).
# From the program: L, the growths growth[1..3], each map's mean top weight
# top[1..6], and the largest weight of all, top_all (the colour range).
set multiplot layout 2,3 title sprintf("One head's attention, %d queries by %d keys: as q and k grow, it turns one-hot\nwithout QK-norm (top row) and does not change with it (bottom row)", L, L) \
    margins 0.07, 0.86, 0.09, 0.85 spacing 0.02, 0.1
set size ratio -1
set xrange [-0.5:L - 0.5]
set yrange [L - 0.5:-0.5]
set tics out scale 0.5 nomirror
set xtics 0, 16
set ytics 0, 16
set cbrange [0:top_all]
set palette defined (0 '#ffffff', 0.04 '#deebf7', 0.12 '#9ecae1', 0.3 '#4292c6', 0.6 '#08519c', 1 '#08306b')
set colorbox user origin screen 0.89, screen 0.12 size screen 0.02, screen 0.68
set cblabel 'softmax weight of key j for query i'
do for [b = 0:5] {
    with = b >= 3
    g = b % 3
    set title sprintf("x%d %s QK-norm\nmean top weight %.2f", growth[g + 1], with ? "with" : "without", top[b + 1])
    if (b == 5) { set colorbox } else { unset colorbox }
    if (with) { set xlabel 'key j'; set format x '%g' } else { unset xlabel; set format x '' }
    if (g == 0) { set ylabel 'query i'; set format y '%g' } else { unset ylabel; set format y '' }
    plot 'step3_attention_maps.tsv' index b matrix with image notitle
}
unset multiplot
