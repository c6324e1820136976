// Step 2: RMSNorm, normalise without centring.
//
// LayerNorm does two things to every token: it subtracts the token's mean and
// divides by its standard deviation. RMSNorm (Zhang & Sennrich, 2019) keeps
// only the second half, dividing by the root mean square instead:
//
//     LayerNorm(x) = (x - mean(x)) / sqrt(var(x) + eps)
//     RMSNorm(x)   =  x            / sqrt(mean(x²) + eps)  · gain
//
// The paper's bet is that the re-scaling is what keeps activations steady, and
// that the re-centring is extra work for little benefit. This program shows:
//   1. what each norm does to tokens whose mean is not zero,
//   2. that rmsnorm_forward (common/nn/layers.c) does what RMSNorm must: rows
//      of RMS 1, and a gain that multiplies,
//   3. how long each norm takes here, forward and backward, timed in turns.
// In a training run the switch is --set norm=rmsnorm (see the last lines).
// Then it draws two pictures from those numbers (figures.c): the outputs of
// section 1 as histograms, and the times of section 3 as bars.
//
//   cd step2_rmsnorm && make step2 && ./step2_rmsnorm
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "figures.h"
#include "step2.h"
#include "eval/parity.h"
#include "io/args.h"
#include "io/paths.h"
#include "io/bench.h"
#include "io/figure.h"
#include "nn/layers.h"
#include "nn/rng.h"

// ---------------------------------------------------------------------------
// 1. Tokens with a non-zero mean: x = 3·N(0,1) + 1, shape (4, 64, 128), i.e.
//    256 tokens of 128 channels. A norm that forgot to centre would look just
//    like one that centres on zero-mean data, so we shift it.
static void what_each_norm_does(ShiftedTokens *s) {
    int R = s->R, D = s->D;
    layernorm_forward(s->y_ln, s->mean, s->rstd, s->x, R, D, NORM_EPS);
    rmsnorm_forward(s->y_rms, s->rstd, s->x, NULL, R, D, NORM_EPS);

    printf("1. What each norm does to tokens with a non-zero mean\n"
           "   x = 3·N(0,1) + 1, shape (%d, %d, %d): per token, the |mean| and the RMS\n"
           "   of its %d channels, averaged over the %d tokens\n\n", s->N, s->L, D, D, R);
    Table t;
    table_init(&t, 3, "tokens", "mean |token mean|", "mean token rms");
    const char *names[3] = { "input x", "LayerNorm(x)", "RMSNorm(x)" };
    const float *ys[3] = { s->x, s->y_ln, s->y_rms };
    double m = 0.0, q;
    for (int row = 0; row < 3; row++) {
        token_stats(ys[row], R, D, &m, &q);
        table_cell(&t, "%s", names[row]); table_cell(&t, "%.3f", m); table_cell(&t, "%.3f", q);
    }
    table_print(&t);
    printf("\n   Both bring every token to RMS 1; only LayerNorm moves its mean to 0.\n"
           "   RMSNorm divides the mean by the same RMS as the rest, so a mean of %.3f stays.\n\n",
           m);   // the last row's: RMSNorm(x)
}

// ---------------------------------------------------------------------------
// 2. Ours by what RMSNorm must do, measured in double on its float32 output:
//    without a gain every row comes out with RMS 1 (eps, 1e-6 against mean
//    squares near 10, moves it by 5e-8), and with a random gain around 1
//    the output is the gainless one times the gain. The deviations are
//    float32 rounding: a few units in the last place of outputs of size ~1.
//    (The formula itself is the exercise of docs/exercises.md.)
static void ours_by_what_it_must_do(ShiftedTokens *s, Rng *rng) {
    int R = s->R, D = s->D;
    float *gain = malloc(sizeof(float) * D), *y_gain = malloc(sizeof(float) * R * D);
    for (int i = 0; i < D; i++) gain[i] = 1.0f + 0.5f * rng_normal(rng);
    rmsnorm_forward(y_gain, s->rstd, s->x, gain, R, D, NORM_EPS);
    double worst_rms = 0.0, worst_gain = 0.0, big = 0.0;
    for (int r = 0; r < R; r++) {
        const float *y = s->y_rms + (size_t)r * D, *yg = y_gain + (size_t)r * D;
        double ss = 0.0;
        for (int i = 0; i < D; i++) {
            ss += (double)y[i] * y[i];
            double d = fabs(yg[i] - (double)y[i] * gain[i]);
            if (d > worst_gain) worst_gain = d;
            if (fabs(yg[i]) > big) big = fabs(yg[i]);
        }
        double off = fabs(sqrt(ss / D) - 1.0);
        if (off > worst_rms) worst_rms = off;
    }
    printf("2. rmsnorm_forward (float32, common/nn/layers.c) by what it must do, in double\n\n");
    Table t;
    table_init(&t, 2, "property", "largest deviation");
    table_cell(&t, "every row of RMSNorm(x) has RMS 1"); table_cell(&t, "%.2e", worst_rms);
    table_cell(&t, "with a gain: RMSNorm(x) · gain"); table_cell(&t, "%.2e", worst_gain);
    table_print(&t);
    printf("\n   Float32 rounding only: at most %.1f x FLT_EPSILON of the largest output (%.3f).\n\n",
           (worst_rms > worst_gain / big ? worst_rms : worst_gain / big) / FLT_EPSILON, big);
    free(gain); free(y_gain);
}

// ---------------------------------------------------------------------------
// 3. Timings on TinyDiT's training shape, (128·64, 128) tokens, of the calls
//    the model trains through: each norm fused with its adaLN modulation
//    (norm_bench.c). The four calls take turns (bench_interleaved in common/io/bench.c), so background load
//    on this shared machine slows them all alike, and we keep medians. One
//    thread by default: the cores are shared with other programs, and a
//    parallel call waits for its slowest thread, so with every core in use we
//    would time the neighbours as much as the norm.
static NormTimings time_per_call(Rng *rng, int rounds, int threads) {
    NormBench b = norm_bench_make(rng);
    BenchFn fns[4];
    norm_bench_calls(&b, fns);   // norm_bench.c
    NormTimings tm = { .R = b.R, .D = b.D, .rounds = rounds };
    omp_set_num_threads(threads);
    double t0 = now_ms();
    bench_interleaved(fns, 4, 3, rounds, 4, tm.ms);
    double secs = (now_ms() - t0) / 1e3;
    norm_bench_free(&b);

    tm.threads = omp_get_max_threads();
    printf("3. Time per call on (%d, %d) tokens, %d OpenMP thread%s, median of %d turns\n"
           "   (the four calls take turns; %.1f s in all)\n\n",
           tm.R, tm.D, tm.threads, tm.threads == 1 ? "" : "s", rounds, secs);
    Table t;
    table_init(&t, 5, "pass", "LayerNorm ms", "RMSNorm ms", "RMSNorm/LayerNorm", "ns per token (LN, RMS)");
    const char *pass[2] = { "forward", "backward" };
    for (int p = 0; p < 2; p++) {
        double a = tm.ms[2 * p], r = tm.ms[2 * p + 1];
        table_cell(&t, "%s", pass[p]);
        table_cell(&t, "%.3f", a);
        table_cell(&t, "%.3f", r);
        table_cell(&t, "%.2fx", r / a);
        table_cell(&t, "%.1f, %.1f", a * 1e6 / tm.R, r * 1e6 / tm.R);
    }
    table_print(&t);
    return tm;
}

// Why: in our C both norms are one fused loop per token. LayerNorm walks a
// token for its mean, again for its variance, and a last time to write;
// RMSNorm has no mean to find, so it walks once for mean(x²) and once to
// write. Each walk that sums is a chain of dependent float additions (we
// build without -ffast-math, so the compiler must keep their order and
// cannot split them across vector lanes): it costs about one add latency
// per channel, while the writing walk runs 8 or 16 lanes at a time. So the
// summing walks are most of the time, and RMSNorm has one fewer. Backward,
// both make one summing walk (LayerNorm's carries two independent sums
// side by side, which overlap) and one writing walk: a smaller gap.
static void why_the_times_differ(const double ms[4]) {
    printf("\n   Here RMSNorm is %s forward (%.2fx the time of LayerNorm) and %s backward (%.2fx).\n",
           ms[1] < ms[0] ? "faster" : "not faster", ms[1] / ms[0],
           ms[3] < ms[2] ? "faster" : "not faster", ms[3] / ms[2]);
    printf("   Both are single fused loops per token here; RMSNorm simply has one reduction\n"
           "   pass fewer (no mean), and each reduction is a serial chain of float adds.\n"
           "   The tutorial saw the opposite in PyTorch on CPU, where RMSNorm was built from\n"
           "   several small operations and LayerNorm was one kernel: a cheaper formula is\n"
           "   only cheaper when it runs as one loop.\n\n");
}


int main(int argc, char **argv) {
    Options o;
    int rc = step2_parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    Rng rng;
    rng_seed(&rng, 0);

    ShiftedTokens s = shifted_tokens(&rng);
    what_each_norm_does(&s);
    ours_by_what_it_must_do(&s, &rng);
    NormTimings tm = time_per_call(&rng, o.rounds, o.threads);
    why_the_times_differ(tm.ms);
    parity_print(stdout, 2, NULL);   // our layer against PyTorch's (common/eval/parity.c)
    args_print_try_it("--set norm=rmsnorm", "(--modern: RMSNorm, SwiGLU, QK-norm and no biases at once; not 2D RoPE)");

    rc = o.figures_dir ? step2_draw_figures(o.figures_dir, s.y_ln, s.y_rms, (size_t)s.R * s.D, &tm) : 0;
    shifted_tokens_free(&s);
    return rc;
}
