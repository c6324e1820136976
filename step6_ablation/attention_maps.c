// attention_maps.c: where trained models look. For a model with learned
// position tables (p11_base_s0) and one with 2D RoPE (p11_rope), loaded from
// their checkpoints, one forward pass on a batch of noised test images at a
// fixed time t; the softmax probabilities of every layer, averaged over the
// images and the heads, give two pictures per layer:
//   offsets  the attention a query gives to the key dx columns and dy rows
//            away, averaged over every query that has such a key: the
//            model's habit, wherever the query sits;
//   centre   the attention of one query, the patch at the grid's centre,
//            over the whole grid.
// Both in units of uniform attention (1/L): 1 is "no preference", 4 is four
// times the even share. A table prints, per layer, the share a query keeps
// for itself and the mean distance to what it attends to.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attention_maps.h"
#include "io/args.h"
#include "io/checkpoint.h"
#include "nn/errors.h"
#include "io/cifar.h"
#include "io/figure.h"
#include "io/bench.h"
#include "io/paths.h"
#include "nn/flow.h"

// Per layer, from a forward pass: the maps (in units of 1/L) and two numbers.
void attention_maps_compute(const Model *m, const Activations *a, AttentionMaps *out) {
    const ModelConfig *c = &m->cfg;
    int g = cfg_grid(c), L = cfg_tokens(c), H = c->heads, N = a->N, W = 2 * g - 1;
    memset(out, 0, sizeof *out);
    out->depth = c->depth;
    out->grid = g;
    int centre = (g / 2) * g + g / 2;
    for (int l = 0; l < c->depth && l < ATT_MAX_LAYERS; l++) {
        const float *att = a->att[l].att;               // (N, H, L, L) softmax probabilities
        double sum[ATT_MAX_OFFSETS] = {0}, self = 0, dist = 0;
        int count[ATT_MAX_OFFSETS] = {0};
        for (int q = 0; q < L; q++) {
            int qr = q / g, qc = q % g;
            for (int k = 0; k < L; k++) {
                int kr = k / g, kc = k % g;
                double p = 0;                           // mean over images and heads
                for (int nh = 0; nh < N * H; nh++) p += att[((size_t)nh * L + q) * L + k];
                p /= (double)N * H;
                int o = (kr - qr + g - 1) * W + (kc - qc + g - 1);
                sum[o] += p;
                count[o]++;
                if (q == k) self += p;
                dist += p * hypot(kr - qr, kc - qc);
                if (q == centre) out->centre[l][k] = (float)(p * L);
            }
        }
        for (int o = 0; o < W * W; o++) out->offsets[l][o] = (float)(sum[o] / count[o] * L);
        out->self[l] = self / L;
        out->distance[l] = dist / L;
    }
    // the mean distance between a query and a key when attention is even
    double even = 0;
    for (int q = 0; q < L; q++)
        for (int k = 0; k < L; k++) even += hypot(k / g - q / g, k % g - q % g);
    out->uniform_distance = even / ((double)L * L);
}

// ---------------------------------------------------------------------------
// The two runs compared, the images and their time: fixed, so that every
// picture of them (docs/figures, results/*/plots) shows the same thing.
static const char *const MAPPED_RUNS[2] = { "p11_base_s0", "p11_rope" };   // learned positions, 2D RoPE
#define MAPS_IMAGES 64
#define MAPS_TIME 0.5

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h; argv[0] is the command).
static int parse_maps_options(int argc, char **argv, const char **runs, const char **out) {
    *runs = default_runs_dir();
    *out = NULL;
    const ArgOption opts[] = {
        ARG_FOLDER("runs", "DIR", runs, "the folder of the runs"),
        ARG_FOLDER("out", "DIR", out, "where the figures go (default DIR/plots)"),
        ARG_END,
    };
    const ArgSpec spec = {
        .program = "step6_ablation attention-maps", .options = opts,
        .about = "  loads DIR/NAME/ckpt.safetensors of p11_base_s0 (learned positions) and p11_rope\n"
                 "  (2D RoPE), runs each on the first 64 test images noised to t = 0.5 (noise from a\n"
                 "  fixed seed), and writes the mean attention of every layer: step6_attention_offsets\n"
                 "  (a query's attention by row and column offset, over all queries) and\n"
                 "  step6_attention_centre (the centre patch's attention over the grid), .tsv, .gp and .png",
    };
    return args_parse(&spec, argc, argv);
}

// The batch: the first n test images x1, noise x0 from a fixed seed, and
// x_t = (1 - t) x0 + t x1 at one t for all. 0, or -1 with a message.
static int noised_images(int n, double t, float *xt, float *tvec, char *err, size_t errlen) {
    CifarSet test;
    if (cifar_load_test(NULL, &test, err, errlen) != 0) return -1;
    if (test.n < n) n = test.n;
    size_t per = 3 * 32 * 32;
    float *x1 = malloc(sizeof(float) * per * n), *x0 = malloc(sizeof(float) * per * n),
          *target = malloc(sizeof(float) * per * n);
    if (!x1 || !x0 || !target) { free(x1); free(x0); free(target); cifar_free(&test); return errorf(err, errlen, "out of memory"); }
    for (int i = 0; i < n; i++) {
        cifar_image_to_float(test.pixels + (size_t)i * per, 0, x1 + (size_t)i * per);
        tvec[i] = (float)t;
    }
    Rng r;
    rng_seed(&r, 2024);
    rng_fill_normal(&r, x0, (long)(per * n), 1.0f);
    flow_interpolate(xt, target, x1, x0, tvec, n, per);
    free(x1); free(x0); free(target);
    cifar_free(&test);
    return 0;
}

// One run: its checkpoint, a forward pass, the maps. 0, or -1 with a message.
static int run_maps(const char *dir, const char *name, const float *xt, const float *tvec, int n,
                    AttentionMaps *maps, ModelConfig *cfg, char *err, size_t errlen) {
    char path[2200];
    snprintf(path, sizeof path, "%s/%s/ckpt.safetensors", dir, name);
    Model m;
    if (checkpoint_load(path, &m, NULL, err, errlen) != 0) return -1;
    *cfg = m.cfg;
    Activations a;
    if (m.cfg.img != 32 || m.cfg.channels != 3 || cfg_grid(&m.cfg) > ATT_MAX_GRID || m.cfg.depth > ATT_MAX_LAYERS) {
        model_free(&m);
        return errorf(err, errlen, "%s: a %dx%d grid of depth %d is not a CIFAR-10 model this command can map",
                      path, cfg_grid(cfg), cfg_grid(cfg), cfg->depth);
    }
    if (activations_alloc(&a, &m, n, true) != 0) { model_free(&m); return errorf(err, errlen, "out of memory"); }
    model_forward(&m, &a, xt, tvec, NULL);
    attention_maps_compute(&m, &a, maps);
    activations_free(&a);
    model_free(&m);
    return 0;
}

// ---------------------------------------------------------------------------
// The text: per layer, the share a query keeps for itself and how far it looks.
static void print_maps_table(const char *labels[2], const AttentionMaps maps[2], const ModelConfig cfgs[2]) {
    Table t;
    table_init(&t, 5, "model", "layer", "to itself (x even)", "mean distance (patches)", "even attention's");
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < maps[k].depth; l++) {
            int L = cfg_tokens(&cfgs[k]);
            table_cell(&t, "%s", l == 0 ? labels[k] : "");
            table_cell(&t, "%d", l + 1);
            table_cell(&t, "%.2f", maps[k].self[l] * L);
            table_cell(&t, "%.2f", maps[k].distance[l]);
            table_cell(&t, "%.2f", maps[k].uniform_distance);
        }
    table_print(&t);
    printf("\"to itself\": the attention a patch gives its own key, in units of the even share 1/L;\n"
           "\"mean distance\": the distance (in patches) to the keys, weighted by attention; with even\n"
           "attention it would be the last column.\n");
}

// The maps as gnuplot data blocks: model k, layer l is block k * depth + l.
static int write_maps_data(const char *dir, const char *name, const AttentionMaps maps[2], bool offsets,
                           float *lo, float *hi, char *err, size_t errlen) {
    FILE *f = figure_data_open(dir, name, err, errlen);
    if (!f) return -1;
    *lo = INFINITY;
    *hi = 0;
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < maps[k].depth; l++) {
            int g = maps[k].grid, W = offsets ? 2 * g - 1 : g;
            fprintf(f, "# %s, layer %d: %s, attention in units of 1/L\n", k ? "2D RoPE" : "learned positions", l + 1,
                    offsets ? "column offset, row offset" : "column, row of the key");
            for (int y = 0; y < W; y++) {
                for (int x = 0; x < W; x++) {
                    float v = offsets ? maps[k].offsets[l][y * W + x] : maps[k].centre[l][y * W + x];
                    if (v < *lo) *lo = v;
                    if (v > *hi) *hi = v;
                    fprintf(f, "%d\t%d\t%.5f\n", offsets ? x - (g - 1) : x, offsets ? y - (g - 1) : y, v);
                }
                fprintf(f, "\n");
            }
            fprintf(f, "\n");               // blocks end in two blank lines
        }
    return figure_data_close(f, dir, name, err, errlen);
}

// Writes the maps' data and draws them with step6_ablation/plots/step6_attention_maps.gp:
// figure_plot's answers (0 drawn, FIGURE_NO_GNUPLOT, or -1 with a message in err).
static int draw_maps(const char *dir, const char *name, const char *labels[2], const AttentionMaps maps[2],
                     bool offsets, double t, char *err, size_t errlen) {
    float lo, hi;
    if (write_maps_data(dir, name, maps, offsets, &lo, &hi, err, errlen) != 0) return -1;
    if (!(lo > 0)) lo = 1e-3f;
    int depth = maps[0].depth > maps[1].depth ? maps[0].depth : maps[1].depth;
    char vars[1024];
    snprintf(vars, sizeof vars, "tsv = '%s'\noffsets = %d\ng = %d\ndepth1 = %d\ndepth2 = %d\nt = %.2f\n"
             "lo = %.4g\nhi = %.4g\nlabel1 = '%s'\nlabel2 = '%s'", name, offsets, maps[0].grid, maps[0].depth,
             maps[1].depth, t, lo, hi, labels[0], labels[1]);
    int width = 360 * depth + 120 > 900 ? 360 * depth + 120 : 900;
    return figure_plot_script(dir, "step6_ablation/plots/step6_attention_maps.gp", name, width, 800, vars, err, errlen);
}

int cmd_attention_maps(int argc, char **argv) {
    const char *runs, *out_option;
    int rc = parse_maps_options(argc, argv, &runs, &out_option);
    if (rc != ARGS_OK) return args_exit_code(rc);
    char out[2100], err[2400];
    if (out_option) snprintf(out, sizeof out, "%s", out_option);
    else snprintf(out, sizeof out, "%s/plots", runs);
    size_t per = 3 * 32 * 32;
    float *xt = malloc(sizeof(float) * per * MAPS_IMAGES), *tvec = malloc(sizeof(float) * MAPS_IMAGES);
    AttentionMaps *maps = calloc(2, sizeof *maps);
    ModelConfig cfgs[2];
    char label_text[2][160];
    const char *labels[2] = { label_text[0], label_text[1] };
    rc = 1;
    if (!xt || !tvec || !maps) { fprintf(stderr, "error: out of memory\n"); goto done; }
    if (noised_images(MAPS_IMAGES, MAPS_TIME, xt, tvec, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); goto done; }
    for (int k = 0; k < 2; k++)
        if (run_maps(runs, MAPPED_RUNS[k], xt, tvec, MAPS_IMAGES, &maps[k], &cfgs[k], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n(attention-maps needs the finished runs %s and %s; "
                            "lab/lab ablation --only %s,%s trains them)\n",
                    err, MAPPED_RUNS[0], MAPPED_RUNS[1], MAPPED_RUNS[0], MAPPED_RUNS[1]);
            goto done;
        }
    // each model's label says what its config is, not what it was asked for
    for (int k = 0; k < 2; k++)
        snprintf(label_text[k], sizeof label_text[k], "%s (%s)", MAPPED_RUNS[k],
                 cfgs[k].pos == POS_ROPE2D ? "2D RoPE" : "learned positions");
    printf("attention of %s and %s, %d test images noised to t = %.2f\n\n", labels[0], labels[1], MAPS_IMAGES, MAPS_TIME);
    print_maps_table(labels, maps, cfgs);
    FigureTally tally = { 0 };
    for (int offsets = 1; offsets >= 0; offsets--) {
        int status = draw_maps(out, offsets ? "step6_attention_offsets" : "step6_attention_centre", labels, maps,
                               offsets, MAPS_TIME, err, sizeof err);
        if (figure_tally_add(&tally, status, "error", err) < 0) goto done;
    }
    printf("\n");
    figure_tally_report(stdout, &tally, out);
    rc = 0;
done:
    free(xt); free(tvec); free(maps);
    return rc;
}
