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
// (common/nn/mlp.c), which strings linear_*, gelu_* and swiglu_* together
// (common/nn/linear.c, common/nn/activations.c). main() prints one section
// per function below:
//   1. two_ffns_at_d128       both FFNs at D = 128 with biases: shapes and
//                             parameters, run on an input
//   2. rounding_rule          hidden rounded up to a multiple of 64, and at
//                             D = 384 without biases: 1,024 wide, as many
//                             weights as GELU's MLP
//   3. forward_backward_time  the time of one forward + backward of each FFN,
//                             taken in turns
//   4. whole_model            the parameters of the whole model, with each
//                             upgrade of the tutorial
//   5. try_it                 the switch that turns SwiGLU on in a training run
// and, with step4_draw_figures, the pictures of figures.c into --figures DIR.
// What the sections share (Step4, step4_init) and the command line are in
// step4.h.
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
#include "io/blas_kernel.h"

static double rms(const float *x, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s / n);
}

// ---------------------------------------------------------------------------
// 1. The tutorial's two FFNs: TinyDiT's width D = 128, with biases.

// Their counts, from the parameter table of each model.
static void ffn_counts_table(const Step4 *s) {
    int D = s->D, Hg = s->H_gelu, Hs = s->H_swiglu;
    FfnCount cg = ffn_count(&s->gelu), cs = ffn_count(&s->swiglu);
    Table t;
    table_init(&t, 5, "FFN", "shape", "weights", "biases", "params");
    table_cell(&t, "GELU");   table_cell(&t, "%d -> %d -> %d", D, Hg, D);
    table_cell(&t, "%zu", cg.weights); table_cell(&t, "%zu", cg.biases); table_cell(&t, "%zu", cg.weights + cg.biases);
    table_cell(&t, "SwiGLU"); table_cell(&t, "%d -> 2 x %d -> %d", D, Hs, D);
    table_cell(&t, "%zu", cs.weights); table_cell(&t, "%zu", cs.biases); table_cell(&t, "%zu", cs.weights + cs.biases);
    table_cell(&t, "difference"); table_cell(&t, "%s", "");
    table_cell(&t, "%+ld", (long)cs.weights - (long)cg.weights);
    table_cell(&t, "%+ld", (long)cs.biases - (long)cg.biases);
    table_cell(&t, "%+ld (%+.3f%%)", (long)(cs.weights + cs.biases) - (long)(cg.weights + cg.biases),
               100.0 * ((double)(cs.weights + cs.biases) / (cg.weights + cg.biases) - 1.0));
    table_print(&t);
}

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

// The rounding at three widths, from cfg_mlp_hidden.
static void rounding_table(const Step4 *s) {
    Table t;
    table_init(&t, 4, "D", "2/3 x 4 x D", "int (multiple 1)", "multiple 64");
    const int dims[3] = { 128, 384, 512 };
    double asked_512 = 0.0;   // what D = 512 asks for, and the two ways to make it whole
    int cut_512 = 0, up_512 = 0;
    for (int i = 0; i < 3; i++) {
        Config c = s->def;
        char dim_kv[32];
        snprintf(dim_kv, sizeof dim_kv, "dim=%d", dims[i]);
        config_set_or_exit(&c, dim_kv);
        config_set_or_exit(&c, "mlp=swiglu");
        table_cell(&t, "%d", dims[i]);
        double asked = 2.0 * c.model.mlp_ratio * c.model.dim / 3.0;
        if (c.model.dim == 512) asked_512 = asked;
        table_cell(&t, "%.2f", asked);
        table_cell(&t, "%d", cfg_mlp_hidden(&c.model));
        if (c.model.dim == 512) cut_512 = cfg_mlp_hidden(&c.model);
        config_set_or_exit(&c, "mlp_multiple_of=64");
        table_cell(&t, "%d", cfg_mlp_hidden(&c.model));
        if (c.model.dim == 512) up_512 = cfg_mlp_hidden(&c.model);
    }
    table_print(&t);
    printf("\n   No layer is %.2f wide: int() cuts it to %d, the rule rounds it up to %d, a width that\n"
           "   suits the hardware. TinyDiT keeps mlp_multiple_of=%d, so its SwiGLU is %d wide.\n",
           asked_512, cut_512, up_512, s->def.model.mlp_multiple_of, s->H_swiglu);
}

// The weights at D = 384 without biases. One block is enough: the MLP of
// block 0 is the same whatever the depth.
static void equal_weights_at_d384(const Step4 *s) {
    const char *gelu_nobias[] = { "dim=384", "depth=1", "bias=false", "mlp=gelu" };
    const char *swiglu_nobias[] = { "dim=384", "depth=1", "bias=false", "mlp=swiglu", "mlp_multiple_of=64" };
    const char *swiglu_bias[] = { "dim=384", "depth=1", "mlp=swiglu", "mlp_multiple_of=64" };
    const char *gelu_bias[] = { "dim=384", "depth=1", "mlp=gelu" };
    Model g384, s384, g384b, s384b;
    step4_build(&g384, s->def, gelu_nobias, 4);
    step4_build(&s384, s->def, swiglu_nobias, 5);
    step4_build(&g384b, s->def, gelu_bias, 3);
    step4_build(&s384b, s->def, swiglu_bias, 4);
    int D3 = g384.cfg.dim;
    FfnCount c3g = ffn_count(&g384), c3s = ffn_count(&s384);
    FfnCount c3gb = ffn_count(&g384b), c3sb = ffn_count(&s384b);
    printf("\n   At D = %d without biases (as GPT-style models build it), from the parameter table:\n\n", D3);
    Table t;
    table_init(&t, 3, "MLP", "shape", "weights");
    table_cell(&t, "GELU");   table_cell(&t, "%d -> %d -> %d", D3, cfg_mlp_hidden(&g384.cfg), D3);
    table_cell(&t, "%zu", c3g.weights + c3g.biases);
    table_cell(&t, "SwiGLU"); table_cell(&t, "%d -> 2 x %d -> %d", D3, cfg_mlp_hidden(&s384.cfg), D3);
    table_cell(&t, "%zu", c3s.weights + c3s.biases);
    table_print(&t);
    int H3 = cfg_mlp_hidden(&s384.cfg);
    printf("\n   %s, as 8/3 x %d = %d = %d x 64 needs no rounding: 3 x %d x %d = 2 x %d x %d.\n"
           "   With biases they would differ: GELU adds %zu, SwiGLU %zu (%zu more).\n\n",
           c3g.weights + c3g.biases == c3s.weights + c3s.biases ? "Equal" : "NOT equal",
           D3, H3, H3 / 64, D3, H3, D3, cfg_mlp_hidden(&g384.cfg),
           c3gb.biases, c3sb.biases, c3sb.biases - c3gb.biases);
    model_free(&g384); model_free(&s384); model_free(&g384b); model_free(&s384b);
}

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
enum { NCALLS = 5 };

// The table of section 3: the first three calls are whole FFNs with matmul work
// flops[i], the last two their elementwise middles.
static void timing_table(const BenchFn *fns, const double *ms_call, const double *flops) {
    Table t;
    table_init(&t, 5, "call", "ms per call", "vs GELU FFN", "matmul GFLOP", "GFLOP/s");
    for (int i = 0; i < NCALLS; i++) {
        table_cell(&t, "%s", fns[i].name);
        table_cell(&t, "%.2f", ms_call[i]);
        table_cell(&t, "%.2fx", ms_call[i] / ms_call[0]);
        if (i < 3) {
            table_cell(&t, "%.3f", flops[i] / 1e9);
            table_cell(&t, "%.1f", flops[i] / 1e9 / (ms_call[i] / 1e3));
        } else {
            table_cell(&t, "-"); table_cell(&t, "-");
        }
    }
    table_print(&t);
}

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
    struct { const char *name, *sets[4]; int n; } variants[] = {
        { "baseline",     { NULL }, 0 },
        { "+ RMSNorm",    { "norm=rmsnorm" }, 1 },
        { "+ QK-norm",    { "qk_norm=true" }, 1 },
        { "+ SwiGLU",     { "mlp=swiglu" }, 1 },
        { "+ 2D RoPE",    { "pos=rope2d" }, 1 },
        { "all four",     { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d" }, 4 },
    };
    Table t;
    table_init(&t, 4, "variant", "--set", "params", "vs baseline");
    size_t base_count = model_count_params(&def.model);
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        Config c = def;
        char sets[TABLE_CELL] = "";
        for (int i = 0; i < variants[v].n; i++) {
            config_set_or_exit(&c, variants[v].sets[i]);
            // the --set column names a single switch; "all four" lists none
            if (variants[v].n == 1) snprintf(sets, sizeof sets, "%s", variants[v].sets[i]);
        }
        size_t n = model_count_params(&c.model);
        table_cell(&t, "%s", variants[v].name);
        table_cell(&t, "%s", variants[v].n == 0 ? "-" : variants[v].n == 1 ? sets : "the four above");
        table_cell(&t, "%zu", n);
        table_cell(&t, "%+ld", (long)n - (long)base_count);
    }
    table_print(&t);
    Config modern = def;
    config_set_or_exit(&modern, "modern");
    Config sw = def;
    config_set_or_exit(&sw, "mlp=swiglu");
    long extra = (long)model_count_params(&sw.model) - (long)base_count;
    printf("\n   SwiGLU adds %ld over %d blocks: %ld per block, the FFN difference of section 1.\n"
           "   --modern (RMSNorm, SwiGLU, QK-norm, no biases; RoPE stays its own switch) has %zu.\n\n",
           extra, def.model.depth, extra / def.model.depth, model_count_params(&modern.model));
}

// ---------------------------------------------------------------------------
// 5. The switch in a training run.
static void try_it(void) {
    char s6[4096];   // step 6's program, named as a command typed here would name it
    project_command(s6, sizeof s6, "step6_ablation/step6_ablation");
    printf("try it: %s train --name mine --preset quick --set mlp=swiglu\n"
           "        (--modern turns on RMSNorm, SwiGLU, QK-norm and no biases at once)\n", s6);
}

int main(int argc, char **argv) {
    blas_use_fitting_kernel(argv);   // OpenBLAS on a CPU newer than it: io/blas_kernel.h
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
    try_it();
    if (o.figures_dir && step4_draw_figures(o.figures_dir) != 0) return 1;
    model_free(&s.gelu);
    model_free(&s.swiglu);
    return 0;
}
