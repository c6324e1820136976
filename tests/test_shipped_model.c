// test_shipped_model.c: the trained model that ships with the repository
// (models/tinydit_rope_tutorial.safetensors, docs/tinydit.md) loads through
// the checkpoint code like any checkpoint, with its checksums, and samples.
//
//   - the file is the one committed: sha256sum -c of the .sha256 beside it;
//   - it loads with checkpoint_load, every CRC32 checked, as the tutorial
//     preset's 2D RoPE model: the config and the parameter count of
//     results/tutorial/p11_rope, and no optimizer state in the file;
//   - 4 samples of 20 Euler steps come out finite, with a spread of pixel
//     values like images (not noise, not zeros): seconds, not minutes, but
//     no clock is read (a test's timing on a shared machine proves nothing);
//   - one flipped byte in the file is refused, the tensor named;
//   - step0_tour/step0_tour answers with no arguments (its tour of this model),
//     and its `export` drops a run checkpoint's AdamW moments and keeps
//     every weight bit for bit.
#include "testutil.h"
#include "eval/scorecard.h"
#include "io/checkpoint.h"
#include "io/paths.h"
#include <sys/wait.h>

#define SHIPPED "models/tinydit_rope_tutorial.safetensors"

static void shipped_path(char *out, size_t n) {
    ck_assert_int_eq(project_path(out, n, SHIPPED), 0);
    ck_assert_msg(access(out, R_OK) == 0, "%s is missing: it is part of the repository "
                  "(docs/tinydit.md says how it was made)", out);
}

// The whole file against its recorded SHA-256: a re-export, a truncated
// download or a Git LFS pointer in its place all fail here.
START_TEST(test_the_file_is_the_committed_one) {
    char path[4096], models[4096], cmd[9000];
    shipped_path(path, sizeof path);
    ck_assert_int_eq(project_path(models, sizeof models, "models"), 0);
    snprintf(cmd, sizeof cmd, "cd '%s' && sha256sum --check --status tinydit_rope_tutorial.safetensors.sha256",
             models);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "%s does not match models/tinydit_rope_tutorial.safetensors.sha256 (damaged, "
                  "or exported again without updating the checksum)", path);
}
END_TEST

START_TEST(test_loads_as_the_tutorial_rope_model) {
    char path[4096], err[1024];
    shipped_path(path, sizeof path);
    Model m;
    SafeTensors st;
    ck_assert_msg(checkpoint_load(path, &m, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(m.cfg.pos, POS_ROPE2D);
    ck_assert_int_eq(m.cfg.norm, NORM_LAYERNORM);
    ck_assert_int_eq(m.cfg.mlp, MLP_GELU);
    ck_assert(!m.cfg.qk_norm);
    ck_assert_int_eq(m.cfg.dim, 128);
    ck_assert_int_eq(m.cfg.depth, 4);
    ck_assert_int_eq(m.cfg.heads, 4);
    ck_assert_int_eq(m.cfg.patch, 4);
    ck_assert_uint_eq(m.n_params, 1150128);          // results/tutorial/p11_rope/metrics.json
    // saved before class labels existed: no `classes` in its metadata, so the
    // unconditional model, without a label table
    ck_assert_ptr_null(st_meta(&st, "classes"));
    ck_assert_int_eq(m.cfg.classes, 0);
    ck_assert_ptr_null(model_find(&m, "y_embed.weight"));
    ck_assert_ptr_null(st_find(&st, CHECKPOINT_ADAMW_M "head.bias"));
    ck_assert_ptr_null(st_find(&st, CHECKPOINT_ADAMW_V "head.bias"));
    ck_assert_str_eq(st_meta(&st, "train.step"), "4000");
    st_free(&st);
    model_free(&m);
}
END_TEST

START_TEST(test_samples_like_images) {
    char path[4096], err[1024];
    shipped_path(path, sizeof path);
    Model m;
    ck_assert_msg(checkpoint_load(path, &m, NULL, err, sizeof err) == 0, "%s", err);
    enum { N = 4 };
    size_t per = 3 * 32 * 32;
    float *x = alloc_floats(per * N);
    scorecard_samples(&m, x, N, FD_EULER_STEPS);
    double sum = 0, sum2 = 0;
    for (size_t i = 0; i < per * N; i++) {
        ck_assert_msg(isfinite(x[i]), "sample value %zu is %g", i, x[i]);
        sum += x[i];
        sum2 += (double)x[i] * x[i];
    }
    double mean = sum / (per * N), sd = sqrt(sum2 / (per * N) - mean * mean);
    // CIFAR-10 pixels in [-1, 1] have a standard deviation near 0.5; the
    // starting noise has 1, and an untrained model's 20 steps end near 1.2
    ck_assert_msg(sd > 0.2 && sd < 0.8, "samples' standard deviation %.3f is not an image's", sd);
    free(x);
    model_free(&m);
}
END_TEST

START_TEST(test_a_damaged_copy_is_refused) {
    char path[4096], dir[512], copy[1024], err[1024];
    shipped_path(path, sizeof path);
    tmpdir_make(dir, sizeof dir, "shipped");
    snprintf(copy, sizeof copy, "%s/damaged.safetensors", dir);
    size_t len;
    char *bytes = read_file_all(path, &len, err, sizeof err);
    ck_assert_msg(bytes != NULL, "%s", err);
    bytes[len - 100] ^= 0x10;                          // a bit of the last tensor's data
    ck_assert_int_eq(write_file_atomic(copy, bytes, len, err, sizeof err), 0);
    Model m;
    ck_assert_int_ne(checkpoint_load(copy, &m, NULL, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "checksum") || strstr(err, "CRC"), "unexpected message: %s", err);
    free(bytes);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_the_tour_answers) {
    char dir[512];
    tmpdir_make(dir, sizeof dir, "tour");
    ck_assert_int_eq(run_program("", "step0_tour/step0_tour", "--threads 1", dir), 0);
    const char *out = read_text_in(dir, "out.txt");
    ck_assert_msg(strstr(out, "checksums verified") && strstr(out, "all finite: yes") &&
                  strstr(out, "lands 0 from flow_sample"), "%s", out);
    ck_assert(!file_in(dir, "tinydit_euler_walk.png"));   // writes nothing by default
    tmpdir_remove(dir);
}
END_TEST

// `step0_tour backward` (docs/backward.md): every group of the tiny model's
// gradients within 1e-2 of its scale, in the backward pass's order (the head
// first, the time MLP last), plain and with adaLN-Zero's gates; a setting
// it cannot take is refused, and --set wants `backward` (or `gates`).
START_TEST(test_backward_check_answers) {
    char dir[512];
    tmpdir_make(dir, sizeof dir, "backward");
    const char *const sets[2] = { "backward", "backward --set ada=zero" };
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(run_program("", "step0_tour/step0_tour", sets[k], dir), 0);
        const char *out = read_text_in(dir, "out.txt");
        const char *head = strstr(out, "\nhead.weight"), *time = strstr(out, "\nt_fc1.bias");
        ck_assert_msg(head && time && head < time && strstr(out, "every one under 1e-2") &&
                      (k == 0 || strstr(out, "rows of gate_m")), "%s", out);
    }
    ck_assert_int_eq(run_program("", "step0_tour/step0_tour", "backward --set dim=nope", dir), 2);
    ck_assert_int_ne(run_program("", "step0_tour/step0_tour", "--set ada=zero", dir), 0);
    ck_assert_msg(strstr(read_text_in(dir, "err.txt"), "--set is for `backward` and `gates` only"), "%s",
                  read_text_in(dir, "err.txt"));
    ck_assert_int_eq(run_program("", "step0_tour/step0_tour", "gates --set ada=plain", dir), 2);   // zero's gates only
    tmpdir_remove(dir);
}
END_TEST

// A small run checkpoint with AdamW moments, exported: weights and config
// kept bit for bit, moments gone.
START_TEST(test_export_drops_the_optimizer_state) {
    char dir[512], run[1024], out[1024], opts[2200], err[1024];
    tmpdir_make(dir, sizeof dir, "export");
    snprintf(run, sizeof run, "%s/run.safetensors", dir);
    snprintf(out, sizeof out, "%s/weights.safetensors", dir);
    Config c = config_default();
    c.model.dim = 16; c.model.depth = 1; c.model.heads = 2; c.model.pos = POS_ROPE2D;
    Model m, back;
    ck_assert_int_eq(model_build(&m, &c.model, err, sizeof err), 0);
    model_init_weights(&m, 7);
    float *moment = alloc_floats(m.n_params);
    for (size_t i = 0; i < m.n_params; i++) moment[i] = 0.5f;
    CheckpointArray extra[2] = { { CHECKPOINT_ADAMW_M, moment }, { CHECKPOINT_ADAMW_V, moment } };
    CheckpointMeta meta[1] = { { "train.step", "12" } };
    ck_assert_msg(checkpoint_save(run, &m, &c.run, extra, 2, meta, 1, err, sizeof err) == 0, "%s", err);
    snprintf(opts, sizeof opts, "export '%s' '%s'", run, out);
    ck_assert_int_eq(run_program("", "step0_tour/step0_tour", opts, dir), 0);
    SafeTensors st;
    ck_assert_msg(checkpoint_load(out, &back, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(back.n_params, m.n_params);
    ck_assert_int_eq(memcmp(back.params, m.params, m.n_params * sizeof(float)), 0);
    ck_assert_ptr_null(st_find(&st, CHECKPOINT_ADAMW_M "head.bias"));
    ck_assert_str_eq(st_meta(&st, "train.step"), "12");
    st_free(&st);
    model_free(&back);
    model_free(&m);
    free(moment);
    tmpdir_remove(dir);
}
END_TEST

int main(void) {
    return run_tests("shipped_model", "shipped_model", 120, TESTS(test_the_file_is_the_committed_one,
                                                                  test_loads_as_the_tutorial_rope_model,
                                                                  test_samples_like_images,
                                                                  test_a_damaged_copy_is_refused,
                                                                  test_the_tour_answers,
                                                                  test_backward_check_answers,
                                                                  test_export_drops_the_optimizer_state));
}
