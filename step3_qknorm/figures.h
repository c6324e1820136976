// figures.h: step 3's two pictures, drawn from the numbers main.c computes
// (common/io/figure.h writes NAME.tsv, NAME.gp and NAME.png into dir).
//
// Each returns 0 when the PNG is drawn, FIGURE_NO_GNUPLOT when gnuplot is
// missing (the .tsv is written all the same), or -1 with a message in err.
#pragma once
#include <stddef.h>

// The largest |logit| of one head's q, k scaled by each of n factors, without
// and with QK-norm, and the bound √d that QK-norm guarantees.
#define LOGIT_GROWTH_MAX 64
typedef struct {
    int n, head_dim;
    double scale[LOGIT_GROWTH_MAX];
    double raw[LOGIT_GROWTH_MAX];      // max |q·k|/√d without QK-norm
    double normed[LOGIT_GROWTH_MAX];   // the same after QK-norm (gains at 1)
    int marks[3];                      // scales marked on the plot (the attention maps')
} LogitGrowth;

// step3_logit_growth: both curves on log-log axes, the bound as a line.
int figure_logit_growth(const char *dir, const LogitGrowth *g, char *err, size_t errlen);

// One head's softmax attention (L, L) at three growth factors, without
// ([0][i]) and with ([1][i]) QK-norm, with the mean over queries of the
// largest weight of each map.
typedef struct {
    int L;
    int growth[3];
    float *weights[2][3];         // (L, L): row = query, column = key
    double top[2][3];
} AttentionMaps;

// step3_attention_maps: the six maps as heat maps, 2 rows by 3, one colour
// scale from 0 to the largest weight in any of them.
int figure_attention_maps(const char *dir, const AttentionMaps *m, char *err, size_t errlen);
