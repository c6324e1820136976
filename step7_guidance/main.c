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
// past it, toward what the label asks for. main() prints one section per
// idea: the label table, the null label in the condition, label dropout
// (on a small model), then the guided velocity and a grid of samples (on
// the shipped class-conditional model). `sweep` scores a checkpoint at many
// w (sweep.c), `curves` draws the sweeps (figures.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step7.h"
#include "eval/probe.h"
#include "io/bench.h"
#include "io/checkpoint.h"
#include "io/config_parse.h"
#include "io/paths.h"
#include "nn/flow.h"
#include "nn/layers.h"
#include "nn/rng.h"
#include "nn/train_step.h"

// The small model of sections 1-3: the tutorial's, narrower and shallower.
static void small_model(Model *m) {
    Config c = config_default();
    const char *sets[] = { "classes=10", "dim=32", "depth=1", "heads=2" };
    char err[ERRLEN];
    if (config_apply(&c, sets, 4, err, sizeof err) != 0 || model_build(m, &c.model, err, sizeof err) != 0)
        fprintf(stderr, "error: %s\n", err), exit(1);
    model_init_weights(m, 0);
}

static const char *label_name(int y, int classes) { return y == classes ? "null" : CIFAR_CLASS[y]; }

// ----------------------------------------------------------------------
// 1. The label table: one row per class, and one more for "no label"
static void the_label_table(const Model *m) {
    const int K = m->cfg.classes, D = m->cfg.dim;
    printf("1. The label table: y_embed.weight (%d, %d), a row per class and row %d the null label\n\n", K + 1, D, K);
    Table t;
    table_init(&t, 4, "row", "label", "first 4 numbers", "rms");
    for (int y = 0; y <= K; y++) {
        if (y >= 2 && y < K - 1) continue;   // rows 2 .. K-2 look alike
        const float *row = m->p.y_embed + (size_t)y * D;
        table_cell(&t, "%d", y);
        table_cell(&t, "%s", label_name(y, K));
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
    const int K = m->cfg.classes, D = m->cfg.dim;
    size_t per = (size_t)m->cfg.channels * m->cfg.img * m->cfg.img;
    enum { N = 3 };
    const int y[N] = { 3, 5, K };
    float *x = malloc(sizeof(float) * per * N), t[N] = { 0.5f, 0.5f, 0.5f };
    Rng r;
    rng_seed(&r, 7);
    rng_fill_normal(&r, x, (long)per, 1.0f);
    for (int n = 1; n < N; n++) memcpy(x + per * n, x, sizeof(float) * per);
    Activations a;
    activations_alloc(&a, m, N, false);
    model_forward(m, &a, x, t, y);
    printf("2. The condition: c = time embedding(t) + y_embed[y], for one x at t = 0.5 and three labels\n\n");
    Table tab;
    table_init(&tab, 3, "label y", "c - c(null) - (y_embed[y] - y_embed[null]), max", "v - v(null), rms");
    for (int n = 0; n < N; n++) {
        double off = 0;
        for (int i = 0; i < D; i++) {
            double want = m->p.y_embed[(size_t)y[n] * D + i] - m->p.y_embed[(size_t)K * D + i];
            off = fmax(off, fabs(a.c[(size_t)n * D + i] - a.c[(size_t)2 * D + i] - want));
        }
        float *dv = malloc(sizeof(float) * per);
        for (size_t i = 0; i < per; i++) dv[i] = a.v[per * n + i] - a.v[per * 2 + i];
        table_cell(&tab, "%d (%s)", y[n], label_name(y[n], K));
        table_cell(&tab, "%.1e", off);
        table_cell(&tab, "%.5f", rms(dv, per));
        free(dv);
    }
    table_print(&tab);
    printf("\n   (the label moves c, and through every adaLN the velocity; the null label is a row like\n"
           "   the others, learned from the images whose label was dropped)\n\n");
    activations_free(&a);
    free(x);
}

// ----------------------------------------------------------------------
// 3. Label dropout: train_step draws, after each step's noise and times,
//    one uniform number per image from the run's stream; below label_drop
//    the label becomes the null label.
static void label_dropout(Model *m) {
    enum { B = 20, STEPS = 3, COUNT_STEPS = 50 };
    const int K = m->cfg.classes;
    size_t per = (size_t)m->cfg.channels * m->cfg.img * m->cfg.img;
    const RunConfig run = run_config_default();
    AdamWConfig opt = adamw_default(run.lr);
    TrainState s;
    float *x1 = malloc(sizeof(float) * per * B);
    int y[B];
    Rng data, rng;
    rng_seed(&data, 1);
    rng_fill_uniform(&data, x1, (long)(per * B), -1.0f, 1.0f);   // made-up images: the labels are the point
    for (int n = 0; n < B; n++) y[n] = n % K;
    StepRecipe recipe = run_step_recipe(&run);
    if (train_state_init(&s, m, B, &opt, &recipe) != 0) fprintf(stderr, "error: out of memory\n"), exit(1);
    printf("3. Label dropout: label_drop = %g, one draw per image from the run's stream (seed 0)\n\n",
           run.label_drop);
    printf("   the batch's labels:  ");
    for (int n = 0; n < B; n++) printf(" %d", y[n]);
    printf("\n");
    rng_seed(&rng, 0);
    int first[B], dropped = 0;
    for (int k = 1; k <= COUNT_STEPS; k++) {
        train_step(&s, x1, y, &rng);
        for (int n = 0; n < B; n++) dropped += s.y[n] == K;
        if (k == 1) memcpy(first, s.y, sizeof first);
        if (k > STEPS) continue;
        printf("   after step %d's draw:", k);
        for (int n = 0; n < B; n++) s.y[n] == K ? printf(" -") : printf(" %d", s.y[n]);
        printf("\n");
    }
    // the same seed again: the same noise, times and drops (a resumed run is the same run)
    rng_seed(&rng, 0);
    train_step(&s, x1, y, &rng);
    printf("\n   (- is the null label %d; over %d steps %d of %d labels were dropped, %.3f;\n"
           "   seed 0 again drops the same labels at step 1: %s)\n\n", K, COUNT_STEPS, dropped, COUNT_STEPS * B,
           (double)dropped / (COUNT_STEPS * B), memcmp(first, s.y, sizeof first) == 0 ? "yes" : "NO");
    train_state_free(&s);
    free(x1);
}

// ----------------------------------------------------------------------
// 4. The guided velocity, on the shipped class-conditional model: one batch [x | x] with
//    labels [null | cat] gives both velocities; w mixes them.
static void the_guided_velocity(Model *m) {
    const int K = m->cfg.classes, y = 3;
    size_t per = (size_t)m->cfg.channels * m->cfg.img * m->cfg.img;
    float *x = malloc(sizeof(float) * per * 2), t[2] = { 0.5f, 0.5f }, *v = malloc(sizeof(float) * per);
    float *push = malloc(sizeof(float) * per);
    Rng r;
    rng_seed(&r, 7);
    rng_fill_normal(&r, x, (long)per, 1.0f);
    memcpy(x + per, x, sizeof(float) * per);
    const int labels[2] = { K, y };
    Activations a;
    activations_alloc(&a, m, 2, false);
    model_forward(m, &a, x, t, labels);   // a.v: v(null), then v(cat)
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
    free(x); free(v); free(push);
}

// ----------------------------------------------------------------------
// 5. The grid: a sample of every class at every w in GRID_W, from the same
//    noise along each row, and the class the probe classifier sees in it.
static int the_grid(Model *m, const char *figures) {
    char err[ERRLEN], path[4096];
    const int K = 10, C = m->cfg.channels, S = m->cfg.img;
    size_t per = (size_t)C * S * S;
    float *grid = malloc(sizeof(float) * per * K * GRID_W_COUNT);
    Probe *probe = NULL;
    project_path(path, sizeof path, PROBE_SHIPPED);
    if (!grid || grid_samples(m, grid, err, sizeof err) != 0 || !(probe = probe_load(path, err, sizeof err))) {
        fprintf(stderr, "error: %s\n", grid ? err : "out of memory");
        free(grid);
        return 1;
    }
    uint8_t seen[10 * GRID_W_COUNT];
    probe_predict(probe, grid, K * GRID_W_COUNT, seen);
    printf("5. A sample of each class at each w (%d Euler steps, one noise image a row), and the class\n"
           "   the probe classifier sees in it (%s)\n\n", GRID_STEPS, PROBE_SHIPPED);
    Table tab;
    table_init(&tab, 1 + GRID_W_COUNT, "asked for", "w = 0", "w = 1", "w = 2", "w = 4", "w = 6");
    int right[GRID_W_COUNT] = {0};
    for (int y = 0; y < K; y++) {
        table_cell(&tab, "%s", CIFAR_CLASS[y]);
        for (int k = 0; k < GRID_W_COUNT; k++) {
            int c = seen[y * GRID_W_COUNT + k];
            right[k] += c == y;
            table_cell(&tab, "%s%s", CIFAR_CLASS[c], c == y ? " *" : "");
        }
    }
    table_cell(&tab, "right (*)");
    for (int k = 0; k < GRID_W_COUNT; k++) table_cell(&tab, "%d of %d", right[k], K);
    table_print(&tab);
    printf("\n   (ten samples a column say little: `sweep` scores 1,000 a w)\n\n");
    int rc = 0;
    if (figures) {
        if (grid_write_png(figures, grid, C, S, err, sizeof err) != 0) fprintf(stderr, "error: %s\n", err), rc = 1;
        else printf("figure: %s/step7_grid.png (rows: the classes in label order; columns: w = 0, 1, 2, 4, 6)\n\n",
                    figures);
    }
    probe_free(probe);
    free(grid);
    return rc;
}

int main(int argc, char **argv) {
    Options o;
    int rc = step7_parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    if (o.nwords > 0 && !strcmp(o.words[0], "sweep")) return cmd_sweep(&o);
    if (o.nwords > 0 && !strcmp(o.words[0], "curves")) return cmd_curves(&o);
    Model small;
    small_model(&small);
    the_label_table(&small);
    the_condition(&small);
    label_dropout(&small);
    model_free(&small);

    char err[ERRLEN];
    Model m;
    if (checkpoint_load(o.model, &m, NULL, err, sizeof err) != 0) return fprintf(stderr, "error: %s\n", err), 1;
    if (m.cfg.classes != 10) {
        fprintf(stderr, "error: %s: classes=%d, not a CIFAR-10 class-conditional model (classes=10)\n",
                o.model_name, m.cfg.classes);
        model_free(&m);
        return 1;
    }
    int ema = checkpoint_use_ema(o.model, &m, err, sizeof err);   // its EMA's weights, when it has one
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
