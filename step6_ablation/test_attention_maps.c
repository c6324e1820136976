// test_attention_maps.c: where trained models look (attention_maps.c).
//
//   the maps      with every q and k zero, attention is even: every map is 1
//                 (in units of 1/L), a query keeps 1/L for itself, and the
//                 mean distance is that of even attention; the centre map of
//                 any model sums to L (one query's probabilities sum to 1)
//   the command   on two made-up checkpoints (a learned-position and a 2D
//                 RoPE smoke model, untrained): the table, two valid PNGs
//                 (with gnuplot), the data and a notice without gnuplot, and
//                 a clear error when a run has no checkpoint. Needs CIFAR-10
//                 (skipped with a note without it).
#include "synth_cifar.h"
#include "testutil.h"
#include "attention_maps.h"
#include "train/trainer.h"
#include "io/checkpoint.h"
#include "io/cifar.h"
#include "io/figure.h"
#include "io/fileio.h"
#include <sys/wait.h>

#define PROG "./step6_ablation"

static Config smoke(bool rope) {
    Config c;
    int every;
    preset_apply(PRESET_SMOKE, &c, &every);
    if (rope) c.model.pos = POS_ROPE2D;
    return c;
}

// A model built from cfg with its weights drawn, and a forward pass on noise.
static void forward_on_noise(Model *m, Activations *a, const Config *cfg, int N, bool zero_qkv) {
    char err[512];
    ck_assert_msg(model_build(m, &cfg->model, err, sizeof err) == 0, "%s", err);
    model_init_weights(m, 3);
    if (zero_qkv)
        for (int l = 0; l < cfg->model.depth; l++) {
            memset(m->p.blocks[l].qkv_w, 0, sizeof(float) * 3 * cfg->model.dim * cfg->model.dim);
            memset(m->p.blocks[l].qkv_b, 0, sizeof(float) * 3 * cfg->model.dim);
        }
    ck_assert_int_eq(activations_alloc(a, m, N, true), 0);
    size_t per = (size_t)cfg->model.channels * cfg->model.img * cfg->model.img;
    float *x = alloc_floats(per * N), t[4] = { 0.5f, 0.5f, 0.5f, 0.5f };
    fill_normal(x, per * N, 1.0f, 9);
    model_forward(m, a, x, t, NULL);
    free(x);
}

START_TEST(test_even_attention) {
    for (int rope = 0; rope < 2; rope++) {
        Config c = smoke(rope);
        Model m;
        Activations a;
        forward_on_noise(&m, &a, &c, 4, true);
        AttentionMaps *maps = malloc(sizeof *maps);
        attention_maps_compute(&m, &a, maps);
        int g = cfg_grid(&c.model), L = cfg_tokens(&c.model), W = 2 * g - 1;
        ck_assert_int_eq(maps->depth, c.model.depth);
        ck_assert_int_eq(maps->grid, g);
        for (int l = 0; l < c.model.depth; l++) {
            for (int o = 0; o < W * W; o++) ck_assert_float_eq_tol(maps->offsets[l][o], 1.0f, 1e-4f);
            for (int k = 0; k < L; k++) ck_assert_float_eq_tol(maps->centre[l][k], 1.0f, 1e-4f);
            ck_assert_double_eq_tol(maps->self[l], 1.0 / L, 1e-6);
            ck_assert_double_eq_tol(maps->distance[l], maps->uniform_distance, 1e-5);
        }
        // the mean distance between two cells of an 8x8 grid (4.14 patches, self included)
        ck_assert_double_eq_tol(maps->uniform_distance, 4.13648, 1e-4);
        free(maps);
        activations_free(&a);
        model_free(&m);
    }
}
END_TEST

START_TEST(test_centre_map_is_one_query) {
    Config c = smoke(true);
    Model m;
    Activations a;
    forward_on_noise(&m, &a, &c, 3, false);
    AttentionMaps *maps = malloc(sizeof *maps);
    attention_maps_compute(&m, &a, maps);
    int L = cfg_tokens(&c.model);
    for (int l = 0; l < c.model.depth; l++) {
        double sum = 0;
        for (int k = 0; k < L; k++) sum += maps->centre[l][k];
        ck_assert_double_eq_tol(sum, L, 1e-3);                 // probabilities sum to 1, times L
        ck_assert(maps->self[l] > 0 && maps->self[l] < 1);
    }
    free(maps);
    activations_free(&a);
    model_free(&m);
}
END_TEST

static void save_model(const char *dir, const char *name, bool rope) {
    char path[600], err[1024];
    Config c = smoke(rope);
    Model m;
    ck_assert_msg(model_build(&m, &c.model, err, sizeof err) == 0, "%s", err);
    model_init_weights(&m, rope ? 5 : 4);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(make_dirs(path, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/%s/ckpt.safetensors", dir, name);
    ck_assert_msg(checkpoint_save(path, &m, &c.run, NULL, 0, NULL, 0, err, sizeof err) == 0, "%s", err);
    model_free(&m);
}

static int sh(const char *cmd) {
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_command) {
    char dir[256], cmd[2400], log[300];
    tmpdir_make(dir, sizeof dir, "maps");
    // the maps are drawn on noised test images: CIFAR-10's, or without it a
    // small synthetic set of the same layout (the command is what is tested)
    ck_assert_int_ge(synth_cifar_use(dir, "test_command"), 0);
    snprintf(log, sizeof log, "%s/out.txt", dir);
    save_model(dir, "p11_base_s0", false);
    save_model(dir, "p11_rope", true);

    // with gnuplot (if there is one): the table and two PNGs in DIR/plots
    snprintf(cmd, sizeof cmd, "%s attention-maps --runs %s > %s 2>&1", PROG, dir, log);
    ck_assert_int_eq(sh(cmd), 0);
    char *t = read_whole_file(log);
    ck_assert_msg(strstr(t, "to itself") && strstr(t, "learned positions") && strstr(t, "2D RoPE"), "%s", t);
    const char *names[] = { "step6_attention_offsets", "step6_attention_centre" };
    for (int i = 0; i < 2; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/plots/%s.tsv", dir, names[i]);
        ck_assert_msg(file_exists(path), "no %s", path);
        snprintf(path, sizeof path, "%s/plots/%s.png", dir, names[i]);
        if (figure_gnuplot_available()) ck_assert_msg(figure_png_valid(path), "%s is not a PNG:\n%s", path, t);
    }
    if (figure_gnuplot_available()) ck_assert_msg(strstr(t, "figures: 2 PNGs in"), "%s", t);
    else test_skip("gnuplot", 0, "test_command", "the PNGs: gnuplot is not installed (make deps)");
    free(t);

    // without gnuplot: the data, no picture, and how to get it
    snprintf(cmd, sizeof cmd, "TINYDIT_GNUPLOT=/nonexistent %s attention-maps --runs %s --out %s/bare > %s 2>&1",
             PROG, dir, dir, log);
    ck_assert_int_eq(sh(cmd), 0);
    t = read_whole_file(log);
    ck_assert_msg(strstr(t, "/nonexistent was not found") && strstr(t, "Install gnuplot"), "%s", t);
    free(t);
    char path[600];
    snprintf(path, sizeof path, "%s/bare/step6_attention_offsets.tsv", dir);
    ck_assert_msg(file_exists(path), "no %s", path);
    snprintf(path, sizeof path, "%s/bare/step6_attention_offsets.png", dir);
    ck_assert_msg(!file_exists(path), "%s drawn without gnuplot", path);

    // a run without a checkpoint: exit 1, naming it
    snprintf(cmd, sizeof cmd, "%s attention-maps --runs %s/bare > %s 2>&1", PROG, dir, log);
    ck_assert_int_eq(sh(cmd), 1);
    t = read_whole_file(log);
    ck_assert_msg(strstr(t, "bare/p11_base_s0/ckpt.safetensors"), "%s", t);
    free(t);
    // bad options
    snprintf(cmd, sizeof cmd, "%s attention-maps --batch 8 > %s 2>&1", PROG, log);
    ck_assert_int_eq(sh(cmd), 2);
    tmpdir_remove(dir);
}
END_TEST

int main(void) {
    return run_tests("lab_attention_maps", "maps", 120, TESTS(test_even_attention, test_centre_map_is_one_query,
                                                              test_command));
}
