// step8_recipe: train and sample like 2026 (docs/step8_recipe.md).
//
// Three changes that leave the model as it is:
//   logit-normal times   t = σ(mean + std·u), u ~ N(0, 1): training spends
//                        its steps in the middle of the path, where the
//                        velocity is hardest to predict
//   an EMA of the weights   after AdamW step k, ema ← β_k·ema + (1 − β_k)·θ
//                        with β_k = (1 − 1/k)^(γ+1): an average whose width
//                        grows with the run
//   Heun's sampler       two model evaluations a step, error falling with
//                        the square of the step, where Euler's falls with it
// main() prints one section per idea; `nfe`, `curves` and `table` (nfe.c)
// measure them on trained models.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step8.h"
#include "eval/rms.h"
#include "eval/scorecard.h"
#include "io/bench.h"
#include "io/checkpoint.h"
#include "io/figure.h"
#include "nn/ema.h"
#include "nn/rng.h"

// ----------------------------------------------------------------------
// 1. Logit-normal times: where training spends its steps
#define TIME_DRAWS 100000
#define TIME_BINS 10
static int logit_normal_times(const char *figures, FigureTally *tally) {
    static float u[TIME_DRAWS], t[TIME_DRAWS], flat[TIME_DRAWS];
    Rng r;
    rng_seed(&r, 0);
    rng_fill_uniform(&r, flat, TIME_DRAWS, 0.0f, 1.0f);      // what train_step draws for t_dist=uniform
    rng_fill_normal(&r, u, TIME_DRAWS, 1.0f);                // and for logit_normal: u, then σ(u)
    flow_logit_normal_times(t, u, TIME_DRAWS, 0.0f, 1.0f);
    printf("1. Logit-normal times: t = sigmoid(0 + 1*u), u ~ N(0, 1), %d draws against uniform ones\n\n", TIME_DRAWS);
    int n_flat[TIME_BINS] = {0}, n_ln[TIME_BINS] = {0}, mid_flat = 0, mid_ln = 0;
    for (int i = 0; i < TIME_DRAWS; i++) {
        n_flat[(int)(flat[i] * TIME_BINS) % TIME_BINS]++;
        n_ln[(int)(t[i] * TIME_BINS) % TIME_BINS]++;
        mid_flat += flat[i] >= 0.3f && flat[i] <= 0.7f;
        mid_ln += t[i] >= 0.3f && t[i] <= 0.7f;
    }
    Table tab;
    table_init(&tab, 4, "t in", "uniform", "logit-normal", "logit-normal, exact");
    for (int b = 0; b < TIME_BINS; b++) {
        double lo = (double)b / TIME_BINS, hi = (double)(b + 1) / TIME_BINS;
        table_cell(&tab, "[%.1f, %.1f)", lo, hi);
        table_cell(&tab, "%.3f", (double)n_flat[b] / TIME_DRAWS);
        table_cell(&tab, "%.3f", (double)n_ln[b] / TIME_DRAWS);
        table_cell(&tab, "%.3f", logit_normal_cdf(hi, 0, 1) - logit_normal_cdf(lo, 0, 1));
    }
    table_print(&tab);
    printf("\n   the share in [0.3, 0.7]: uniform %.3f, logit-normal %.3f (exact %.3f)\n\n",
           (double)mid_flat / TIME_DRAWS, (double)mid_ln / TIME_DRAWS,
           logit_normal_cdf(0.7, 0, 1) - logit_normal_cdf(0.3, 0, 1));
    return figures ? times_figure(figures, flat, t, TIME_DRAWS, tally) : 0;
}

// ----------------------------------------------------------------------
// 2. The EMA: its decay at each step, and how wide an average it keeps
//
// After k steps the average holds the weights of step j with the share
// (1 − β_j)·β_(j+1)···β_k. Their ages k − j have a mean and a spread: the
// spread over k is the average's relative width.
static void ema_width(long k, double gamma, double constant_beta, double *mean_age, double *width) {
    double s0 = 0, s1 = 0, s2 = 0, keep = 1;   // keep: the product of the β after step j
    for (long j = k; j >= 1; j--) {
        double beta_j = constant_beta > 0 ? (j == 1 ? 0 : constant_beta) : pow(1.0 - 1.0 / j, gamma + 1.0);
        double share = (1 - beta_j) * keep, age = (double)(k - j);
        s0 += share; s1 += share * age; s2 += share * age * age;
        keep *= beta_j;
    }
    *mean_age = s1 / s0;
    *width = sqrt(s2 / s0 - *mean_age * *mean_age);
}

static void the_ema(void) {
    printf("2. The EMA of the weights: beta_k = (1 - 1/k)^(gamma + 1) after AdamW step k\n\n");
    printf("   gamma of sigma_rel: 0.05 -> %.4f, 0.10 -> %.4f, 0.20 -> %.4f (the cubic's largest root)\n\n",
           ema_gamma(0.05), ema_gamma(0.10), ema_gamma(0.20));
    double gamma = ema_gamma(0.10);
    const long at[] = { 1, 2, 10, 100, 1000, 4000 };
    Table tab;
    table_init(&tab, 5, "after step k", "beta_k (0.10)", "mean age", "width (steps)", "width / k");
    for (int i = 0; i < 6; i++) {
        double mean, width;
        ema_width(at[i], gamma, 0, &mean, &width);
        table_cell(&tab, "%ld", at[i]);
        table_cell(&tab, "%.6f", pow(1.0 - 1.0 / at[i], gamma + 1.0));
        table_cell(&tab, "%.1f", mean);
        table_cell(&tab, "%.1f", width);
        table_cell(&tab, "%.4f", at[i] > 1 ? width / at[i] : 0);
    }
    table_print(&tab);
    printf("\n   a constant beta = 0.999, for comparison:\n\n");
    table_init(&tab, 4, "after step k", "mean age", "width (steps)", "width / k");
    for (int i = 2; i < 6; i++) {
        double mean, width;
        ema_width(at[i], 0, 0.999, &mean, &width);
        table_cell(&tab, "%ld", at[i]);
        table_cell(&tab, "%.1f", mean);
        table_cell(&tab, "%.1f", width);
        table_cell(&tab, "%.4f", width / at[i]);
    }
    table_print(&tab);
    printf("\n");
}

// ----------------------------------------------------------------------
// 3. Euler against Heun on a flow whose answer is known
//
// Flow matching from noise N(0, 1) to data N(mu, s²), one number per image:
// the velocity it learns is v(x, t) = mu + (x − t·mu)·(t·s² − (1 − t)) /
// ((1 − t)² + t²·s²), and following it carries x0 to mu + s·x0 exactly.
#define FLOW_MU 0.5f
#define FLOW_S 1.5f
#define FLOW_POINTS 1000
static void exact_velocity(float *v, const float *x, float t, int n) {
    float var = (1 - t) * (1 - t) + t * t * FLOW_S * FLOW_S, slope = (t * FLOW_S * FLOW_S - (1 - t)) / var;
    for (int i = 0; i < n; i++) v[i] = FLOW_MU + (x[i] - t * FLOW_MU) * slope;
}

// The largest |x(1) − (mu + s·x0)| over the points after `nfe` evaluations.
static double flow_error(const float *x0, SamplerKind sampler, int nfe) {
    static float x[FLOW_POINTS], v1[FLOW_POINTS], guess[FLOW_POINTS], v2[FLOW_POINTS];
    int steps = sampler == SAMPLER_HEUN ? nfe / 2 : nfe;
    float h = 1.0f / steps;
    memcpy(x, x0, sizeof x);
    for (int i = 0; i < steps; i++) {
        float t = (float)i / steps;
        exact_velocity(v1, x, t, FLOW_POINTS);
        if (sampler == SAMPLER_EULER) { flow_euler_step(x, v1, h, FLOW_POINTS); continue; }
        memcpy(guess, x, sizeof guess);
        flow_euler_step(guess, v1, h, FLOW_POINTS);                // the Euler guess at t + h
        exact_velocity(v2, guess, (float)(i + 1) / steps, FLOW_POINTS);
        flow_heun_step(x, v1, v2, h, FLOW_POINTS);
    }
    double worst = 0;
    for (int i = 0; i < FLOW_POINTS; i++) worst = fmax(worst, fabs(x[i] - (FLOW_MU + FLOW_S * x0[i])));
    return worst;
}

static int euler_against_heun(const char *figures, FigureTally *tally) {
    static float x0[FLOW_POINTS];
    Rng r;
    rng_seed(&r, 0);
    rng_fill_normal(&r, x0, FLOW_POINTS, 1.0f);
    printf("3. Euler against Heun, from N(0, 1) to N(%.1f, %.1f^2), where x(1) = %.1f + %.1f*x0 exactly\n\n",
           FLOW_MU, FLOW_S, FLOW_MU, FLOW_S);
    Table tab;
    table_init(&tab, 5, "model evaluations (NFE)", "Euler error", "slope", "Heun error", "slope");
    double err_e[NFE_COUNT], err_h[NFE_COUNT];
    for (int i = 0; i < NFE_COUNT; i++) {
        err_e[i] = flow_error(x0, SAMPLER_EULER, NFE_LIST[i]);
        err_h[i] = flow_error(x0, SAMPLER_HEUN, NFE_LIST[i]);
        table_cell(&tab, "%d", NFE_LIST[i]);
        table_cell(&tab, "%.2e", err_e[i]);
        table_cell(&tab, i ? "%.2f" : "", i ? log2(err_e[i - 1] / err_e[i]) : 0);
        table_cell(&tab, "%.2e", err_h[i]);
        table_cell(&tab, i ? "%.2f" : "", i ? log2(err_h[i - 1] / err_h[i]) : 0);
    }
    table_print(&tab);
    printf("\n   (slope: how many times the error halves when the evaluations double)\n\n");
    return figures ? orders_figure(figures, err_e, err_h, tally) : 0;
}

int main(int argc, char **argv) {
    Options o;
    int rc = step8_parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    if (o.nwords > 0 && !strcmp(o.words[0], "nfe")) return cmd_nfe(&o);
    if (o.nwords > 0 && !strcmp(o.words[0], "curves")) return cmd_curves(&o);
    if (o.nwords > 0 && !strcmp(o.words[0], "table")) return cmd_table(&o);
    if (o.nwords > 0 && !strcmp(o.words[0], "cost")) return cmd_cost(&o);
    FigureTally tally = {0};
    rc |= logit_normal_times(o.figures, &tally) < 0;
    the_ema();
    rc |= euler_against_heun(o.figures, &tally) < 0;
    rc |= on_the_model(&o);   // 4. the same on a trained model (nfe.c)
    if (o.figures) figure_tally_report(stdout, &tally, o.figures);
    args_print_try_it("--set t_dist=logit_normal --set ema=0.1", "(--set sampler=heun --set sample_steps=10 "
                      "scores its samples with Heun at 20 evaluations)");
    return rc;
}
