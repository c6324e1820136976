// step4_swiglu: a gated feed-forward network (tutorial Step 4/6).
//
// The second half of every TinyDiT block is a feed-forward network (FFN) that
// works on each token alone. The baseline's is Linear, GELU, Linear:
//
//     FFN_GELU(x) = W2 · GELU(W1 · x)                   hidden = 4·D
//     SwiGLU(x)   = W3 · (SiLU(W1 · x) ⊙ (W2 · x))      hidden = int(2/3 · 4·D)
//
// SwiGLU (Shazeer, 2020) projects up twice. One projection, the gate, goes
// through SiLU(g) = g·σ(g) and multiplies the other, the value, feature by
// feature: the input itself decides how much of each feature passes. Three
// matrices instead of two would mean 1.5× the weights, so the hidden width
// shrinks to two thirds, and the parameter count stays where it was. A
// difference in a training run then comes from the design, not the size.
//
// This program uses the model's own pieces: the parameter table of
// model_build (common/nn/model.c), the hidden width of cfg_mlp_hidden
// (common/nn/config.c), and the block's MLP half, gelu_mlp_* and swiglu_mlp_*
// (common/nn/layers.c). main() prints one section per function below: the two
// FFNs at D = 128, the rounding rule, their time, the whole model, and the
// switch that turns SwiGLU on; their tables are in tables.c, the rest of
// the plumbing in step4.h.
//
//   cd step4_swiglu && make step4 && ./step4_swiglu
#include <math.h>
#include <omp.h>
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
#include "ffn.h"
#include "figures.h"
#include "step4.h"
#include "tables.h"

// ---------------------------------------------------------------------------
// 1. The tutorial's two FFNs: TinyDiT's width D = 128, with biases.

// Both on the same input x (2, 64, 128): 2 images of 64 tokens.
static void same_input_through_both(Step4 *s) {
    int N = 2, L = s->L, D = s->D, R = N * L;
    float *x = malloc(sizeof(float) * R * D), *dy = malloc(sizeof(float) * R * D);
    rng_fill_normal(&s->rng, x, (long)R * D, 1.0f);
    Ffn fg, fs;
    ffn_alloc(&fg, &s->gelu, R, x, dy);
    ffn_alloc(&fs, &s->swiglu, R, x, dy);
    ffn_forward(&fg);
    ffn_forward(&fs);
    // The output width is the last matrix's number of rows: (out, in).
    const ParamTensor *fc2 = model_find(&s->gelu, "blocks.0.mlp.fc2.weight");
    const ParamTensor *w3 = model_find(&s->swiglu, "blocks.0.mlp.w3.weight");
    printf("   The same input x through both (weights drawn as in model_init_weights):\n\n");
    Table t;
    table_init(&t, 4, "FFN", "input", "output", "rms of output");
    table_cell(&t, "GELU");   table_cell(&t, "(%d, %d, %d)", N, L, D); table_cell(&t, "(%d, %d, %d)", N, L, fc2->shape[0]);
    table_cell(&t, "%.4f", rms(fg.y, (size_t)R * D));
    table_cell(&t, "SwiGLU"); table_cell(&t, "(%d, %d, %d)", N, L, D); table_cell(&t, "(%d, %d, %d)", N, L, w3->shape[0]);
    table_cell(&t, "%.4f", rms(fs.y, (size_t)R * D));
    table_print(&t);
    printf("\n   %s shape in and out, so either one fits the block's residual stream.\n\n",
           fc2->shape[0] == D && w3->shape[0] == D ? "The same" : "NOT the same");
    ffn_free(&fg);
    ffn_free(&fs);
    free(x); free(dy);
}

static void two_ffns_at_d128(Step4 *s) {
    printf("1. Two FFNs at D = %d with biases, counted from the model's parameter table\n\n", s->D);
    ffn_counts_table(s);
    printf("\n   SwiGLU's hidden %d = int(2/3 x %g x %d): a narrower middle pays for the third matrix.\n\n",
           s->H_swiglu, (double)s->def.model.mlp_ratio, s->D);
    same_input_through_both(s);
}

// ---------------------------------------------------------------------------
// 2. The rounding rule: 2/3 of 4·D, rounded UP to a multiple of 64. A
//    width like 1,365⅓ is no width at all, and multiples of 64 suit the
//    hardware.

static void rounding_rule(const Step4 *s) {
    printf("2. The rounding rule: hidden = 2/3 x 4 x D, rounded up to a multiple of 64\n\n");
    rounding_table(s);
    equal_weights_at_d384(s);
}

// ---------------------------------------------------------------------------
// 3. Time. The FFN of one training batch, forward and backward, at D = 128.
//    The calls take turns (bench_interleaved, common/io/bench.c), so
//    background load on this shared machine slows them all alike, and we
//    keep medians. A third FFN is SwiGLU rounded by the rule of section 2, to a
//    multiple of 64: more work, but a width the matmul kernels may like better.

static void forward_backward_time(Step4 *s, const Options *o) {
    const char *swiglu64_set[] = { "mlp=swiglu", "mlp_multiple_of=64" };
    Model ms64;
    step4_build(&ms64, s->def, swiglu64_set, 2);
    model_init_weights(&ms64, 0);
    int D = s->D, Hg = s->H_gelu, Hs = s->H_swiglu, Hs64 = cfg_mlp_hidden(&ms64.cfg);
    int RT = o->batch * s->L;
    float *xt = malloc(sizeof(float) * RT * D), *dyt = malloc(sizeof(float) * RT * D);
    rng_fill_normal(&s->rng, xt, (long)RT * D, 1.0f);
    rng_fill_normal(&s->rng, dyt, (long)RT * D, 1.0f);
    Ffn fg, fs, fs64;
    ffn_alloc(&fg, &s->gelu, RT, xt, dyt);
    ffn_alloc(&fs, &s->swiglu, RT, xt, dyt);
    ffn_alloc(&fs64, &ms64, RT, xt, dyt);
    ffn_step(&fg);     // fill every buffer once, so the middles read sane values
    ffn_step(&fs);
    char name_s[TABLE_CELL], name_s64[TABLE_CELL], mid_g[TABLE_CELL], mid_s[TABLE_CELL];
    snprintf(name_s, sizeof name_s, "SwiGLU FFN (hidden %d)", Hs);
    snprintf(name_s64, sizeof name_s64, "SwiGLU FFN (hidden %d)", Hs64);
    snprintf(mid_g, sizeof mid_g, "GELU alone (%d x %d)", RT, Hg);
    snprintf(mid_s, sizeof mid_s, "SwiGLU gate alone (%d x %d)", RT, Hs);
    BenchFn fns[NCALLS] = { { "GELU FFN", ffn_step, &fg }, { name_s, ffn_step, &fs },
                            { name_s64, ffn_step, &fs64 },
                            { mid_g, ffn_mid_step, &fg }, { mid_s, ffn_mid_step, &fs } };
    double ms_call[NCALLS];
    double t0 = now_ms();
    bench_interleaved(fns, NCALLS, 2, o->rounds, 1, ms_call);
    double secs = (now_ms() - t0) / 1e3;
    // Matmul work: a Linear (R, in) -> (R, out) costs 2·R·in·out flops forward
    // and twice that backward (dinp and dweight), so 6·R·in·out in all.
    double flops[3] = { 6.0 * RT * D * Hg * 2, 6.0 * RT * D * Hs * 3, 6.0 * RT * D * Hs64 * 3 };
    printf("3. One forward + backward on (%d, %d, %d) = %d tokens, %d OpenMP threads,\n"
           "   median of %d turns each (the %d calls take turns; %.1f s in all)\n\n",
           o->batch, s->L, D, RT, omp_get_max_threads(), o->rounds, NCALLS, secs);
    timing_table(fns, ms_call, flops);
    printf("\n   Equal work (%+.2f%%) is not equal time: GFLOP/s shows how well each width keeps the\n"
           "   cores busy. The elementwise middles are %.0f%% (GELU) and %.0f%% (SwiGLU) of their FFN.\n\n",
           100.0 * (flops[1] / flops[0] - 1.0),
           100.0 * ms_call[3] / ms_call[0], 100.0 * ms_call[4] / ms_call[1]);
    ffn_free(&fg);
    ffn_free(&fs);
    ffn_free(&fs64);
    free(xt); free(dyt);
    model_free(&ms64);
}

// ---------------------------------------------------------------------------
// 4. The whole model with each upgrade of the tutorial, by model_count_params.
static void whole_model(const Step4 *s) {
    printf("4. The whole model (default config), one upgrade at a time\n\n");
    const Config def = s->def;
    size_t base_count = whole_model_table(&def);
    Config modern = def;
    config_set_or_exit(&modern, "modern");
    Config sw = def;
    config_set_or_exit(&sw, "mlp=swiglu");
    long extra = (long)model_count_params(&sw.model) - (long)base_count;
    printf("\n   SwiGLU adds %ld over %d blocks: %ld per block, the FFN difference of section 1.\n"
           "   --modern (RMSNorm, SwiGLU, QK-norm, no biases; RoPE stays its own switch) has %zu.\n\n",
           extra, def.model.depth, extra / def.model.depth, model_count_params(&modern.model));
}

int main(int argc, char **argv) {
    Options o;
    int rc = step4_parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    Step4 s;
    step4_init(&s);
    two_ffns_at_d128(&s);
    rounding_rule(&s);
    forward_backward_time(&s, &o);
    whole_model(&s);
    parity_print(stdout, 4, NULL);   // our layer against PyTorch's (common/eval/parity.c)
    // 5. The switch in a training run
    args_print_try_it("--set mlp=swiglu", "(--modern turns on RMSNorm, SwiGLU, QK-norm and no biases at once)");
    if (o.figures_dir && step4_draw_figures(o.figures_dir) != 0) return 1;
    model_free(&s.gelu);
    model_free(&s.swiglu);
    return 0;
}
