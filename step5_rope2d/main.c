// step5_rope2d: positions as rotations (tutorial Step 5/6).
//
// The baseline TinyDiT tells attention where a patch is by adding a learned
// row vector and a learned column vector to its token. 2D RoPE removes both
// tables. Instead, right before the scores, every query and every key is
// turned by angles that depend on its token's row and column. A rotation by
// angle a followed by the inverse of a rotation by angle b is a rotation by
// a - b, so q·k can only see how far apart two tokens are, never where they
// sit. Nothing is learned: the angles are fixed numbers.
//
// This program runs the two functions the model itself calls inside
// attention (common/nn/attention.c):
//   rope2d_tables  cos and sin of every (token, feature) angle, built once
//   rope_forward   x·cos + rot(x)·sin with rot(x) = (-x₁, x₀) for every pair
// and main() prints one section per function below: the tables, same
// offset same score, why base 100, prefix tokens, and the switch in the
// model. What the sections share, and their longer tables, are in step5.h.
// Its tests (test_rope2d.c) check the same claims, plus the backward pass.
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval/parity.h"
#include "io/args.h"
#include "io/paths.h"
#include "io/bench.h"
#include "io/config_parse.h"
#include "io/figure.h"
#include "nn/layers.h"
#include "nn/model.h"
#include "nn/rng.h"
#include "figures.h"
#include "rope_probe.h"
#include "step5.h"
#include "tables.h"

// ----------------------------------------------------------------------
// 1. The tables: one angle for every (token, feature)
static void the_tables(const Step5 *s) {
    const int grid = s->grid, L = s->L, hd = s->hd, quarter = s->quarter;
    const float *cos_t = s->cos_t, *sin_t = s->sin_t;
    printf("1. The tables: one angle for every (token, feature)\n");
    double unit_err = 0.0;   // each (cos, sin) pair must sit on the unit circle
    for (int j = 0; j < L * hd; j++)
        unit_err = fmax(unit_err, fabs((double)cos_t[j] * cos_t[j] + (double)sin_t[j] * sin_t[j] - 1.0));
    printf("   rope2d_tables(grid %d, head_dim %d, base %g, n_prefix 0): cos and sin, shape (%d, %d) each\n",
           grid, hd, s->base, L, hd);
    printf("   (%d tokens x %d features; both features of a pair share an angle; cos^2 + sin^2 = 1 to %.1e)\n\n",
           L, hd, unit_err);
    // The speed of pair i is its angle one step from the origin: at token
    // (1, 0) for a row pair, at token (0, 1) for a column pair.
    int tr = s->tok_row, tc = s->tok_col, tok = tr * grid + tc;
    printf("   token (row %d, col %d) is row %d of the tables; pairs 0-%d follow the row, %d-%d the column:\n\n",
           tr, tc, tok, quarter - 1, quarter, 2 * quarter - 1);
    Table t;
    char col_hdr[TABLE_CELL];
    snprintf(col_hdr, sizeof col_hdr, "angle of col pair %d+i", quarter);
    table_init(&t, 4, "pair i", "speed (rad/step)", "angle of row pair i", col_hdr);
    for (int i = 0; i < quarter; i++) {
        table_cell(&t, "%d", i);
        table_cell(&t, "%.6f", table_angle(cos_t, sin_t, hd, 1 * grid + 0, i));
        table_cell(&t, "%.6f", table_angle(cos_t, sin_t, hd, tok, i));
        table_cell(&t, "%.6f", table_angle(cos_t, sin_t, hd, tok, quarter + i));
    }
    table_print(&t);
    printf("\n   (row pairs turn %d x speed, column pairs %d x speed: one table row, two positions)\n\n", tr, tc);
}

// ----------------------------------------------------------------------
// 2. Same offset, same score

static void same_offset_same_score(const Step5 *s) {
    printf("2. Same offset, same score\n");
    printf("   one random q and one random k (head_dim %d, seed %d), turned to different grid slots:\n\n",
           s->hd, s->seed);
    // Three pairs with k one row down and two columns right of q, at
    // different places on the grid, then one with another offset.
    const int pairs[4][4] = { {0, 0, 1, 2}, {3, 4, 4, 6}, {6, 5, 7, 7}, {0, 0, 3, 0} };
    double score[4];
    Table t;
    table_init(&t, 4, "q at", "k at", "offset", "score q.k");
    for (int p = 0; p < 4; p++) {
        const int *c = pairs[p];
        score[p] = rope_score(s->q, s->k, s->cos_t, s->sin_t, s->grid, s->hd, c[0], c[1], c[2], c[3]);
        table_cell(&t, "(%d,%d)", c[0], c[1]);
        table_cell(&t, "(%d,%d)", c[2], c[3]);
        table_cell(&t, "%d down, %d right", c[2] - c[0], c[3] - c[1]);
        table_cell(&t, "%+.4f", score[p]);
    }
    table_print(&t);
    double spread = fmax(fmax(score[0], score[1]), score[2]) - fmin(fmin(score[0], score[1]), score[2]);
    printf("\n   (the three \"1 down, 2 right\" scores differ by at most %.1e; the other offset is %.4f away)\n",
           spread, fabs(score[3] - score[0]));
    rotation_keeps_lengths(s);
}

// ----------------------------------------------------------------------
// 3. Why base 100 and not 10,000. Pair i turns base^(-i/quarter) radians per
//    step: pair 0 one radian, the last pair slowest. On a grid of 8,
//    positions are 0..7, so the largest offset attention can see is 7 steps.
static void why_base_100(const Step5 *s) {
    const int grid = s->grid, L = s->L, hd = s->hd, quarter = s->quarter;
    printf("3. Why base %g and not 10,000\n", s->base);
    const float bases[NBASES] = { s->base, 10000.0f };
    float *cos_b = malloc(sizeof(float) * L * hd), *sin_b = malloc(sizeof(float) * L * hd);
    double turn[NBASES][64], slow_direct[NBASES];
    for (int b = 0; b < NBASES; b++) {
        rope2d_tables(cos_b, sin_b, grid, hd, bases[b], 0);
        for (int i = 0; i < quarter; i++)   // speed read at row 1, times 7 steps
            turn[b][i] = (grid - 1) * table_angle(cos_b, sin_b, hd, 1 * grid, i);
        // The slowest pair turns less than pi across the grid, so its angle
        // at row 7 can be read straight from the table.
        slow_direct[b] = table_angle(cos_b, sin_b, hd, (grid - 1) * grid, quarter - 1);
    }
    free(cos_b); free(sin_b);
    printf("   how far each row pair turns from row 0 to row %d (%d steps), in degrees:\n\n", grid - 1, grid - 1);
    int slow[NBASES] = {0, 0};   // pairs that turn less than 10 degrees across the whole grid
    turn_table(s, bases, turn, slow);
    printf("\n   The slowest pair (i = %d), from row 0 to row %d, read from the tables:\n", quarter - 1, grid - 1);
    for (int b = 0; b < NBASES; b++)
        printf("     base %-6g turns %.4f rad = %6.3f deg\n", bases[b], slow_direct[b], slow_direct[b] * 180.0 / M_PI);
    printf("   Pairs of an axis that turn less than 10 deg across the grid: %d of %d with base %g,\n"
           "   %d of %d with base %g. Such a pair has cos ~ 1 and sin ~ 0 at every slot: it can\n"
           "   barely tell two positions apart, and its features act as if RoPE were off.\n"
           "   The usual 10,000 was chosen for thousands of text positions; 8 need a smaller base.\n\n",
           slow[0], quarter, bases[0], slow[1], quarter, bases[1]);
}

// ----------------------------------------------------------------------
// 4. Prefix tokens: angle 0, no rotation. Tokens that are not patches (a
//    class token, or text tokens in a two-stream model) have no row or
//    column. n_prefix puts them first in the tables, with angle 0; the
//    grid's rows follow unchanged.
static void prefix_tokens(const Step5 *s) {
    printf("4. Prefix tokens: angle 0, no rotation\n");
    const int n_prefix = 1;
    PrefixCheck c = prefix_check(s, n_prefix);
    printf("   rope2d_tables(..., n_prefix %d): shape (%d, %d); table row 0 is the prefix token\n\n", n_prefix,
           n_prefix + s->L, s->hd);
    Table t;
    table_init(&t, 2, "check", "max |difference|");
    table_cell(&t, "prefix row: cos - 1");                   table_cell(&t, "%.1e", c.cos_off);
    table_cell(&t, "prefix row: sin");                       table_cell(&t, "%.1e", c.sin_off);
    table_cell(&t, "prefix q after rope_forward - q");       table_cell(&t, "%.1e", c.prefix_moved);
    table_cell(&t, "grid q at (%d,%d) after rope_forward - q", s->tok_row, s->tok_col);
    table_cell(&t, "%.4f", c.slot_moved);
    table_cell(&t, "grid rows vs the n_prefix 0 tables");   table_cell(&t, "%.1e", c.grid_diff);
    table_print(&t);
    printf("\n   (the prefix token comes out as it went in; grid tokens turn exactly as before)\n\n");
}

// ----------------------------------------------------------------------
// 5. In the model: pos=rope2d drops the learned tables; RoPE itself adds no
//    parameters.
static void in_the_model(const Step5 *s) {
    printf("5. In the model: the parameters with each kind of position\n\n");
    const ModelConfig cfg = s->cfg;
    ModelConfig rope = cfg;
    rope.pos = POS_ROPE2D;   // --set pos=rope2d
    Model learned, rotary;
    char err[256];
    if (model_build(&learned, &cfg, err, sizeof err) || model_build(&rotary, &rope, err, sizeof err))
        return (void)fprintf(stderr, "model_build: %s\n", err), exit(1);
    // The model's tables (built in model_build) are the ones used above.
    double model_diff = 0.0;
    for (int j = 0; j < s->L * s->hd; j++)
        model_diff = fmax(model_diff, fmax(fabs(rotary.rope_cos[j] - s->cos_t[j]), fabs(rotary.rope_sin[j] - s->sin_t[j])));
    position_params_table(&cfg, &rope, &learned);
    printf("\n   (pos=rope2d has %zu fewer parameters; its model's tables match the ones above to %.1e)\n\n",
           model_count_params(&cfg) - model_count_params(&rope), model_diff);
    model_free(&learned);
    model_free(&rotary);
}


int main(int argc, char **argv) {
    Options o;
    int rc = step5_parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    Step5 s;
    step5_init(&s, o.seed);
    the_tables(&s);
    same_offset_same_score(&s);
    why_base_100(&s);
    prefix_tokens(&s);
    in_the_model(&s);
    parity_print(stdout, 5, NULL);   // our layer against PyTorch's (common/eval/parity.c)
    args_print_try_it("--set pos=rope2d", "(--set rope_base=... changes the base; --modern adds RMSNorm, SwiGLU, QK-norm and\n"
                      "         no biases, and RoPE stays its own switch)");
    if (o.figures_dir && step5_draw_figures(o.figures_dir, s.q, s.k, s.seed) != 0) return 1;
    step5_free(&s);
    return 0;
}
