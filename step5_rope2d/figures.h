// figures.h: step 5's pictures, drawn from what this run computes
// (common/io/figure.h writes NAME.tsv, NAME.gp and NAME.png):
//   step5_scores  q·k after RoPE for every (row offset, column offset) of the
//                 8×8 grid, with q at three different slots and over all 64:
//                 the same offset gives the same score wherever q sits
//   step5_angles  the angle of each row pair at rows 0..7, base 100 against
//                 base 10,000, read back from rope2d_tables
#pragma once
#include <stddef.h>

// q and k (head_dim each) are the run's random vectors, drawn from seed.
// Writes both figures into dir. Returns 0 with the number of PNGs drawn in
// *drawn, FIGURE_NO_GNUPLOT when gnuplot is missing (the .tsv data is still
// written, *drawn is 0), or -1 with a message in err.
int step5_figures(const char *dir, const float *q, const float *k, int seed, int *drawn,
                  char *err, size_t errlen);
