// step7_guidance: the model follows instructions (docs/step7_guidance.md).
//
// A class-conditional TinyDiT (--set classes=10) adds one learned row per
// label to the condition c that every adaLN reads, and one row more: the
// null label, which stands for "no label". Training replaces each image's
// label by the null label with probability label_drop, so one network
// learns both the conditional velocity v(x, t, y) and the unconditional one
// v(x, t, null). Sampling mixes the two, classifier-free guidance:
//
//     v = v(null) + w·(v(y) − v(null))
//
// w = 0 is the unconditional model, w = 1 the conditional one, w > 1 pushes
// past it, toward what the label asks for. main() prints a section per idea,
// in the page's order; `sweep` (sweep.c) and `curves` (figures.c) score checkpoints.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step7.h"
#include "eval/probe.h"
#include "io/bench.h"
#include "io/checkpoint.h"
#include "io/run_config.h"
#include "nn/errors.h"
#include "nn/rng.h"
#include "nn/train_step.h"
#include "train/trainer.h"   // run_train_state_init

static const char *label_name(const Model *m, int y) { return y == cfg_null_label(&m->cfg) ? "null" : CIFAR_CLASS[y]; }

// ----------------------------------------------------------------------
// 1. The label table: one row per class, and one more for "no label"
static void the_label_table(const Model *m) {
    const int K = m->cfg.classes, D = m->cfg.dim, null = cfg_null_label(&m->cfg);
    printf("1. The label table: y_embed.weight (%d, %d), a row per class and row %d the null label\n\n", K + 1, D, null);
    Table t;
    table_init(&t, 4, "row", "label", "first 4 numbers", "rms");
    for (int y = 0; y <= K; y++) {
        if (y >= 2 && y < K - 1) continue;   // rows 2 .. K-2 look alike
        const float *row = m->p.y_embed + (size_t)y * D;
        table_cell(&t, "%d", y);
        table_cell(&t, "%s", label_name(m, y));
        table_cell(&t, "%+.4f %+.4f %+.4f %+.4f", row[0], row[1], row[2], row[3]);
        table_cell(&t, "%.4f", rms(row, D));
    }
    table_print(&t);
    printf("\n   (the model's parameters: %zu with the table, %zu without; the table is a lookup,\n"
           "   never multiplied: an image reads one row)\n\n", m->n_params, m->n_params - (size_t)(K + 1) * D);
}

// ----------------------------------------------------------------------
// 2. The condition: c = time embedding + y_embed[y]. Three images, same
//    x and t, labels cat, dog and null: c differs by the rows' difference.
static void the_condition(Model *m) {
    const int null = cfg_null_label(&m->cfg), D = m->cfg.dim;
    size_t per = cfg_image_floats(&m->cfg);
    enum { N = 3 };
    const int y[N] = { 3, 5, null };
    Activations a;
    one_x_forward(m, &a, N, y);
    printf("2. The condition: c = time embedding(t) + y_embed[y], for one x at t = 0.5 and three labels\n\n");
    Table tab;
    table_init(&tab, 3, "label y", "c - c(null) - (y_embed[y] - y_embed[null]), max", "v - v(null), rms");
    for (int n = 0; n < N; n++) {
        double off = 0;
        for (int i = 0; i < D; i++) {
            double want = m->p.y_embed[(size_t)y[n] * D + i] - m->p.y_embed[(size_t)null * D + i];
            off = fmax(off, fabs(a.c[(size_t)n * D + i] - a.c[(size_t)2 * D + i] - want));
        }
        float *dv = malloc(sizeof(float) * per);
        for (size_t i = 0; i < per; i++) dv[i] = a.v[per * n + i] - a.v[per * 2 + i];
        table_cell(&tab, "%d (%s)", y[n], label_name(m, y[n]));
        table_cell(&tab, "%.1e", off);
        table_cell(&tab, "%.5f", rms(dv, per));
        free(dv);
    }
    table_print(&tab);
    printf("\n   (the label moves c, and through every adaLN the velocity; the null label is a row like\n"
           "   the others, learned from the images whose label was dropped)\n\n");
    activations_free(&a);
}

// ----------------------------------------------------------------------
// 3. Label dropout: train_step draws, after each step's noise and times,
//    one uniform number per image from the run's stream; below label_drop
//    the label becomes the null label.
static void label_dropout(Model *m) {
    enum { B = 20, STEPS = 3, COUNT_STEPS = 50 };
    const int K = m->cfg.classes, null = cfg_null_label(&m->cfg);
    size_t per = cfg_image_floats(&m->cfg);
    const RunConfig run = run_config_default();
    TrainState s;
    float *x1 = malloc(sizeof(float) * per * B);
    int y[B], first[B], dropped = 0;
    Rng data, rng;
    rng_seed(&data, 1);
    rng_fill_uniform(&data, x1, (long)(per * B), -1.0f, 1.0f);   // made-up images: the labels are the point
    for (int n = 0; n < B; n++) y[n] = n % K;
    if (run_train_state_init(&s, m, B, &run) != 0) fprintf(stderr, "error: out of memory\n"), exit(1);
    printf("3. Label dropout: label_drop = %g, one draw per image from the run's stream (seed 0)\n\n", run.label_drop);
    printf("   the batch's labels:  ");
    for (int n = 0; n < B; n++) printf(n < B - 1 ? " %d" : " %d\n", y[n]);
    rng_seed(&rng, 0);
    for (int k = 1; k <= COUNT_STEPS; k++) {
        train_step(&s, x1, y, &rng);
        for (int n = 0; n < B; n++) dropped += s.y[n] == null;
        if (k == 1) memcpy(first, s.y, sizeof first);
        if (k > STEPS) continue;
        printf("   after step %d's draw:", k);
        for (int n = 0; n < B; n++) s.y[n] == null ? printf(" -") : printf(" %d", s.y[n]);
        printf("\n");
    }
    // the same seed again: the same noise, times and drops (a resumed run is the same run)
    rng_seed(&rng, 0);
    train_step(&s, x1, y, &rng);
    printf("\n   (- is the null label %d; over %d steps %d of %d labels were dropped, %.3f;\n"
           "   seed 0 again drops the same labels at step 1: %s)\n\n", null, COUNT_STEPS, dropped, COUNT_STEPS * B,
           (double)dropped / (COUNT_STEPS * B), memcmp(first, s.y, sizeof first) == 0 ? "yes" : "NO");
    train_state_free(&s);
    free(x1);
}

// ----------------------------------------------------------------------
// 4. The guided velocity, on the shipped class-conditional model: one batch [x | x] with
//    labels [null | cat] gives both velocities; w mixes them.
static void the_guided_velocity(Model *m) {
    const int y = 3, labels[2] = { cfg_null_label(&m->cfg), y };
    size_t per = cfg_image_floats(&m->cfg);
    float *v = malloc(sizeof(float) * per), *push = malloc(sizeof(float) * per);
    Activations a;
    one_x_forward(m, &a, 2, labels);   // a.v: v(null), then v(cat)
    for (size_t i = 0; i < per; i++) push[i] = a.v[per + i] - a.v[i];
    double step = rms(push, per);
    printf("4. The guided velocity on the shipped class-conditional model: one noise image at t = 0.5, label %d (%s)\n\n", y,
           CIFAR_CLASS[y]);
    Table tab;
    table_init(&tab, 4, "w", "rms of v", "rms of v - v(null)", "/ rms of v(y) - v(null)");
    const float ws[] = { 0, 1, 2, 4 };
    for (int k = 0; k < 4; k++) {
        flow_guided_velocity(v, a.v, ws[k], per);
        for (size_t i = 0; i < per; i++) push[i] = v[i] - a.v[i];
        table_cell(&tab, "%g", ws[k]);
        table_cell(&tab, "%.4f", rms(v, per));
        table_cell(&tab, "%.4f", rms(push, per));
        table_cell(&tab, "%.4f", rms(push, per) / step);
    }
    table_print(&tab);
    printf("\n   (w scales the label's push; at w != 1 each Euler step runs the model on twice the\n"
           "   images: flow_guided_rows(8, 2) = %d, flow_guided_rows(8, 1) = %d)\n\n",
           flow_guided_rows(8, 2.0f), flow_guided_rows(8, 1.0f));
    activations_free(&a);
    free(v); free(push);
}

// ----------------------------------------------------------------------
// 5. The grid: a sample of every class at every w in GRID_W, from the same
//    noise along each row, and the class the probe classifier sees in it.
static int the_grid(Model *m, const char *figures) {
    char err[ERRLEN];
    float *grid = malloc(sizeof(float) * cfg_image_floats(&m->cfg) * 10 * GRID_W_COUNT);
    uint8_t seen[10 * GRID_W_COUNT];   // the class the probe sees in each sample
    int rc = grid ? grid_samples(m, grid, err, sizeof err) : errorf(err, sizeof err, "out of memory");
    if (rc == 0 && (rc = grid_probe_classes(grid, seen, err, sizeof err)) == 0) {
        printf("5. A sample of each class at each w (%d Euler steps, one noise image a row), and the class\n"
               "   the probe classifier sees in it (%s)\n\n", GRID_STEPS, PROBE_SHIPPED);
        grid_table_print(seen);
        printf("\n   (ten samples a column say little: `sweep` scores 1,000 a w)\n\n");
    }
    if (rc == 0 && figures) rc = grid_write_png(figures, grid, m->cfg.channels, m->cfg.img, err, sizeof err);
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    free(grid);
    return rc != 0;
}

int main(int argc, char **argv) {
    Options o;
    int rc = step7_parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    if (o.nwords > 0) return !strcmp(o.words[0], "sweep") ? cmd_sweep(&o) : cmd_curves(&o);   // the options' words
    Model small;
    small_model(&small);
    the_label_table(&small);
    the_condition(&small);
    label_dropout(&small);
    model_free(&small);
    char err[ERRLEN];
    Model m;
    int ema = load_guided(o.model, o.model_name, &m, err, sizeof err);
    if (ema == 0) ema = checkpoint_use_ema(o.model, &m, err, sizeof err);   // its EMA's weights, when it has one
    if (ema < 0) return fprintf(stderr, "error: %s\n", err), model_free(&m), 1;
    printf("The shipped class-conditional model: %s (checksums verified), %zu parameters%s\n\n", o.model_name,
           m.n_params, ema == 0 ? ", their EMA" : "");
    the_guided_velocity(&m);
    rc = the_grid(&m, o.figures);
    model_free(&m);
    args_print_try_it("--set classes=10", "(--set guidance=W scores its samples at W; `step7_guidance sweep --model "
                      "RUN/ckpt.safetensors`\n         scores a checkpoint at many w, no retraining)");
    return rc;
}
