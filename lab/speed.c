// speed.c: a fair speed comparison of the six variants, and matmul's rate
// on a product of the model's shape, measured in the same rounds. The
// table's ms/step was measured beside other runs under a changing load, so
// it cannot rank the variants; here all six take turns in one process, one
// train_step each per round (bench_interleaved, common/io/bench.h), so a
// burst of load slows every variant alike and the median ignores it.
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include "lab.h"
#include "io/bench.h"
#include "io/blas_kernel.h"
#include "nn/matmul.h"

// ---------------------------------------------------------------------------
// The floating-point work of a training step, counted from the config.
//
// We count the matrix products, which is where the time should go, as 2
// operations (a multiply and an add) per multiply-add: an (M, K)·(K, N)
// product is 2·M·N·K. With N images, L tokens, R = N·L token rows, width D,
// H heads of hd = D/H, patch vector P = C·p·p, timestep features F, and MLP
// hidden size Hm (GELU: mlp_ratio·D; SwiGLU: about 2/3 of that), a forward
// pass does:
//
//   patch_embed            2·R·P·D
//   t_fc1, t_fc2           2·N·F·D + 2·N·D·D
//   each of the depth blocks:
//     ada                  2·N·D·4D            (6D with ada=zero)
//     qkv                  2·R·D·3D
//     q·kᵀ and att·v       2 · 2·(N·H)·L·L·hd  = 4·N·L²·D
//     proj                 2·R·D·D
//     GELU MLP             2 · 2·R·D·Hm        (fc1, fc2)
//     SwiGLU MLP           3 · 2·R·D·Hm        (w1, w2, w3)
//   ada_f                  2·N·D·2D
//   head                   2·R·D·P
//
// The backward pass does twice that: for out = inp·Wᵀ it needs dinp = dout·W
// and dW = doutᵀ·inp, two products of the forward's size; for attention,
// d(att) = dy·vᵀ and dv = attᵀ·dy, then dq = dS·k and dk = dSᵀ·q. So a
// step is 3 × forward. (Our backward skips the gradient into the image and
// into the timestep features; that saves 2·R·P·D + 2·N·F·D, well under 1%,
// and we count it anyway, as the usual "3 × forward" rule does.)
//
// Not counted: the elementwise passes (norms, RoPE, softmax, activations,
// modulation, the loss, AdamW; memory-bound, train_step_bytes). So GFLOP/s
// is useful matrix work per second, comparable with matmul's rate.
StepFlops train_step_flops_detail(const ModelConfig *c, int N) {
    double D = c->dim, L = cfg_tokens(c), R = (double)N * L, P = cfg_patch_dim(c), F = c->freq_dim;
    double Hm = cfg_mlp_hidden(c);
    double mlp = c->mlp == MLP_SWIGLU ? 3 * 2 * R * D * Hm : 2 * 2 * R * D * Hm;
    double block_linear = 2 * N * D * cfg_ada_chunks(c) * D + 2 * R * D * 3 * D + 2 * R * D * D + mlp;
    double block_att = 4 * N * L * L * D;
    StepFlops f;
    f.attention = c->depth * block_att;
    f.linear = 2 * R * P * D + 2 * N * F * D + 2 * N * D * D + c->depth * block_linear
             + 2 * N * D * 2 * D + 2 * R * D * P;
    f.forward = f.linear + f.attention;
    f.step = 3 * f.forward;
    return f;
}

// ---------------------------------------------------------------------------
// The bytes the step's elementwise passes move: what the products do not
// count, and what memory bandwidth, not arithmetic, limits. Each pass reads
// its tensors and writes its result once (floats of 4 bytes), with R = N·L,
// Hm the MLP's hidden size, S = N·H·L² the attention's scores:
//
//   each block, forward              backward
//     norm + modulate, twice  2·2RD    3·2RD   (x and dout in, dx out)
//     residual adds, twice    2·3RD    ada=zero's gates: 2·3RD
//     softmax                 2S       3S      (att and datt in, dS out)
//     QK-norm (q and k)       4RD      6RD
//     2D RoPE (q and k)       4RD      4RD
//     GELU / SwiGLU           2RHm/3RHm  3RHm/5RHm
//     bias gradients                   the outputs' gradients of qkv, proj
//                                      and the MLP's products, read once
//   the final norm + modulate 2RD      3RD
//   AdamW: each parameter's weight, gradient and two moments read, three
//   written (7 floats), and its gradient zeroed (1).
//
// Not counted: the small (N, D) passes of the condition, patchify and
// unpatchify (2·R·P each way), the loss; a few percent.
double train_step_bytes(const ModelConfig *c, int N, size_t n_params) {
    double D = c->dim, R = (double)N * cfg_tokens(c), Hm = cfg_mlp_hidden(c), RD = R * D;
    double S = (double)N * c->heads * cfg_tokens(c) * cfg_tokens(c);
    bool swiglu = c->mlp == MLP_SWIGLU;
    double fwd = 4 * RD + 6 * RD + 2 * S + (swiglu ? 3 : 2) * R * Hm;
    double back = 6 * RD + (c->ada == ADA_ZERO ? 6 * RD : 0) + 3 * S + (swiglu ? 5 : 3) * R * Hm;
    if (c->qk_norm) { fwd += 4 * RD; back += 6 * RD; }
    if (c->pos == POS_ROPE2D) { fwd += 4 * RD; back += 4 * RD; }
    if (c->bias) back += 3 * RD + RD + (swiglu ? 2 * R * Hm + RD : R * Hm + RD);
    double floats = c->depth * (fwd + back) + 2 * RD + 3 * RD + 8.0 * n_params;
    return 4 * floats;
}

// ---------------------------------------------------------------------------
// The six variants are the ablation's configurations CFG_BASE to CFG_ALL:
// the same --set switches, so the race times exactly the models that the
// table scores.

int racer_init(Racer *r, const Config *cfg, const float *x1) {
    char err[512];
    memset(r, 0, sizeof *r);
    if (model_build(&r->m, &cfg->model, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return -1; }
    model_init_weights(&r->m, 0);
    if (run_train_state_init(&r->ts, &r->m, cfg->run.batch, &cfg->run) != 0) {
        fprintf(stderr, "error: out of memory\n");
        model_free(&r->m);
        return -1;
    }
    rng_seed(&r->rng, 1);
    r->x1 = x1;
    r->reps = 1;
    r->flops = train_step_flops_detail(&cfg->model, cfg->run.batch).step;
    r->bytes = train_step_bytes(&cfg->model, cfg->run.batch, r->m.n_params);
    return 0;
}

void racer_free(Racer *r) {
    train_state_free(&r->ts);
    model_free(&r->m);
}

void racer_turn(void *ctx) {
    Racer *r = ctx;
    if (r->threads > 0) omp_set_num_threads(r->threads);
    for (int i = 0; i < r->reps; i++) train_step(&r->ts, r->x1, NULL, &r->rng);
}

typedef struct {
    int M, N, K;
    int trans_b;        // B stored (N, K) and used transposed, as linear_forward does
    float *A, *B, *C;
} Gemm;

static void gemm_call(void *ctx) {
    Gemm *g = ctx;
    matmul(0, g->trans_b, g->M, g->N, g->K, 1.0f, g->A, g->K, g->B, g->trans_b ? g->K : g->N, 0.0f, g->C, g->N);
}

static int gemm_init(Gemm *g, int M, int N, int K, int trans_b) {
    *g = (Gemm){ M, N, K, trans_b, zeroed_floats((size_t)M * K), zeroed_floats((size_t)K * N),
                 zeroed_floats((size_t)M * N) };
    if (!g->A || !g->B || !g->C) return -1;
    Rng r;
    rng_seed(&r, 7);
    rng_fill_normal(&r, g->A, (long)M * K, 1.0f);
    rng_fill_normal(&r, g->B, (long)K * N, 1.0f);
    return 0;
}

static void gemm_free(Gemm *g) { free(g->A); free(g->B); free(g->C); }

typedef struct {
    int batch, threads, rounds, warmup, square;
    Config base;           // the tutorial's model (dim 128, depth 4), which each variant changes
} SpeedOptions;

static int parse_speed_options(int argc, char **argv, SpeedOptions *o) {
    *o = (SpeedOptions){ 64, 2, 12, 2, 1024, config_default() };
    const ArgOption opts[] = {
        ARG_INT("batch", "N", &o->batch, 1, 1 << 20, "images per training step"),
        ARG_INT("threads", "N", &o->threads, 1, 1024, "OpenMP threads"),
        ARG_INT("rounds", "N", &o->rounds, 1, 1000, "rounds, each variant one step per round"),
        ARG_INT("warmup", "N", &o->warmup, 0, 1000, "first rounds not timed"),
        ARG_END,
    };
    const ArgSpec spec = {
        .program = "lab speed", .options = opts,
        .about =
            "  the six variants (baseline, + RMSNorm, + QK-norm, + SwiGLU, + 2D RoPE, all four)\n"
            "  built in one process and timed in turns, one training step each per round; the\n"
            "  first --warmup rounds are not timed; the median ms per step, its ratio to the\n"
            "  baseline, GFLOP/s; matmul's rate (common/nn/matmul.c) in the same rounds on a\n"
            "  model-shaped product (N*L, D)x(D, 4D) and a large square (1024), and which\n"
            "  kernels it runs.",
    };
    int rc = args_parse(&spec, argc, argv);
    if (rc != ARGS_OK) return rc;
    return args_check_rounds(o->rounds, o->warmup);
}

// Builds the six models, each with its optimizer state, on the same images
// x1, and their entries fns[0..6). 0, or 1 with a message.
static int build_racers(const SpeedOptions *o, Racer *racers, const float *x1, BenchFn *fns) {
    for (int v = 0; v < 6; v++) {
        Config c;
        ablation_config_of(PRESET_TUTORIAL, v, &c);   // the tutorial's model, as o->base
        c.run.batch = o->batch;
        if (racer_init(&racers[v], &c, x1) != 0) return 1;
        fns[v] = (BenchFn){ ABLATION_CONFIG[v].label, racer_turn, &racers[v] };
    }
    return 0;
}

// The machine's side: the product the linear layers call (matmul), once,
// threaded by the library, on the shape of the MLP's first product, and on
// a square big enough for the library to reach its best rate. Their entries are fns[0], fns[1]. 0, or -1.
static int build_gemms(const SpeedOptions *o, Gemm *g, BenchFn *fns) {
    int R = o->batch * cfg_tokens(&o->base.model), D = o->base.model.dim, sq = o->square;
    if (gemm_init(&g[0], R, 4 * D, D, 1) != 0 || gemm_init(&g[1], sq, sq, sq, 0) != 0)
        return -1;
    fns[0] = (BenchFn){ "matmul model-shaped", gemm_call, &g[0] };
    fns[1] = (BenchFn){ "matmul square", gemm_call, &g[1] };
    return 0;
}

static double gemm_flops(const Gemm *g) { return 2.0 * g->M * g->N * (double)g->K; }

// The elementwise passes' rate: one pass over a tensor of the MLP's hidden
// size (R, Hm), one read and one written, on the same threads as the step.
typedef struct { float *x, *y; size_t n; } Pass;

static void pass_call(void *ctx) {
    Pass *p = ctx;
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < p->n; i++) p->y[i] = 1.0001f * p->x[i];
}

// The roofline of a step: its products at the rate of the model-shaped
// product (fc1's, measured in the same rounds) plus its elementwise passes at
// the pass's bandwidth: the time the step would take if nothing else cost.
static double roofline_ms(const Racer *r, double gemm_gflops, double pass_gbs) {
    return r->flops * 1e-6 / gemm_gflops + r->bytes * 1e-6 / pass_gbs;
}

static void print_speed_tables(const SpeedOptions *o, const Racer *racers, const Gemm *g, const double *ms,
                               const double *ms_gemm, double pass_gbs) {
    double gemm_gflops = gemm_flops(&g[0]) * 1e-6 / ms_gemm[0];
    Table t;
    table_init(&t, 7, "variant", "ms/step", "vs baseline", "GFLOP/step", "GFLOP/s", "roofline ms", "vs roofline");
    for (int v = 0; v < 6; v++) {
        table_cell(&t, "%s", ABLATION_CONFIG[v].label);
        table_cell(&t, "%.1f", ms[v]);
        table_cell(&t, "%.2fx", ms[v] / ms[0]);
        table_cell(&t, "%.2f", racers[v].flops * 1e-9);
        table_cell(&t, "%.1f", racers[v].flops * 1e-6 / ms[v]);
        table_cell(&t, "%.1f", roofline_ms(&racers[v], gemm_gflops, pass_gbs));
        table_cell(&t, "%.2fx", ms[v] / roofline_ms(&racers[v], gemm_gflops, pass_gbs));
    }
    table_print(&t);
    printf("\nroofline: the step's products at the model-shaped product's rate below (%.1f GFLOP/s), plus\n"
           "its elementwise passes (%.0f MB for the baseline, lab/speed.c counts them) at %.1f GB/s, one\n"
           "pass over a (%d, %d) tensor in the same rounds\n", gemm_gflops, racers[0].bytes * 1e-6, pass_gbs,
           o->batch * cfg_tokens(&racers[0].m.cfg), cfg_mlp_hidden(&racers[0].m.cfg));
    char blas[256];
    blas_kernel_describe(blas, sizeof blas);
    printf("\nthe products (common/nn/matmul.c): %s\n"
           "OpenBLAS (LAPACK, the probe network): %s\n", matmul_about(), blas);
    Table u;
    table_init(&u, 4, "product", "GFLOP", "ms", "GFLOP/s");
    for (int k = 0; k < 2; k++) {
        table_cell(&u, "(%dx%d)x(%dx%d)%s", g[k].M, g[k].K, g[k].K, g[k].N, k == 0 ? " = MLP fc1" : "");
        table_cell(&u, "%.2f", gemm_flops(&g[k]) * 1e-9);
        table_cell(&u, "%.2f", ms_gemm[k]);
        table_cell(&u, "%.1f", gemm_flops(&g[k]) * 1e-6 / ms_gemm[k]);
    }
    table_print(&u);
    printf("\nthe baseline's step does its matrix work at %.1f GFLOP/s; one matmul of fc1's shape\n"
           "reaches %.1f, and the rest of the step's time goes to what the count leaves out\n"
           "(elementwise passes, small products, threads waiting for each other)\n",
           racers[0].flops * 1e-6 / ms[0], gemm_flops(&g[0]) * 1e-6 / ms_gemm[0]);
}

int cmd_speed(int argc, char **argv) {
    SpeedOptions o;
    int rc = parse_speed_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    omp_set_num_threads(o.threads);

    Racer *racers = calloc(6, sizeof(Racer));
    size_t per = cfg_image_floats(&o.base.model);
    float *x1 = malloc(sizeof(float) * per * o.batch);
    if (!racers || !x1) { fprintf(stderr, "error: out of memory\n"); return 1; }
    Rng data;
    rng_seed(&data, 0);
    rng_fill_normal(&data, x1, (long)(per * o.batch), 1.0f);   // like the tutorial's torch.randn images
    // the race: the six variants, the two products, one elementwise pass
    BenchFn fns[9];
    Gemm g[2];
    if ((rc = build_racers(&o, racers, x1, fns)) != 0) return rc;
    if (build_gemms(&o, g, fns + 6) != 0) { fprintf(stderr, "error: out of memory\n"); return 1; }
    Pass pass = { .n = (size_t)o.batch * cfg_tokens(&o.base.model) * cfg_mlp_hidden(&o.base.model) };
    pass.x = zeroed_floats(pass.n);   // aligned as the model's buffers
    pass.y = zeroed_floats(pass.n);
    if (!pass.x || !pass.y) { fprintf(stderr, "error: out of memory\n"); return 1; }
    fns[8] = (BenchFn){ "elementwise pass", pass_call, &pass };
    printf("fair speed comparison: 6 variants in one process, taking turns one training step at a time\n"
           "(train_step: noise and times, forward, loss, backward, AdamW), batch %d, %d thread%s,\n"
           "%d rounds of which %d warm-up: the median of %d\n\n",
           o.batch, o.threads, o.threads == 1 ? "" : "s", o.rounds, o.warmup, o.rounds - o.warmup);
    fflush(stdout);
    double ms[9];
    bench_interleaved(fns, 9, o.warmup, o.rounds - o.warmup, 1, ms);
    // the pass's GB/s: one float read and one written an element
    print_speed_tables(&o, racers, g, ms, ms + 6, 8.0 * pass.n * 1e-6 / ms[8]);

    for (int v = 0; v < 6; v++) racer_free(&racers[v]);
    gemm_free(&g[0]); gemm_free(&g[1]);
    free(pass.x); free(pass.y);
    free(racers); free(x1);
    return 0;
}
