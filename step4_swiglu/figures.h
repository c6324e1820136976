// figures.h: step 4's pictures, drawn from what this run computes
// (common/io/figure.h writes NAME.tsv, NAME.gp and NAME.png):
//   step4_activations  GELU(x) and SiLU(x), SwiGLU's gate, and their slopes, as
//                      gelu_forward/backward and swiglu_forward/backward give them
//   step4_params       one FFN's parameters against its hidden width at D = 128,
//                      GELU and SwiGLU, counted from model_build's table, with
//                      512, 341 and the rounding up to a multiple of 64 marked
#pragma once
#include <stddef.h>

// Writes both figures into dir. Returns 0 with the number of PNGs drawn in
// *drawn, FIGURE_NO_GNUPLOT when gnuplot is missing (the .tsv data is still
// written, *drawn is 0), or -1 with a message in err.
int step4_figures(const char *dir, int *drawn, char *err, size_t errlen);
