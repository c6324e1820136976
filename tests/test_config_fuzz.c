// test_config_fuzz.c: random configurations, each trained a few steps and
// loaded back from its own checkpoint.
//
// The other tests train a handful of hand-picked shapes; a bug that only a
// rarer one meets (an odd channel count, one head, a grid of 1x1, rope2d at
// head_dim 4, no biases with SwiGLU, ...) would pass them. Here a fixed seed
// draws configurations the way a user's --set lines make them: img, channels,
// patch, dim, heads, depth, mlp, pos, norm, qk_norm, bias (and freq_dim,
// mlp_ratio, batch; and ada, the adaLN variant, where the config has that
// key) as "key=value" text through config_set, then config_validate. For
// each valid one:
//   - three training steps on random images of its shape: the losses finite;
//   - a checkpoint with the AdamW moments, loaded back: the config, every
//     weight and both moments bit for bit, and the loaded model's forward
//     pass the same bits as the original's;
//   - the trainer itself (trainer_run, on the synthetic CIFAR-10 set of
//     tests/synth_cifar.h): a model of CIFAR-10's shape (img 32, 3 channels)
//     trains 2 steps and resumes to 3; any other shape is refused before
//     anything is made on disk.
// An invalid draw must be refused with a message, never crash.
//
// FUZZ_CONFIGS valid configurations (default 40 in `make check`; `make
// sanitize` sets TINYDIT_FUZZ_CONFIGS=250, under ASan and UBSan, where an
// out-of-bounds index or a size overflow in any shape stops the run).
#include <fcntl.h>
#include "testutil.h"
#include "synth_cifar.h"
#include "io/checkpoint.h"
#include "io/config_parse.h"
#include "nn/model.h"
#include "nn/train_step.h"
#include "train/trainer.h"

#define FUZZ_SEED 47001ULL
#define TRAINER_EVERY 6   // every 6th configuration also goes through trainer_run

static int pick(Rng *r, int n) { return (int)rng_below(r, (uint32_t)n); }

// One random configuration as --set lines, applied to the defaults.
// 0 when config_set and config_validate accept it; -1 (with the message in
// why) when they refuse it, which is a fine answer too.
static int draw_config(Rng *r, Config *c, int cifar_shape, char *desc, size_t dlen, char *why, size_t wlen) {
    static const int patches[] = { 1, 2, 3, 4, 8 }, hds[] = { 2, 4, 6, 8 };
    static const char *const ratios[] = { "1", "2", "2.5", "4" };
    int patch = patches[pick(r, 5)], grid = 1 + pick(r, 4);
    int img = patch * grid, channels = 1 + pick(r, 4);
    if (cifar_shape) {   // CIFAR-10's 32x32x3, with a patch that divides 32
        static const int p32[] = { 4, 8, 16, 32 };
        patch = p32[pick(r, 4)]; img = 32; channels = 3;
    }
    int heads = 1 + pick(r, 4), hd = hds[pick(r, 4)];
    char sets[24][48];
    int n = 0;
    snprintf(sets[n++], 48, "img=%d", img);
    snprintf(sets[n++], 48, "channels=%d", channels);
    snprintf(sets[n++], 48, "patch=%d", patch);
    snprintf(sets[n++], 48, "dim=%d", heads * hd);
    snprintf(sets[n++], 48, "heads=%d", heads);
    snprintf(sets[n++], 48, "depth=%d", 1 + pick(r, 3));
    snprintf(sets[n++], 48, "mlp=%s", pick(r, 2) ? "swiglu" : "gelu");
    snprintf(sets[n++], 48, "mlp_ratio=%s", ratios[pick(r, 4)]);
    snprintf(sets[n++], 48, "pos=%s", pick(r, 2) ? "rope2d" : "learned");
    snprintf(sets[n++], 48, "norm=%s", pick(r, 2) ? "rmsnorm" : "layernorm");
    snprintf(sets[n++], 48, "qk_norm=%s", pick(r, 2) ? "true" : "false");
    snprintf(sets[n++], 48, "bias=%s", pick(r, 2) ? "true" : "false");
    snprintf(sets[n++], 48, "freq_dim=%d", 2 * (1 + pick(r, 8)));
    snprintf(sets[n++], 48, "batch=%d", 1 + pick(r, 3));
    snprintf(sets[n++], 48, "seed=%d", pick(r, 1000));
    snprintf(sets[n++], 48, "data_seed=%d", pick(r, 3) - 1);   // -1: the seed's order
    // the run's other fields, which a checkpoint stores beside the model's
    snprintf(sets[n++], 48, "lr=%s", pick(r, 2) ? "1e-3" : "3e-4");
    snprintf(sets[n++], 48, "weight_decay=%s", pick(r, 2) ? "0.05" : "0");
    snprintf(sets[n++], 48, "flip=%s", pick(r, 2) ? "true" : "false");
    // the block's adaLN variant, where the config has one (plain | zero)
    Config probe = config_default();
    if (config_set(&probe, "ada=zero", NULL, 0) == 0) snprintf(sets[n++], 48, "ada=%s", pick(r, 2) ? "zero" : "plain");
    *c = config_default();
    size_t used = 0;
    desc[0] = '\0';
    const char *kvs[24];
    for (int i = 0; i < n; i++) {
        used += (size_t)snprintf(desc + used, used < dlen ? dlen - used : 0, "%s%s", i ? " " : "", sets[i]);
        kvs[i] = sets[i];
    }
    return config_apply(c, kvs, n, why, wlen);
}

// Three steps, a checkpoint, the checkpoint loaded back.
static void train_save_load(const Config *c, const char *desc, const char *dir, Rng *r) {
    char err[1024], path[600];
    Model m, back;
    ck_assert_msg(model_build(&m, &c->model, err, sizeof err) == 0, "%s: %s", desc, err);
    model_init_weights(&m, c->run.seed);
    TrainState ts;
    AdamWConfig opt = adamw_default(1e-3f);
    ck_assert_msg(train_state_init(&ts, &m, c->run.batch, &opt, NULL) == 0, "%s: out of memory", desc);
    size_t per = (size_t)c->model.channels * c->model.img * c->model.img;
    float *x1 = alloc_floats(per * c->run.batch);
    for (int step = 0; step < 3; step++) {
        rng_fill_uniform(r, x1, (long)(per * c->run.batch), -1.0f, 1.0f);
        double loss = train_step(&ts, x1, NULL, r);
        ck_assert_msg(isfinite(loss) && isfinite(ts.grad_norm), "%s: step %d: loss %g, gradient norm %g", desc,
                      step + 1, loss, ts.grad_norm);
    }
    snprintf(path, sizeof path, "%s/ckpt.safetensors", dir);
    CheckpointArray extra[2] = { { CHECKPOINT_ADAMW_M, ts.adam_m }, { CHECKPOINT_ADAMW_V, ts.adam_v } };
    CheckpointMeta meta[1] = { { "train.step", "3" } };
    ck_assert_msg(checkpoint_save(path, &m, &c->run, extra, 2, meta, 1, err, sizeof err) == 0, "%s: %s", desc, err);
    SafeTensors st;
    ck_assert_msg(checkpoint_load(path, &back, &st, err, sizeof err) == 0, "%s: %s", desc, err);
    // both parts come back: the model's (built from it) and the run's
    Config stored;
    ck_assert_msg(checkpoint_config_from(&st, path, &stored, err, sizeof err) == 0, "%s: %s", desc, err);
    char a[1024], b[1024];
    config_describe(c, a, sizeof a);
    config_describe(&stored, b, sizeof b);
    ck_assert_msg(strcmp(a, b) == 0, "%s: saved %s, loaded %s", desc, a, b);
    model_config_describe(&back.cfg, b, sizeof b);
    ck_assert_msg(strncmp(a, b, strlen(b)) == 0 && a[strlen(b)] == ' ', "%s: saved %s, built %s", desc, a, b);
    ck_assert_msg(back.n_params == m.n_params && memcmp(back.params, m.params, sizeof(float) * m.n_params) == 0,
                  "%s: the weights came back different", desc);
    float *moment = alloc_floats(m.n_params);
    for (int k = 0; k < 2; k++) {
        ck_assert_msg(checkpoint_copy_array(&st, path, extra[k].prefix, &back, moment, err, sizeof err) == 0,
                      "%s: %s", desc, err);
        ck_assert_msg(memcmp(moment, k ? ts.adam_v : ts.adam_m, sizeof(float) * m.n_params) == 0,
                      "%s: AdamW moment %s came back different", desc, extra[k].prefix);
    }
    st_free(&st);
    // the loaded model computes what the saved one did
    Activations a1, a2;
    ck_assert_int_eq(activations_alloc(&a1, &m, c->run.batch, false), 0);
    ck_assert_int_eq(activations_alloc(&a2, &back, c->run.batch, false), 0);
    float *t = alloc_floats(c->run.batch);
    rng_fill_uniform(r, t, c->run.batch, 0.0f, 1.0f);
    model_forward(&m, &a1, x1, t, NULL);
    model_forward(&back, &a2, x1, t, NULL);
    ck_assert_msg(memcmp(a1.v, a2.v, sizeof(float) * per * c->run.batch) == 0, "%s: the loaded model's output differs",
                  desc);
    activations_free(&a1); activations_free(&a2);
    free(t); free(moment); free(x1);
    unlink(path);
    train_state_free(&ts);
    model_free(&m); model_free(&back);
}

// The trainer on this config, its output out of the way (the refusals would
// fill the log). Returns trainer_run's exit code.
static int run_trainer(const Config *c, const char *out, int steps, bool resume, const char *log) {
    TrainOptions o;
    memset(&o, 0, sizeof o);
    o.name = "fuzz";
    o.out_dir = out;
    o.preset = PRESET_SMOKE;
    o.cfg = *c;
    o.cfg.run.steps = steps;
    o.cfg.run.threads = 1;
    o.cfg.run.val_every = 0;
    o.resume = resume;
    o.ckpt_every = 1;
    o.scorecard = false;
    fflush(stdout); fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 1); dup2(fd, 2); close(fd);
    int rc = trainer_run(&o);
    fflush(stdout); fflush(stderr);
    dup2(saved_out, 1); dup2(saved_err, 2); close(saved_out); close(saved_err);
    return rc;
}

START_TEST(test_random_configs_train_and_reload) {
    const char *env = getenv("TINYDIT_FUZZ_CONFIGS");
    int want = env && atoi(env) > 0 ? atoi(env) : 40;
    char tmp[512], out[600], log[600], run[700];
    tmpdir_make(tmp, sizeof tmp, "config_fuzz");
    ck_assert_int_ge(synth_cifar_use(tmp, "config fuzz"), 0);
    snprintf(out, sizeof out, "%s/runs", tmp);
    snprintf(log, sizeof log, "%s/trainer.log", tmp);
    snprintf(run, sizeof run, "%s/fuzz", out);
    Rng r;
    rng_seed(&r, FUZZ_SEED);
    int valid = 0, refused = 0, trained = 0, kept_out = 0;
    for (int draw = 0; valid < want; draw++) {
        ck_assert_msg(draw < 20 * want, "only %d valid configurations in %d draws", valid, draw);
        Config c;
        char desc[1024], why[512] = "";
        int to_trainer = (valid + 1) % TRAINER_EVERY == 0;
        int cifar_shape = to_trainer && valid % (2 * TRAINER_EVERY) != TRAINER_EVERY - 1;
        if (draw_config(&r, &c, cifar_shape, desc, sizeof desc, why, sizeof why) != 0) {
            ck_assert_msg(why[0] != '\0', "%s: refused without a message", desc);
            refused++;
            continue;
        }
        valid++;
        train_save_load(&c, desc, tmp, &r);
        if (!to_trainer) continue;
        int fits = c.model.img == CIFAR_IMG && c.model.channels == CIFAR_CHANNELS;
        int rc = run_trainer(&c, out, 2, false, log);
        if (!fits) {
            ck_assert_msg(rc == TRAIN_USAGE, "%s: the trainer answered %d to a model CIFAR-10 cannot fill", desc, rc);
            ck_assert_msg(!file_exists(out), "%s: a refused run left %s behind", desc, out);
            kept_out++;
            continue;
        }
        ck_assert_msg(rc == TRAIN_OK, "%s: trainer_run exit %d (log: %s)", desc, rc, log);
        ck_assert_msg(run_trainer(&c, out, 3, true, log) == TRAIN_OK, "%s: the resume failed (log: %s)", desc, log);
        tmpdir_remove(out);
        trained++;
    }
    printf("config fuzz (seed %llu): %d valid configurations trained 3 steps and reloaded bit for bit; "
           "%d draws refused with a message; %d of CIFAR-10's shape through trainer_run and a resume, "
           "%d of other shapes refused by it with nothing on disk\n",
           (unsigned long long)FUZZ_SEED, valid, refused, trained, kept_out);
    ck_assert_int_gt(trained, 0);
    ck_assert_int_gt(kept_out, 0);
    tmpdir_remove(tmp);
}
END_TEST

int main(void) {
    return run_tests("config_fuzz", "fuzz", 600, TESTS(test_random_configs_train_and_reload));
}
