// Step 3: QK-norm, keep attention scores in check.
//
// An attention score (a "logit") is a dot product, q·k/√d. Nothing bounds it:
// if training makes the query and key projections c times larger, q and k are
// both c times larger and the scores c² times larger. Softmax of big scores is
// nearly one-hot, one key takes all of a query's weight, and the gradient
// through the softmax all but vanishes. Large models have diverged this way
// (ViT-22B, Dehghani et al., 2023).
//
// QK-norm runs every head's query and key through an RMSNorm over the head's
// channels just before the dot product:
//     q̂ = q / sqrt(mean(q²) + eps) · g_q,    k̂ = k / sqrt(mean(k²) + eps) · g_k
// With the gains at 1, |q̂| and |k̂| are at most √d, so |q̂·k̂|/√d <= √d, however
// large the weights get. The gains are learned, so the model can still sharpen
// its attention on purpose; it just cannot do so by accident of weight growth.
//
// This program shows:
//   1. the logit table: scores and attention of random q, k scaled x1, x4, x16,
//      without and with QK-norm, through the model's attention_forward
//      (common/nn/attention.c), whose QK-norm is qk_norm_forward,
//   2. the x10 weights check: an attention without biases whose query and key
//      projection weights are multiplied by 10 (linear_forward + attention_forward),
//   3. the bound √d against the largest logit seen over inputs of any scale,
// then draws two pictures from its numbers (figures.c): the largest logit
// against the scale of q and k, and the attention maps behind section 1.
//
//   cd step3_qknorm && make step3 && ./step3_qknorm
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "figures.h"
#include "step3.h"
#include "eval/parity.h"
#include "io/args.h"
#include "io/paths.h"
#include "io/bench.h"
#include "io/figure.h"
#include "nn/layers.h"
#include "nn/rng.h"

// Sections 1 and 3 score one head, q and k of 64 tokens and head_dim 32,
// through the model's attention_forward: OneHead and one_head_scores, in
// one_head.c (step3.h).

// ---------------------------------------------------------------------------
// 1. The logit table: the head's scores and attention at growth x1, x4, x16,
//    without and with QK-norm. The attention maps go to the figure.
static void logit_table(OneHead *h, AttentionMaps *maps) {
    int L = h->L, hd = h->hd;
    printf("1. Attention logits of one head (%d tokens, head_dim %d) as q and k grow\n"
           "   q, k ~ N(0,1) times the growth; top weight = mean over queries of the\n"
           "   largest softmax weight (%.3f is uniform, 1 is one-hot)\n\n", L, hd, 1.0 / L);
    Table t;
    table_init(&t, 6, "q, k scaled", "max |logit|", "vs x1", "top weight",
               "max |logit| QK-norm", "top weight QK-norm");
    double base = 0.0;
    for (int gi = 0; gi < 3; gi++) {
        one_head_scale(h, (float)maps->growth[gi]);
        double mx, top, mx_n, top_n;
        one_head_scores(h, 0, &mx, &top, maps->weights[0][gi]);
        one_head_scores(h, 1, &mx_n, &top_n, maps->weights[1][gi]);
        maps->top[0][gi] = top;
        maps->top[1][gi] = top_n;
        if (gi == 0) base = mx;
        table_cell(&t, "x%d", maps->growth[gi]);
        table_cell(&t, "%.1f", mx);
        table_cell(&t, "x%.1f", mx / base);
        table_cell(&t, "%.2f", top);
        table_cell(&t, "%.2f", mx_n);
        table_cell(&t, "%.2f", top_n);
    }
    table_print(&t);
    printf("\n   Without QK-norm the logits grow with the square of the growth and softmax\n"
           "   turns one-hot; with it, logits and attention do not move.\n\n");
}

// ---------------------------------------------------------------------------
// 2. The x10 weights check, on TinyDiT's attention size: x (2, 64, 128), 4
//    heads of 32. Weights as the model initialises them (uniform in ±1/√D,
//    model_init_weights in common/nn/model.c). Then the query and key projections
//    (rows [0, D) and [D, 2D) of the qkv weight) are multiplied by 10, the
//    values left alone.
//
static void x10_weights_check(Rng *rng, const OneHead *h) {
    int N = 2, L = h->L, D = 128, H = 4;
    size_t nx = (size_t)N * L * D;
    float *x = malloc(sizeof(float) * nx);
    float *w_qkv = malloc(sizeof(float) * 3 * D * D), *w_qkv10 = malloc(sizeof(float) * 3 * D * D);
    float *w_proj = malloc(sizeof(float) * D * D);
    float *before = malloc(sizeof(float) * nx), *after = malloc(sizeof(float) * nx);
    float bound_w = 1.0f / sqrtf((float)D);
    rng_fill_normal(rng, x, (long)nx, 1.0f);
    rng_fill_uniform(rng, w_qkv, 3L * D * D, -bound_w, bound_w);
    rng_fill_uniform(rng, w_proj, (long)D * D, -bound_w, bound_w);
    memcpy(w_qkv10, w_qkv, sizeof(float) * 3 * D * D);
    for (long i = 0; i < 2L * D * D; i++) w_qkv10[i] *= 10.0f;   // query and key rows only

    printf("2. The x10 weights check: attention without biases, x (%d, %d, %d), %d heads;\n"
           "   the query and key projection weights multiplied by 10\n\n", N, L, D, H);
    Table t;
    table_init(&t, 5, "attention", "max |logit| before", "after", "max |output change|",
               "unchanged (< 1e-4)?");
    double change[2], growth_raw = 0.0;
    for (int qk = 0; qk < 2; qk++) {
        const float *gq = qk ? h->q_gain : NULL, *gk = qk ? h->k_gain : NULL;
        float l0 = attention_layer(before, x, w_qkv, w_proj, gq, gk, N, L, D, H);
        float l1 = attention_layer(after, x, w_qkv10, w_proj, gq, gk, N, L, D, H);
        double worst = 0.0;
        for (size_t i = 0; i < nx; i++) {
            double d = fabs((double)after[i] - before[i]);
            if (d > worst) worst = d;
        }
        change[qk] = worst;
        if (!qk) growth_raw = l1 / l0;
        table_cell(&t, qk ? "with QK-norm" : "without QK-norm");
        table_cell(&t, "%.3f", l0);
        table_cell(&t, "%.3f", l1);
        table_cell(&t, "%.2e", worst);
        table_cell(&t, "%s", worst < 1e-4 ? "yes" : "no");
    }
    table_print(&t);
    printf("\n   Ten times the weights make the raw logits %.1f times larger, and the output\n"
           "   moves by %.3g. With QK-norm the normalised q and k are the same vectors as\n"
           "   before; the %.2g left is eps (tiny next to mean(q²), and now even tinier)\n"
           "   and float rounding.\n\n",
           growth_raw, change[0], change[1]);
    free(x); free(w_qkv); free(w_qkv10); free(w_proj); free(before); free(after);
}

// ---------------------------------------------------------------------------
// 3. The bound. With gains at 1, RMSNorm gives q̂ a mean square of
//    ms/(ms + eps) < 1, so |q̂| <= √d, and the same for k̂. Cauchy–Schwarz:
//    |q̂·k̂| <= |q̂||k̂| <= d, hence |logit| = |q̂·k̂|/√d <= √d. The scale of the
//    input never enters. We try inputs over eighteen orders of magnitude,
//    several random draws each, and keep the largest logit seen; the last
//    row is the worst case on purpose: every key equals its query.
static void the_bound(OneHead *h, Rng *rng) {
    int L = h->L, hd = h->hd, draws = 20;
    float bound = sqrtf((float)hd);
    printf("3. The bound: with gains at 1, |q̂·k̂|/√d <= √d = %.3f for d = %d, whatever the input\n"
           "   largest |logit| over %d random draws of q, k (%d tokens each)\n\n", bound, hd, draws, L);
    Table t;
    table_init(&t, 5, "q, k drawn as", "without QK-norm", "with QK-norm", "bound √d",
               "with / bound");
    for (int row = 0; row < 6; row++) {
        double worst_raw = 0.0, worst_n = 0.0;
        for (int draw = 0; draw < draws; draw++) {
            draw_row_inputs(h, rng, row);
            double mx, top;
            one_head_scores(h, 0, &mx, &top, NULL);
            if (mx > worst_raw) worst_raw = mx;
            one_head_scores(h, 1, &mx, &top, NULL);
            if (mx > worst_n) worst_n = mx;
        }
        if (row < 4)       table_cell(&t, "N(0,1) x %g", BOUND_SCALES[row]);
        else if (row == 4) table_cell(&t, "N(0,1) x 10^U(%g,%g) each", -BOUND_SPREAD, BOUND_SPREAD);
        else               table_cell(&t, "k = q, N(0,1) x %g", BOUND_PARALLEL);
        table_cell(&t, "%.3g", worst_raw);
        table_cell(&t, "%.3f", worst_n);
        table_cell(&t, "%.3f", bound);
        table_cell(&t, "%.4f", worst_n / bound);
    }
    table_print(&t);
    printf("\n   Random directions stay well inside the bound. It is met (to four digits)\n"
           "   only when a key is parallel to its query (last row), or nearly so: with mixed\n"
           "   scales one huge value dominates each vector, q̂ and k̂ point along the same axis.\n"
           "   At the smallest scale mean(q²) is as small as eps, so q̂ comes out shorter.\n\n");
}


int main(int argc, char **argv) {
    const char *figures_dir;
    int rc = step3_parse_options(argc, argv, &figures_dir);
    if (rc != ARGS_OK) return args_exit_code(rc);
    Rng rng;
    rng_seed(&rng, 0);

    OneHead h = one_head(&rng);
    float *weights = malloc(sizeof(float) * 6 * h.L * h.L);   // the six attention maps
    AttentionMaps maps = { .L = h.L, .growth = { 1, 4, 16 } };
    for (int m = 0; m < 6; m++) maps.weights[m / 3][m % 3] = weights + (size_t)m * h.L * h.L;

    logit_table(&h, &maps);
    x10_weights_check(&rng, &h);
    the_bound(&h, &rng);
    parity_print(stdout, 3, NULL);   // our layer against PyTorch's (common/eval/parity.c)
    args_print_try_it("--set qk_norm=true", "(--modern: RMSNorm, SwiGLU, QK-norm and no biases at once; not 2D RoPE)");

    rc = figures_dir ? step3_draw_figures(figures_dir, &h, &maps) : 0;
    one_head_free(&h);
    free(weights);
    return rc;
}
