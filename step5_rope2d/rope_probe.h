// rope_probe.h: reading step 5's RoPE tables back, and scoring rotated
// vectors, with the model's own rope_forward (common/nn/attention.c). Shared by
// main.c and figures.c.
#pragma once

// The angle of pair i at table row tok, read back from the tables. Both
// features of a pair share one angle, so feature 2i is enough. atan2 gives it
// in (-pi, pi]: only angles below pi can be read this way.
double table_angle(const float *cos_t, const float *sin_t, int hd, int tok, int i);

// q·k after q is turned to grid slot (rq, cq) and k to slot (rk, ck).
double rope_score(const float *q, const float *k, const float *cos_t, const float *sin_t,
                  int grid, int hd, int rq, int cq, int rk, int ck);

// The length of x (n values).
double rope_norm2(const float *x, int n);
