// step0_tour: step 0, a trained TinyDiT looked at part by part (docs/tinydit.md).
//
//   step0_tour/step0_tour            the tour of the shipped model
//   step0_tour/step0_tour backward   the backward pass against finite differences
//   step0_tour/step0_tour --help     the rest: another model, a test image, figures
//
// The tour loads the shipped model (checksums checked, like any checkpoint),
// sends one image through it in the order model_forward runs (patches,
// embedding, positions, time, adaLN, blocks, final layer), printing each
// part's shape and a number, then samples 8 images with 20 Euler steps. The
// image is the model's own first sample, so the tour needs no data and
// prints the same numbers every time (docs/tinydit.md quotes them; timings
// only with --time). It writes nothing unless --figures is given.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step0.h"
#include "eval/scorecard.h"
#include "io/args.h"
#include "io/bench.h"
#include "io/cifar.h"
#include "nn/flow.h"
#include "nn/layers.h"
#include "nn/rng.h"

// ---------------------------------------------------------------------------
// The tour: one image through the model, part by part. Every number is read
// from the Activations that model_forward filled, so nothing here computes
// the model a second time.
static void print_embedding(const Model *m, const Activations *a, const float *x) {
    const ModelConfig *c = &m->cfg;
    int L = cfg_tokens(c), P = cfg_patch_dim(c), D = c->dim;
    size_t per = cfg_image_floats(c);
    float *back = malloc(sizeof(float) * per);
    unpatchify(back, a->tokens, 1, c->channels, c->img, c->patch);
    printf("1. patches: x_t (1, %d, %d, %d) -> tokens (1, %d, %d): %dx%d patches of %dx%dx%d numbers\n",
           c->channels, c->img, c->img, L, P, cfg_grid(c), cfg_grid(c), c->channels, c->patch, c->patch);
    printf("   unpatchify(patchify(x_t)) == x_t: %s\n",
           memcmp(back, x, sizeof(float) * per) == 0 ? "yes, bit for bit" : "NO");
    free(back);
    printf("2. patch embedding: (1, %d, %d) -> (1, %d, %d), rms of the tokens %.3f\n",
           L, P, L, D, rms(a->resid, (size_t)L * D));
    if (c->pos == POS_LEARNED)
        printf("3. positions: learned, pos_row[r] + pos_col[c] added: both (%d, %d)\n", cfg_grid(c), D);
    else
        printf("3. positions: none added here; 2D RoPE turns q and k inside attention (step 5)\n");
    printf("4. time: t = %.2f -> sinusoidal features (1, %d) -> t_fc1, SiLU, t_fc2 -> c (1, %d), rms %.3f\n",
           TOUR_T, c->freq_dim, D, rms(a->c, (size_t)D));
}

// A block's ada row as ada_chunks names it (common/nn/model.h), in the
// row's order: the chunks the model has (the gates only with ada=zero).
static int ada_parts(const ModelConfig *c, float *ada, const float *part[6], const char *name[6]) {
    AdaChunks ch = ada_chunks(c, ada);
    const float *all[6] = { ch.shift_a, ch.scale_a, ch.gate_a, ch.shift_m, ch.scale_m, ch.gate_m };
    static const char *const names[6] = { "shift_a", "scale_a", "gate_a", "shift_m", "scale_m", "gate_m" };
    int n = 0;
    for (int k = 0; k < 6; k++)
        if (all[k]) { part[n] = all[k]; name[n++] = names[k]; }
    return n;
}

static void print_blocks(const Model *m, const Activations *a) {
    const ModelConfig *c = &m->cfg;
    int L = cfg_tokens(c), D = c->dim;
    size_t LD = (size_t)L * D;
    const float *part[6];
    const char *name[6];
    int chunks = ada_parts(c, a->ada[0], part, name);
    printf("5. adaLN: each block's ada Linear turns SiLU(c) (1, %d) into (1, %d):\n   ", D, chunks * D);
    for (int k = 0; k < chunks; k++) printf("%s%s", name[k], k + 1 < chunks ? ", " : "; mean |value| of each\n");
    for (int b = 0; b < c->depth; b++) {
        printf("   block %d:", b);
        ada_parts(c, a->ada[b], part, name);
        for (int k = 0; k < chunks; k++) printf(" %.3f", mean_abs(part[k], D));
        printf("\n");
    }
    printf("6. blocks: the residual stream (1, %d, %d), rms after each half\n", L, D);
    printf("   input %.3f\n", rms(a->resid, LD));
    for (int b = 0; b < c->depth; b++)
        printf("   block %d: after attention %.3f, after the MLP %.3f\n", b,
               rms(a->resid + (2 * (size_t)b + 1) * LD, LD), rms(a->resid + (2 * (size_t)b + 2) * LD, LD));
}

static void print_output(const Model *m, const Activations *a, const float *x0, const float *x1,
                         const float *xt) {
    const ModelConfig *c = &m->cfg;
    size_t per = cfg_image_floats(c);
    float *target = calloc(per, sizeof(float)), *guess = calloc(per, sizeof(float));
    for (size_t i = 0; i < per; i++) {
        target[i] = x1[i] - x0[i];
        guess[i] = xt[i] + (1.0f - TOUR_T) * a->v[i];     // one Euler step of 1 - t to t = 1
    }
    printf("7. final layer: norm, modulate (ada_f), head -> (1, %d, %d) -> unpatchify -> v (1, %d, %d, %d)\n",
           cfg_tokens(c), cfg_patch_dim(c), c->channels, c->img, c->img);
    printf("8. flow matching: target x1 - x0, rms %.3f; v, rms %.3f; loss mean((v - target)^2) = %.4f\n",
           rms(target, per), rms(a->v, per), mse(a->v, target, per));
    printf("   the image itself: x_t is %.4f from it (mse), x_t + (1 - t)·v is %.4f\n",
           mse(xt, x1, per), mse(guess, x1, per));
    free(target); free(guess);
}

static void tour(Model *m, const float *x1) {
    const ModelConfig *c = &m->cfg;
    size_t per = cfg_image_floats(c);
    float *x0 = malloc(sizeof(float) * per), *xt = malloc(sizeof(float) * per);
    Rng r;
    rng_seed(&r, TOUR_NOISE_SEED);
    rng_fill_normal(&r, x0, (long)per, 1.0f);
    noised(xt, x0, x1, TOUR_T, per);
    Activations a;
    activations_alloc(&a, m, 1, false);
    float t = TOUR_T;
    model_forward(m, &a, xt, &t, NULL);
    print_embedding(m, &a, xt);
    print_blocks(m, &a);
    print_output(m, &a, x0, x1, xt);
    activations_free(&a);
    free(x0); free(xt);
}

// 8 samples from the scorecard's noise (FD_SEED), timed if asked; then the
// same walk written out, which must land on the same images.
static void sample_and_check(Model *m, int timed) {
    int n = 8;
    size_t per = cfg_image_floats(&m->cfg);
    float *x = malloc(sizeof(float) * per * n), *y = malloc(sizeof(float) * per * n), *last = malloc(sizeof(float) * per * n);
    double t0 = wall_seconds();
    scorecard_samples(m, x, n, EULER_STEPS);
    double secs = wall_seconds() - t0;
    Rng r;
    rng_seed(&r, FD_SEED);
    rng_fill_normal(&r, y, (long)(per * n), 1.0f);
    int at[1] = { EULER_STEPS };
    euler_walk(m, y, n, EULER_STEPS, at, 1, last);
    float worst = 0;
    int finite = 1;
    for (size_t j = 0; j < per * n; j++) {
        finite &= isfinite(x[j]) != 0;
        float d = fabsf(x[j] - last[j]);
        if (d > worst) worst = d;
    }
    printf("9. Euler sampler: %d samples x %d steps; rms %.3f, all finite: %s\n"
           "   the walk written out step by step lands %g from flow_sample's images\n",
           n, EULER_STEPS, rms(x, per * n), finite ? "yes" : "NO", worst);
    if (timed) printf("   (--time: the %d samples took %.2f s)\n", n, secs);
    free(x); free(y); free(last);
}

int main(int argc, char **argv) {
    Options o;
    int rc = step0_parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    if (o.nwords == 1 && strcmp(o.words[0], "gates") == 0) return gate_grads(&o);
    if (o.nwords == 1) return backward_check(&o);                    // `backward`
    if (o.nwords) return export_weights(o.words[1], o.words[2]);   // `export RUN_CKPT OUT`
    if (o.threads > 0) omp_set_num_threads(o.threads);
    Model m;
    CifarSet test = {0};
    if (load_tour(&o, &m, &test) != 0) return 1;
    size_t per = cfg_image_floats(&m.cfg);
    float *x1 = malloc(sizeof(float) * per);
    if (o.test_image) cifar_range_to_float(&test, 0, 1, x1);
    else scorecard_samples(&m, x1, 1, EULER_STEPS);   // the model's own first sample
    printf("\nthe tour: %s, noised to t = %.2f (noise seed %llu)\n",
           o.test_image ? "CIFAR-10 test image 0" : "the model's first sample (20 Euler steps)",
           TOUR_T, (unsigned long long)TOUR_NOISE_SEED);
    tour(&m, x1);
    sample_and_check(&m, o.timed);
    if (o.val_mse)
        printf("10. val MSE on the first %d test images: %.4f\n", VAL_IMAGES,
               scorecard_val_mse(&m, &test, VAL_IMAGES));
    rc = o.figures ? draw_figures(&m, &test, o.figures) : 0;
    free(x1);
    cifar_free(&test);
    model_free(&m);
    return rc;
}
