// test_checkpoint.c: saving and loading a Model: bit-identical round trips,
// the AdamW moments and trainer metadata, old checkpoints that predate a
// switch, mismatches, and the PyTorch reference's golden files.
#include "testutil.h"
#include "io/checkpoint.h"
#include "io/checksum.h"

#include <unistd.h>

static char err[1024];
static char tmpdir[256];

static void make_tmpdir(void) { tmpdir_make(tmpdir, sizeof tmpdir, "checkpoint"); }
static void remove_tmpdir(void) { tmpdir_remove(tmpdir); }

// The parameters of path into an already built m, whose shapes must match.
static int load_params(const char *path, Model *m, char *err, size_t errlen) {
    SafeTensors st;
    if (st_read(path, &st, err, errlen) != 0) return -1;
    int rc = checkpoint_copy_params(&st, path, "", m, err, errlen);
    st_free(&st);
    return rc;
}

static Config config_with(const char *const *sets, int n) {
    Config c = config_default();
    for (int i = 0; i < n; i++) ck_assert_msg(config_set(&c, sets[i], err, sizeof err) == 0, "%s", err);
    return c;
}

static void build(Model *m, const Config *c, unsigned long long seed) {
    ck_assert_msg(model_build(m, &c->model, err, sizeof err) == 0, "%s", err);
    model_init_weights(m, seed);
}

// Two configs are the same when every field prints the same.
static void assert_same_config(const Config *a, const Config *b) {
    char da[1024], db[1024];
    config_describe(a, da, sizeof da);
    config_describe(b, db, sizeof db);
    ck_assert_str_eq(da, db);
}

static void assert_same_model_config(const ModelConfig *a, const ModelConfig *b) {
    char da[1024], db[1024];
    model_config_describe(a, da, sizeof da);
    model_config_describe(b, db, sizeof db);
    ck_assert_str_eq(da, db);
}

// A model alone, without the run that trained it.
static void save_plain(const char *path, const Model *m) {
    ck_assert_msg(checkpoint_save(path, m, NULL, NULL, 0, NULL, 0, err, sizeof err) == 0, "%s", err);
}

START_TEST(test_round_trip) {
    make_tmpdir();
    char path[300];
    snprintf(path, sizeof path, "%s/ckpt.safetensors", tmpdir);
    const char *sets[] = {"modern", "pos=rope2d", "lr=2e-3", "seed=5", "batch=64", "steps=1000",
                          "weight_decay=0.05", "flip=false", "threads=2"};
    Config c = config_with(sets, 9);
    Model m;
    build(&m, &c, 11);
    float *am = alloc_floats(m.n_params), *av = alloc_floats(m.n_params);
    fill_normal(am, m.n_params, 1e-3f, 1);
    fill_normal(av, m.n_params, 1e-6f, 2);
    CheckpointArray extra[2] = {{CHECKPOINT_ADAMW_M, am}, {CHECKPOINT_ADAMW_V, av}};
    CheckpointMeta meta[2] = {{"step", "123"}, {"rng", "0x9e3779b97f4a7c15"}};
    ck_assert_msg(checkpoint_save(path, &m, &c.run, extra, 2, meta, 2, err, sizeof err) == 0, "%s", err);

    Model r;
    SafeTensors st;
    ck_assert_msg(checkpoint_load(path, &r, &st, err, sizeof err) == 0, "%s", err);
    assert_same_model_config(&m.cfg, &r.cfg);
    ck_assert_int_eq(r.n_params, m.n_params);
    ck_assert_int_eq(r.n_tensors, m.n_tensors);
    ck_assert(memcmp(r.params, m.params, m.n_params * sizeof(float)) == 0);

    float *bm = alloc_floats(m.n_params), *bv = alloc_floats(m.n_params);
    ck_assert_int_eq(checkpoint_copy_array(&st, path, CHECKPOINT_ADAMW_M, &r, bm, err, sizeof err), 0);
    ck_assert_int_eq(checkpoint_copy_array(&st, path, CHECKPOINT_ADAMW_V, &r, bv, err, sizeof err), 0);
    ck_assert(memcmp(am, bm, m.n_params * sizeof(float)) == 0);
    ck_assert(memcmp(av, bv, m.n_params * sizeof(float)) == 0);
    ck_assert_int_eq(checkpoint_copy_array(&st, path, "ema.", &r, bm, err, sizeof err), 1);   // absent
    ck_assert_str_eq(st_meta(&st, "step"), "123");
    ck_assert_str_eq(st_meta(&st, "rng"), "0x9e3779b97f4a7c15");
    ck_assert_str_eq(st_meta(&st, "norm"), "rmsnorm");
    ck_assert_str_eq(st_meta(&st, "qk_norm"), "true");
    ck_assert_str_eq(st_meta(&st, "lr"), "2e-3");   // the run's config beside the model's
    ck_assert_str_eq(st_meta(&st, "threads"), "2");
    st_free(&st);

    // checkpoint_read_config alone, and loading into an already built model.
    Config rc;
    ck_assert_msg(checkpoint_read_config(path, &rc, err, sizeof err) == 0, "%s", err);
    assert_same_config(&c, &rc);
    Model q;
    build(&q, &rc, 99);
    ck_assert_msg(load_params(path, &q, err, sizeof err) == 0, "%s", err);
    ck_assert(memcmp(q.params, m.params, m.n_params * sizeof(float)) == 0);

    model_free(&m); model_free(&r); model_free(&q);
    free(am); free(av); free(bm); free(bv);
    remove_tmpdir();
}
END_TEST

START_TEST(test_default_round_trip_and_count) {
    make_tmpdir();
    char path[300];
    snprintf(path, sizeof path, "%s/base.safetensors", tmpdir);
    Config c = config_default();
    Model m, r;
    build(&m, &c, 1);
    ck_assert_int_eq(m.n_params, 1152176);
    save_plain(path, &m);
    ck_assert_msg(checkpoint_load(path, &r, NULL, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(r.n_params, 1152176);
    ck_assert(memcmp(r.params, m.params, m.n_params * sizeof(float)) == 0);
    model_free(&m); model_free(&r);
    remove_tmpdir();
}
END_TEST

// Spec §7: a checkpoint saved before qk_norm/mlp/norm/pos/bias existed has no
// such metadata and loads as the original block. It has no checksums either
// (it predates them too), which is allowed.
START_TEST(test_old_checkpoint_gets_defaults) {
    make_tmpdir();
    char path[300];
    snprintf(path, sizeof path, "%s/old.safetensors", tmpdir);
    Config c = config_default();
    Model m;
    build(&m, &c, 3);
    StWriter w;
    st_writer_init(&w);
    const char *old_keys[][2] = {{"img", "32"}, {"channels", "3"}, {"patch", "4"}, {"dim", "128"},
                                 {"depth", "4"}, {"heads", "4"}, {"mlp_ratio", "4.0"},
                                 {"freq_dim", "256"}, {"step", "4000"}};
    for (int i = 0; i < 9; i++) st_writer_meta(&w, old_keys[i][0], old_keys[i][1]);
    for (int i = 0; i < m.n_tensors; i++) {
        long shape[2] = {m.tensors[i].shape[0], m.tensors[i].shape[1]};
        st_writer_add(&w, m.tensors[i].name, m.tensors[i].ndim, shape, m.params + m.tensors[i].offset);
    }
    ck_assert_msg(st_writer_save_atomic(&w, path, err, sizeof err) == 0, "%s", err);
    st_writer_free(&w);

    Model r;
    ck_assert_msg(checkpoint_load(path, &r, NULL, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(r.n_params, 1152176);
    ck_assert_int_eq(r.cfg.norm, NORM_LAYERNORM);
    ck_assert_int_eq(r.cfg.mlp, MLP_GELU);
    ck_assert_int_eq(r.cfg.pos, POS_LEARNED);
    ck_assert(!r.cfg.qk_norm);
    ck_assert(r.cfg.bias);
    ck_assert(memcmp(r.params, m.params, m.n_params * sizeof(float)) == 0);
    model_free(&m); model_free(&r);

    // A file with no metadata at all is the default config.
    Config d;
    st_writer_init(&w);
    st_writer_save_atomic(&w, path, err, sizeof err);
    st_writer_free(&w);
    ck_assert_int_eq(checkpoint_read_config(path, &d, err, sizeof err), 0);
    Config def = config_default();
    assert_same_config(&d, &def);
    remove_tmpdir();
}
END_TEST

// Every tensor and the metadata carry a CRC32 (checksum.h). One flipped bit
// in a tensor's data is refused with that tensor named; a changed metadata
// value is refused too.
static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*len + 1);
    ck_assert_uint_eq(fread(b, 1, *len, f), *len);
    fclose(f);
    b[*len] = 0;
    return b;
}

static void spill(const char *path, const uint8_t *b, size_t len) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, len, f), len);
    fclose(f);
}

START_TEST(test_checksums_catch_a_flipped_bit) {
    make_tmpdir();
    char path[300], bad[300];
    snprintf(path, sizeof path, "%s/ckpt.safetensors", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.safetensors", tmpdir);
    const char *sets[] = {"dim=32", "depth=2", "heads=2"};
    Config c = config_with(sets, 3);
    Model m;
    build(&m, &c, 4);
    float *am = alloc_floats(m.n_params);
    fill_normal(am, m.n_params, 1e-3f, 5);
    CheckpointArray extra[1] = {{CHECKPOINT_ADAMW_M, am}};
    CheckpointMeta meta[1] = {{"train.step", "123"}};
    ck_assert_msg(checkpoint_save(path, &m, &c.run, extra, 1, meta, 1, err, sizeof err) == 0, "%s", err);
    SafeTensors st;
    ck_assert_int_eq(st_read(path, &st, err, sizeof err), 0);
    ck_assert_ptr_nonnull(st_meta(&st, "crc32.blocks.1.attn.qkv.weight"));
    ck_assert_ptr_nonnull(st_meta(&st, "crc32.adamw_m.head.bias"));
    ck_assert_ptr_nonnull(st_meta(&st, ST_CRC_METADATA_KEY));
    ck_assert_int_eq(st_verify_checksums(&st, path, err, sizeof err), 0);
    st_free(&st);

    size_t len;
    uint8_t *b = slurp(path, &len);
    size_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | b[i];
    // the parameters are written first, in table order: a tensor's bytes
    // start at 4 * its offset in the data section
    const ParamTensor *t = model_find(&m, "blocks.1.attn.qkv.weight");
    ck_assert_ptr_nonnull(t);
    size_t at = 8 + hlen + 4 * t->offset + 4 * 7 + 2;   // element 7, a mantissa bit
    b[at] ^= 0x10;
    spill(bad, b, len);
    ck_assert_int_eq(st_read(bad, &st, err, sizeof err), 0);   // the format alone cannot tell
    ck_assert(st_find(&st, t->name)->data[7] != m.params[t->offset + 7]);
    st_free(&st);
    Model r;
    err[0] = 0;
    ck_assert_int_eq(checkpoint_load(bad, &r, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "'blocks.1.attn.qkv.weight' fails its CRC32 check"), "%s", err);
    printf("checksums: a flipped data bit gives: %s\n", err);
    b[at] ^= 0x10;

    // a metadata value changed (the step, one digit)
    char *step = strstr((char *)b + 8, "\"train.step\":\"123\"");
    ck_assert_ptr_nonnull(step);
    step[strlen("\"train.step\":\"12")] = '4';
    spill(bad, b, len);
    ck_assert_int_eq(checkpoint_load(bad, &r, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "metadata fails its CRC32 check"), "%s", err);
    Config rc;
    ck_assert_int_eq(checkpoint_read_config(bad, &rc, err, sizeof err), -1);
    free(b);
    free(am);
    model_free(&m);
    remove_tmpdir();
}
END_TEST

START_TEST(test_mismatches) {
    make_tmpdir();
    char small[300], qk[300];
    snprintf(small, sizeof small, "%s/small.safetensors", tmpdir);
    snprintf(qk, sizeof qk, "%s/qk.safetensors", tmpdir);
    const char *s1[] = {"dim=64"};
    Config cs = config_with(s1, 1);
    const char *s2[] = {"qk_norm=true"};
    Config cq = config_with(s2, 1);
    Config cb = config_default();
    Model ms, mq, mb;
    build(&ms, &cs, 1); build(&mq, &cq, 2); build(&mb, &cb, 3);
    save_plain(small, &ms);
    save_plain(qk, &mq);

    // Shape mismatch: a dim=64 file into a dim=128 model.
    float keep = mb.params[0];
    ck_assert_int_eq(load_params(small, &mb, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "shape") && strstr(err, "[8, 64]") && strstr(err, "[8, 128]"), "%s", err);
    ck_assert(mb.params[0] == keep);   // nothing copied

    // A parameter the model needs is missing.
    Model mq2;
    build(&mq2, &cq, 4);
    char base[300];
    snprintf(base, sizeof base, "%s/base.safetensors", tmpdir);
    save_plain(base, &mb);
    ck_assert_int_eq(load_params(base, &mq2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "no tensor 'blocks.0.attn.q_norm.weight'"), "%s", err);

    // A parameter the model does not have: the metadata and tensors disagree.
    ck_assert_int_eq(load_params(qk, &mb, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "q_norm") && strstr(err, "not a parameter"), "%s", err);

    // Metadata lying about the config (says qk_norm=false, holds q_norm).
    StWriter w;
    st_writer_init(&w);
    st_writer_meta(&w, "qk_norm", "false");
    for (int i = 0; i < mq.n_tensors; i++) {
        long shape[2] = {mq.tensors[i].shape[0], mq.tensors[i].shape[1]};
        st_writer_add(&w, mq.tensors[i].name, mq.tensors[i].ndim, shape, mq.params + mq.tensors[i].offset);
    }
    char liar[300];
    snprintf(liar, sizeof liar, "%s/liar.safetensors", tmpdir);
    ck_assert_int_eq(st_writer_save_atomic(&w, liar, err, sizeof err), 0);
    st_writer_free(&w);
    Model r;
    ck_assert_int_eq(checkpoint_load(liar, &r, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, liar) && strstr(err, "disagree"), "%s", err);

    // Bad or invalid metadata values.
    st_writer_init(&w);
    st_writer_meta(&w, "dim", "12abc");
    ck_assert_int_eq(st_writer_save_atomic(&w, liar, err, sizeof err), 0);
    st_writer_free(&w);
    ck_assert_int_eq(checkpoint_read_config(liar, &cb, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "12abc") && strstr(err, "dim"), "%s", err);
    st_writer_init(&w);
    st_writer_meta(&w, "heads", "3");
    ck_assert_int_eq(st_writer_save_atomic(&w, liar, err, sizeof err), 0);
    st_writer_free(&w);
    ck_assert_int_eq(checkpoint_read_config(liar, &cb, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "invalid") && strstr(err, "heads"), "%s", err);

    // A partial AdamW state is an error, not a silent half-restore.
    st_writer_init(&w);
    for (int i = 0; i < mb.n_tensors; i++) {
        char name[128];
        long shape[2] = {mb.tensors[i].shape[0], mb.tensors[i].shape[1]};
        st_writer_add(&w, mb.tensors[i].name, mb.tensors[i].ndim, shape, mb.params + mb.tensors[i].offset);
        snprintf(name, sizeof name, "adamw_m.%s", mb.tensors[i].name);
        if (i % 2 == 0) st_writer_add(&w, name, mb.tensors[i].ndim, shape, mb.params + mb.tensors[i].offset);
    }
    ck_assert_int_eq(st_writer_save_atomic(&w, liar, err, sizeof err), 0);
    st_writer_free(&w);
    SafeTensors st;
    ck_assert_int_eq(st_read(liar, &st, err, sizeof err), 0);
    float *dst = alloc_floats(mb.n_params);
    ck_assert_int_eq(checkpoint_copy_array(&st, liar, CHECKPOINT_ADAMW_M, &mb, dst, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "no tensor 'adamw_m."), "%s", err);
    ck_assert_int_eq(checkpoint_copy_params(&st, liar, "", &mb, err, sizeof err), 0);  // extras don't disturb
    st_free(&st);
    free(dst);

    // A metadata key that would contradict the config: the model's, or the run's.
    CheckpointMeta bad = {"dim", "64"}, bad_run = {"lr", "1e-3"};
    ck_assert_int_eq(checkpoint_save(base, &mb, NULL, NULL, 0, &bad, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "config field"), "%s", err);
    ck_assert_int_eq(checkpoint_save(base, &mb, NULL, NULL, 0, &bad_run, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "config field"), "%s", err);

    // A missing file.
    ck_assert_int_eq(checkpoint_load("/nonexistent/ckpt.safetensors", &r, NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/ckpt.safetensors"));

    model_free(&ms); model_free(&mq); model_free(&mb); model_free(&mq2);
    remove_tmpdir();
}
END_TEST

static int find_golden(const char *file, char *out, size_t outlen) {
    return golden_path(file, out, outlen) ? 0 : -1;
}

// The golden files' metadata ("4.0", "100.0", "true", plus non-config keys
// like adamw.lr and sample.steps) gives a config whose parameter table
// matches the file's param.* tensors exactly.
START_TEST(test_golden_configs) {
    const char *files[] = {"allfour", "baseline", "modern", "nobias", "qknorm", "rmsnorm", "rope2d",
                           "shape", "shape2", "swiglu"};
    int found = 0;
    for (int i = 0; i < 10; i++) {
        char name[64], path[800];
        snprintf(name, sizeof name, "%s.safetensors", files[i]);
        if (find_golden(name, path, sizeof path) != 0) continue;
        found++;
        SafeTensors st;
        ck_assert_msg(st_read(path, &st, err, sizeof err) == 0, "%s", err);
        Config c;
        ck_assert_msg(checkpoint_config_from(&st, path, &c, err, sizeof err) == 0, "%s", err);
        Model m;
        build(&m, &c, 0);
        ck_assert_msg(checkpoint_copy_params(&st, path, "param.", &m, err, sizeof err) == 0, "%s", err);
        int n_param_tensors = 0;
        for (int k = 0; k < st.n_tensors; k++)
            if (strncmp(st.tensors[k].name, "param.", 6) == 0) n_param_tensors++;
        ck_assert_int_eq(n_param_tensors, m.n_tensors);
        const StTensor *w = st_find(&st, "param.head.weight");
        const ParamTensor *t = model_find(&m, "head.weight");
        ck_assert(memcmp(w->data, m.params + t->offset, t->size * sizeof(float)) == 0);
        if (!strcmp(files[i], "baseline")) {
            ck_assert_int_eq(c.model.img, 16); ck_assert_int_eq(c.model.dim, 16);
            ck_assert_int_eq(c.model.depth, 2); ck_assert_int_eq(c.model.heads, 2);
            ck_assert(c.run.seed == 1);
            ck_assert(c.model.mlp_ratio == 4.0f && c.model.rope_base == 100.0f);
        }
        model_free(&m);
        st_free(&st);
    }
    ck_assert_msg(found > 0, "no golden files in tests/golden (or $GOLDEN_DIR); they are part of the "
                             "repository, and `make golden-files` writes them again");
}
END_TEST

int main(void) {
    return run_tests("checkpoint", "checkpoint", 60, TESTS(test_round_trip, test_default_round_trip_and_count,
                                                           test_old_checkpoint_gets_defaults, test_mismatches,
                                                           test_checksums_catch_a_flipped_bit, test_golden_configs));
}
