# step2_norm_outputs: the same tokens through LayerNorm and RMSNorm, as two
# histograms (step2_norm_outputs.tsv: bin centre, the two densities).
# From the program: m_ln, m_rms, each norm's mean output.
set title sprintf("The same shifted tokens through both norms: LayerNorm centres them on 0,\nRMSNorm keeps their mean (%.3f), scaled like the rest", m_rms)
set xlabel 'output value (dimensionless: each token divided by its std or its RMS)'
set ylabel 'density (fraction of outputs per unit)'
set key top right box opaque
set grid ytics lc rgb '#dddddd'
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set style fill transparent solid 0.35 noborder
set arrow 1 from m_ln, graph 0 to m_ln, graph 0.92 nohead lw 2 dt 2 lc rgb '#1f5fa0' front
set arrow 2 from m_rms, graph 0 to m_rms, graph 0.92 nohead lw 2 dt 2 lc rgb '#c05000' front
set label 1 sprintf('LayerNorm mean %.3f', m_ln) at m_ln, graph 0.95 right offset -0.5,0 tc rgb '#1f5fa0' front
set label 2 sprintf('RMSNorm mean %.3f', m_rms) at m_rms, graph 0.95 left offset 0.5,0 tc rgb '#c05000' front
plot 'step2_norm_outputs.tsv' using 1:2 with boxes lc rgb '#1f5fa0' notitle, \
     '' using 1:2 with histeps lw 2 lc rgb '#1f5fa0' title 'LayerNorm(x)', \
     '' using 1:3 with boxes lc rgb '#c05000' notitle, \
     '' using 1:3 with histeps lw 2 lc rgb '#c05000' title 'RMSNorm(x)'
