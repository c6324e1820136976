// tables.c: the measurements and tables behind step 5's sections
// (tables.h), with the model's own rope2d_tables and rope_forward.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tables.h"
#include "io/bench.h"
#include "nn/layers.h"
#include "nn/model.h"
#include "rope_probe.h"

// A rotation keeps lengths: q turned to every one of the 64 slots.
void rotation_keeps_lengths(const Step5 *s) {
    const int L = s->L, hd = s->hd;
    float *qs = calloc((size_t)L * hd, sizeof(float)), *qs_rot = malloc(sizeof(float) * L * hd);
    if (!qs || !qs_rot) { fprintf(stderr, "out of memory\n"); exit(1); }
    for (int l = 0; l < L; l++) memcpy(qs + (size_t)l * hd, s->q, sizeof(float) * hd);
    rope_forward(qs_rot, qs, s->cos_t, s->sin_t, 1, L, hd);            // (1, L, hd)
    double len_q = rope_norm2(s->q, hd), len_err = 0.0;
    for (int l = 0; l < L; l++) len_err = fmax(len_err, fabs(rope_norm2(qs_rot + (size_t)l * hd, hd) - len_q) / len_q);
    printf("   rotation keeps lengths: |q| = %.4f, and q turned to each of the %d slots is within %.1e of it (relative)\n\n",
           len_q, L, len_err);
    free(qs); free(qs_rot);
}

// The turn of each row pair across the grid, in degrees, for both bases;
// counts in slow[b] the pairs that turn less than 10 degrees.
void turn_table(const Step5 *s, const float *bases, double turn[][64], int *slow) {
    Table t;
    char hdr[NBASES][TABLE_CELL];
    for (int b = 0; b < NBASES; b++) snprintf(hdr[b], sizeof hdr[b], "base %g", bases[b]);
    table_init(&t, 3, "pair i", hdr[0], hdr[1]);
    for (int i = 0; i < s->quarter; i++) {
        table_cell(&t, "%d", i);
        for (int b = 0; b < NBASES; b++) {
            double deg = turn[b][i] * 180.0 / M_PI;
            table_cell(&t, "%.2f", deg);
            if (deg < 10.0) slow[b]++;
        }
    }
    table_print(&t);
}

PrefixCheck prefix_check(const Step5 *s, int n_prefix) {
    const int L = s->L, hd = s->hd, tok = s->tok_row * s->grid + s->tok_col, Lp = n_prefix + L;
    float *cos_p = malloc(sizeof(float) * Lp * hd), *sin_p = malloc(sizeof(float) * Lp * hd);
    rope2d_tables(cos_p, sin_p, s->grid, hd, s->base, n_prefix);
    double cos_off = 0.0, sin_off = 0.0, grid_diff = 0.0;
    for (int j = 0; j < n_prefix * hd; j++) {
        cos_off = fmax(cos_off, fabs(cos_p[j] - 1.0));
        sin_off = fmax(sin_off, fabs(sin_p[j]));
    }
    for (int j = 0; j < L * hd; j++)
        grid_diff = fmax(grid_diff, fmax(fabs(cos_p[n_prefix * hd + j] - s->cos_t[j]),
                                         fabs(sin_p[n_prefix * hd + j] - s->sin_t[j])));
    // q as the prefix token and at every grid slot after it
    float *xp = malloc(sizeof(float) * Lp * hd), *xp_rot = malloc(sizeof(float) * Lp * hd);
    for (int l = 0; l < Lp; l++) memcpy(xp + (size_t)l * hd, s->q, sizeof(float) * hd);
    rope_forward(xp_rot, xp, cos_p, sin_p, 1, Lp, hd);
    double prefix_moved = 0.0, slot_moved = 0.0;
    for (int j = 0; j < hd; j++) {
        prefix_moved = fmax(prefix_moved, fabs(xp_rot[j] - s->q[j]));
        slot_moved = fmax(slot_moved, fabs(xp_rot[(size_t)(n_prefix + tok) * hd + j] - s->q[j]));
    }
    free(cos_p); free(sin_p); free(xp); free(xp_rot);
    return (PrefixCheck){ cos_off, sin_off, prefix_moved, slot_moved, grid_diff };
}

// Section 5: the parameters with learned positions and with pos=rope2d.
void position_params_table(const ModelConfig *cfg, const ModelConfig *rope, const Model *learned) {
    const ParamTensor *pr = model_find(learned, "pos_row"), *pc = model_find(learned, "pos_col");
    Table t;
    table_init(&t, 3, "pos", "params", "position parameters");
    table_cell(&t, "learned"); table_cell(&t, "%zu", model_count_params(cfg));
    table_cell(&t, "pos_row (%d, %d) + pos_col (%d, %d)", pr->shape[0], pr->shape[1], pc->shape[0], pc->shape[1]);
    table_cell(&t, "rope2d");  table_cell(&t, "%zu", model_count_params(rope));
    table_cell(&t, "none (fixed angles)");
    table_print(&t);
}
