// figures.h: step 2's two pictures, drawn from the numbers main.c computes
// (common/io/figure.h writes NAME.tsv, NAME.gp and NAME.png into dir).
//
// Each returns 0 when the PNG is drawn, FIGURE_NO_GNUPLOT when gnuplot is
// missing (the .tsv is written all the same), or -1 with a message in err.
#pragma once
#include <stddef.h>

// step2_norm_outputs: the outputs of LayerNorm and RMSNorm for the same
// tokens, y_ln and y_rms (n values each), as two histograms on one plot with
// each norm's mean marked.
int figure_norm_outputs(const char *dir, const float *y_ln, const float *y_rms, size_t n,
                        char *err, size_t errlen);

// What was timed, and the medians: ms = { LayerNorm forward, RMSNorm forward,
// LayerNorm backward, RMSNorm backward }, milliseconds per call.
typedef struct {
    int R, D;            // the tokens: (R, D)
    int threads, rounds;
    double ms[4];
} NormTimings;

// step2_norm_times: the four times as bars, forward and backward side by side.
int figure_norm_times(const char *dir, const NormTimings *t, char *err, size_t errlen);

// Both pictures, from this run's numbers (the outputs of section 1, the
// times of section 3), and the line that says where they are. 0, or 1 after
// a message on stderr.
int step2_draw_figures(const char *dir, const float *y_ln, const float *y_rms, size_t n, const NormTimings *tm);
