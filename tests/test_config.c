// test_config.c: defaults, the key=value parser, validation and the
// metadata round trip of config.c.
#include "testutil.h"
#include <math.h>
#include <stdint.h>
#include "io/config_parse.h"
#include "nn/model.h"

static char err[1024];

// config_set must succeed; shows the message if it does not.
static void set_ok(Config *c, const char *kv) {
    err[0] = '\0';
    int rc = config_set(c, kv, err, sizeof err);
    ck_assert_msg(rc == 0, "config_set(%s) failed: %s", kv, err);
}

// config_set must fail with a message that contains `needle`, and leave c alone.
static void set_fails(const char *kv, const char *needle) {
    Config c = config_default(), before = c;
    err[0] = '\0';
    int rc = config_set(&c, kv, err, sizeof err);
    ck_assert_msg(rc == -1, "config_set(%s) should fail", kv);
    ck_assert_msg(strstr(err, needle) != NULL, "message for %s lacks '%s': %s", kv, needle, err);
    ck_assert_msg(memcmp(&c, &before, sizeof c) == 0, "failed config_set(%s) changed the config", kv);
}

START_TEST(test_defaults) {
    Config c = config_default();
    ck_assert_int_eq(c.model.img, 32); ck_assert_int_eq(c.model.channels, 3); ck_assert_int_eq(c.model.patch, 4);
    ck_assert_int_eq(c.model.dim, 128); ck_assert_int_eq(c.model.depth, 4); ck_assert_int_eq(c.model.heads, 4);
    ck_assert(c.model.mlp_ratio == 4.0f);
    ck_assert_int_eq(c.model.freq_dim, 256);
    ck_assert_int_eq(c.model.norm, NORM_LAYERNORM);
    ck_assert(!c.model.qk_norm);
    ck_assert_int_eq(c.model.mlp, MLP_GELU);
    ck_assert_int_eq(c.model.mlp_multiple_of, 1);
    ck_assert_int_eq(c.model.pos, POS_LEARNED);
    ck_assert(c.model.rope_base == 100.0f);
    ck_assert(c.model.bias);
    ck_assert(c.run.seed == 0);
    ck_assert(c.run.lr == 3e-4f);
    ck_assert(c.run.weight_decay == 0.0f);
    ck_assert_int_eq(c.run.batch, 128); ck_assert_int_eq(c.run.steps, 4000);
    ck_assert(c.run.flip);
    ck_assert_int_eq(c.run.threads, 0);
    ck_assert_int_eq(c.model.classes, 0);         // the unconditional model
    ck_assert(c.run.label_drop == 0.1f);
    ck_assert(c.run.guidance == 1.0f);
    // derived sizes
    ck_assert_int_eq(cfg_grid(&c.model), 8); ck_assert_int_eq(cfg_tokens(&c.model), 64);
    ck_assert_int_eq(cfg_head_dim(&c.model), 32); ck_assert_int_eq(cfg_patch_dim(&c.model), 48);
    ck_assert_int_eq(config_validate(&c, err, sizeof err), 0);
}
END_TEST

START_TEST(test_every_key_settable) {
    Config c = config_default();
    const char *sets[] = {"img=64", "channels=1", "patch=8", "dim=96", "depth=2", "heads=3",
                          "mlp_ratio=2.5", "freq_dim=64", "norm=rmsnorm", "qk_norm=true", "mlp=swiglu",
                          "mlp_multiple_of=32", "pos=rope2d", "rope_base=10000", "bias=false",
                          "seed=18446744073709551615", "lr=2e-3", "weight_decay=0.1", "batch=64",
                          "steps=1000", "flip=0", "threads=2", "classes=10", "label_drop=0.2", "guidance=3.5"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) set_ok(&c, sets[i]);
    ck_assert_int_eq(c.model.img, 64); ck_assert_int_eq(c.model.channels, 1); ck_assert_int_eq(c.model.patch, 8);
    ck_assert_int_eq(c.model.dim, 96); ck_assert_int_eq(c.model.depth, 2); ck_assert_int_eq(c.model.heads, 3);
    ck_assert(c.model.mlp_ratio == 2.5f);
    ck_assert_int_eq(c.model.freq_dim, 64);
    ck_assert_int_eq(c.model.norm, NORM_RMSNORM);
    ck_assert(c.model.qk_norm);
    ck_assert_int_eq(c.model.mlp, MLP_SWIGLU);
    ck_assert_int_eq(c.model.mlp_multiple_of, 32);
    ck_assert_int_eq(c.model.pos, POS_ROPE2D);
    ck_assert(c.model.rope_base == 10000.0f);
    ck_assert(!c.model.bias);
    ck_assert(c.run.seed == 18446744073709551615ULL);
    ck_assert(c.run.lr == 2e-3f);
    ck_assert(c.run.weight_decay == 0.1f);
    ck_assert_int_eq(c.run.batch, 64); ck_assert_int_eq(c.run.steps, 1000);
    ck_assert(!c.run.flip);
    ck_assert_int_eq(c.run.threads, 2);
    ck_assert_int_eq(c.model.classes, 10);
    ck_assert(c.run.label_drop == 0.2f);
    ck_assert(c.run.guidance == 3.5f);
    // and back
    set_ok(&c, "norm=layernorm"); set_ok(&c, "mlp=gelu"); set_ok(&c, "pos=learned");
    set_ok(&c, "qk_norm=false"); set_ok(&c, "bias=1"); set_ok(&c, "flip=true");
    ck_assert_int_eq(c.model.norm, NORM_LAYERNORM); ck_assert_int_eq(c.model.mlp, MLP_GELU);
    ck_assert_int_eq(c.model.pos, POS_LEARNED); ck_assert(!c.model.qk_norm); ck_assert(c.model.bias); ck_assert(c.run.flip);
}
END_TEST

// Values as the PyTorch reference writes them into golden metadata.
START_TEST(test_python_style_values) {
    Config c = config_default();
    set_ok(&c, "mlp_ratio=4.0"); ck_assert(c.model.mlp_ratio == 4.0f);
    set_ok(&c, "rope_base=100.0"); ck_assert(c.model.rope_base == 100.0f);
    set_ok(&c, "lr=1e-08"); ck_assert(c.run.lr == 1e-8f);
    set_ok(&c, "dim=32"); ck_assert_int_eq(c.model.dim, 32);
}
END_TEST

START_TEST(test_modern) {
    Config c = config_default();
    set_ok(&c, "modern");
    ck_assert_int_eq(c.model.norm, NORM_RMSNORM); ck_assert_int_eq(c.model.mlp, MLP_SWIGLU);
    ck_assert(c.model.qk_norm); ck_assert(!c.model.bias);
    ck_assert_int_eq(c.model.pos, POS_LEARNED);   // RoPE stays its own switch
    Config d = config_default();
    set_ok(&d, "modern=true");
    ck_assert(memcmp(&c, &d, sizeof c) == 0);
    set_fails("modern=false", "modern");
    set_fails("modern=maybe", "modern");
}
END_TEST

START_TEST(test_unknown_and_bad) {
    set_fails("dimm=128", "unknown config key 'dimm'");
    set_fails("dimm=128", "dim");          // lists the known keys
    set_fails("dim", "needs a value");
    set_fails("=3", "unknown");
    set_fails("norm=batchnorm", "layernorm | rmsnorm");
    set_fails("mlp=relu", "gelu | swiglu");
    set_fails("pos=sincos", "learned | rope2d");
    set_fails("qk_norm=yes", "true | false");
    set_fails("bias=", "bias");
    set_fails("norm=RMSNorm", "norm");     // names are case sensitive
}
END_TEST

START_TEST(test_strict_numbers) {
    set_fails("dim=12abc", "'12abc'");
    set_fails("dim=", "dim");
    set_fails("dim= 12", "dim");
    set_fails("dim=12 ", "dim");
    set_fails("dim=1.5", "dim");
    set_fails("dim=0", ">= 1");
    set_fails("dim=-128", "dim");
    set_fails("depth=0", "depth");
    set_fails("heads=0", "heads");
    set_fails("batch=0", "batch");
    set_fails("patch=-4", "patch");
    set_fails("threads=-1", "threads");
    set_fails("dim=99999999999999999999", "dim");
    set_fails("seed=-1", "seed");
    set_fails("seed=1x", "seed");
    set_fails("seed=99999999999999999999999", "seed");
    set_fails("data_seed=-2", ">= -1");
    set_fails("data_seed=1.5", "data_seed");
    set_fails("lr=nan", "lr");
    set_fails("lr=inf", "lr");
    set_fails("lr=-inf", "lr");
    set_fails("lr=1e99", "lr");          // overflows a float
    set_fails("lr=0", "> 0");
    set_fails("lr=-1e-3", "lr");
    set_fails("lr=3e-4x", "lr");
    set_fails("mlp_ratio=0", "mlp_ratio");
    set_fails("rope_base=-100", "rope_base");
    set_fails("weight_decay=-0.1", ">= 0");
    set_fails("label_drop=-0.1", "[0, 1]");
    set_fails("guidance=-1", ">= 0");
    set_fails("guidance=nan", "guidance");
    set_fails("guidance=inf", "finite");
    set_fails("classes=-1", "[0, 1000]");
    Config c = config_default();
    set_ok(&c, "weight_decay=0");
    set_ok(&c, "steps=0");               // evaluate only
    set_ok(&c, "threads=0");
    set_ok(&c, "seed=+7");
    ck_assert(c.run.seed == 7);
    ck_assert(c.run.data_seed == -1 && run_data_seed(&c.run) == 7);   // the default: the seed's order
    set_ok(&c, "data_seed=3");
    ck_assert(run_data_seed(&c.run) == 3 && c.run.seed == 7);
    RunConfig hand = c.run;
    hand.data_seed = -5;                 // filled in by hand, not by the parser
    char err[256];
    ck_assert_int_eq(run_config_check(&hand, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "data_seed"), "%s", err);
}
END_TEST

static Config with(const char *kv1, const char *kv2) {
    Config c = config_default();
    if (kv1) set_ok(&c, kv1);
    if (kv2) set_ok(&c, kv2);
    return c;
}

static void invalid(Config c, const char *needle) {
    err[0] = '\0';
    ck_assert_int_eq(config_validate(&c, err, sizeof err), -1);
    ck_assert_msg(strstr(err, needle) != NULL, "validate message lacks '%s': %s", needle, err);
}

START_TEST(test_validate) {
    Config c;
    c = with("heads=3", NULL); invalid(c, "heads");                 // 128 % 3
    c = with("patch=5", NULL); invalid(c, "patch");                 // 32 % 5
    c = with("dim=90", "heads=6"); invalid(c, "even");              // head_dim 15
    c = with("dim=72", "heads=4"); ck_assert_int_eq(config_validate(&c, err, sizeof err), 0); // hd 18
    c = with("dim=72", "pos=rope2d"); invalid(c, "multiple of 4");  // hd 18 with rope
    c = with("freq_dim=255", NULL); invalid(c, "freq_dim");
    // the deepest model a run can record, and one block more: refused by
    // depth's row, set or filled in by hand
    c = with("depth=64", NULL); ck_assert_int_eq(config_validate(&c, err, sizeof err), 0);
    set_fails("depth=65", "allowed: an integer in [1, 64]");
    c = config_default(); c.model.depth = 65; invalid(c, "depth=65: must be an integer in [1, 64]");
    // labels: up to TINYDIT_MAX_CLASSES; label_drop a probability; guidance >= 0
    c = with("classes=1000", NULL); ck_assert_int_eq(config_validate(&c, err, sizeof err), 0);
    set_fails("classes=1001", "allowed: an integer in [0, 1000]");
    c = config_default(); c.model.classes = -3; invalid(c, "classes=-3: must be an integer in [0, 1000]");
    c = with("label_drop=1", "guidance=0"); ck_assert_int_eq(config_validate(&c, err, sizeof err), 0);
    set_fails("label_drop=1.5", "[0, 1]");
    c = config_default(); c.run.label_drop = NAN; invalid(c, "label_drop=nan");
    c = config_default(); c.run.guidance = INFINITY; invalid(c, "guidance=inf");
    c = config_default(); c.run.guidance = -0.5f; invalid(c, "guidance=-0.5");
    // the 2026 recipe: a scale > 0, an EMA width in (0, 0.28] or 0 (none),
    // at least one sampler step, a sampler and a time distribution by name
    c = with("t_dist=logit_normal", "t_std=0.5"); ck_assert_int_eq(config_validate(&c, err, sizeof err), 0);
    c = with("ema=0.28", "sampler=heun"); ck_assert_int_eq(config_validate(&c, err, sizeof err), 0);
    set_fails("t_std=0", "allowed: a finite number > 0");
    set_fails("t_std=-1", "allowed: a finite number > 0");
    set_fails("ema=0.3", "allowed: a finite number in [0, 0.28]");
    set_fails("ema=-0.1", "allowed: a finite number in [0, 0.28]");
    set_fails("sample_steps=0", "allowed: an integer >= 1");
    set_fails("sampler=rk4", "euler | heun");
    set_fails("t_dist=normal", "uniform | logit_normal");
    c = config_default(); c.run.t_std = 0; invalid(c, "t_std=0: must be a finite number > 0");
    c = config_default(); c.run.ema = 0.5f; invalid(c, "ema=0.5: must be a finite number in [0, 0.28]");
    c = config_default(); c.run.sample_steps = 0; invalid(c, "sample_steps=0");
    c = config_default(); c.run.sampler = (SamplerKind)2; invalid(c, "sampler");
    // Fields filled in by hand are checked too.
    c = config_default(); c.model.dim = 0; invalid(c, "dim");
    c = config_default(); c.run.batch = -1; invalid(c, "batch");
    c = config_default(); c.run.lr = NAN; invalid(c, "lr");
    c = config_default(); c.model.norm = (NormKind)7; invalid(c, "norm");
    c = config_default(); c.model.mlp_ratio = 0.001f; invalid(c, "hidden");
    // Every tutorial variant is valid.
    const char *variants[] = {"norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", "modern"};
    for (int i = 0; i < 5; i++) {
        c = with(variants[i], NULL);
        ck_assert_msg(config_validate(&c, err, sizeof err) == 0, "%s: %s", variants[i], err);
    }
}
END_TEST

START_TEST(test_mlp_hidden) {
    Config c = config_default();
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 512);
    set_ok(&c, "mlp=swiglu");
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 341);                  // int(2*4*128/3)
    set_ok(&c, "mlp_multiple_of=64");
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 384);                  // 341 -> 384
    set_ok(&c, "dim=384");
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 1024);                 // exactly 1024, no rounding up
    set_ok(&c, "mlp_multiple_of=1");
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 1024);
    set_ok(&c, "dim=512");
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 1365);
    set_ok(&c, "mlp_multiple_of=64");
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 1408);
    set_ok(&c, "mlp=gelu");                                      // multiple_of only affects SwiGLU
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 2048);
    set_ok(&c, "mlp_ratio=2.5"); set_ok(&c, "dim=128");
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 320);
}
END_TEST

// config_foreach_field -> config_set reproduces the config bit for bit.
static void apply_field(const char *key, const char *value, void *ctx) {
    char kv[256];
    snprintf(kv, sizeof kv, "%s=%s", key, value);
    set_ok((Config *)ctx, kv);
}

static void count_field(const char *key, const char *value, void *ctx) {
    (*(int *)ctx)++;
    ck_assert_ptr_nonnull(key); ck_assert_ptr_nonnull(value);
    ck_assert(strcmp(key, "modern") != 0);
}

START_TEST(test_round_trip) {
    Config a = config_default();
    const char *sets[] = {"img=48", "patch=6", "dim=120", "heads=5", "depth=3", "mlp_ratio=2.6666667",
                          "freq_dim=130", "norm=rmsnorm", "qk_norm=true", "mlp=swiglu",
                          "mlp_multiple_of=7", "rope_base=123.456", "bias=false", "seed=12345678901234", "data_seed=5",
                          "lr=0.000123456789", "weight_decay=0.3", "batch=17", "steps=33", "flip=false",
                          "threads=3", "channels=1", "ada=zero", "classes=7", "label_drop=0.3", "guidance=2.5",
                          "t_dist=logit_normal", "t_mean=-0.5", "t_std=0.8", "ema=0.1", "sampler=heun",
                          "sample_steps=7"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) set_ok(&a, sets[i]);
    Config b = config_default();
    config_foreach_field(&a, apply_field, &b);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    // and the defaults themselves
    Config d = config_default(), e = config_default();
    set_ok(&e, "modern"); set_ok(&e, "pos=rope2d");
    config_foreach_field(&d, apply_field, &e);
    ck_assert(memcmp(&d, &e, sizeof d) == 0);
    int n = 0;
    config_foreach_field(&d, count_field, &n);
    ck_assert_int_eq(n, 34);   // every field of Config
}
END_TEST

// Floats print as typed: the fewest digits that read back as the same
// float, learning rates in the exponent form; and every float reads back.
START_TEST(test_float_as_given) {
    struct { float v; const char *text; } cases[] = {
        { 3e-4f, "3e-4" }, { 2e-3f, "2e-3" }, { 1e-5f, "1e-5" }, { 0.1f, "0.1" }, { 4.0f, "4" },
        { 100.0f, "100" }, { 2.6666667f, "2.6666667" }, { 0.0f, "0" }, { 1.5e-4f, "1.5e-4" },
        { 1e20f, "1e+20" }, { 0.02f, "0.02" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        format_float_shortest(cases[i].v, out, sizeof out);
        ck_assert_str_eq(out, cases[i].text);
        ck_assert(strtof(out, NULL) == cases[i].v);
    }
    // any float reads back bit for bit
    uint32_t bits = 0x3f800001u;
    for (int i = 0; i < 2000; i++, bits = bits * 2654435761u + 12345u) {
        float v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v)) continue;
        char out[64];
        format_float_shortest(v, out, sizeof out);
        float back = strtof(out, NULL);
        ck_assert_msg(memcmp(&back, &v, sizeof v) == 0 || (v == 0 && back == 0), "%s", out);
    }
}
END_TEST

START_TEST(test_describe_and_keys) {
    Config c = config_default();
    char line[1024];
    config_describe(&c, line, sizeof line);
    ck_assert_ptr_null(strchr(line, '\n'));
    ck_assert_ptr_nonnull(strstr(line, "dim=128"));
    ck_assert_ptr_nonnull(strstr(line, "norm=layernorm"));
    ck_assert_ptr_nonnull(strstr(line, "lr=3e-4 "));   // as the preset gives it, not 0.000300000014
    char small[16];
    config_describe(&c, small, sizeof small);   // truncates safely
    ck_assert(strlen(small) < sizeof small);

    char *buf = NULL; size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    config_print_keys(&c, f);
    fclose(f);
    const char *keys[] = {"img", "rope_base", "mlp_multiple_of", "modern", "threads", "rmsnorm"};
    for (int i = 0; i < 6; i++) ck_assert_msg(strstr(buf, keys[i]), "key list lacks %s", keys[i]);
    free(buf);
}
END_TEST

// The two parts: which keys are whose, each part's own check, the one entry
// point for a list of settings, and what a resume takes from where.
START_TEST(test_model_and_run_parts) {
    const char *model_keys[] = {"img", "dim", "depth", "norm", "qk_norm", "mlp", "pos", "bias", "ada", "classes"};
    const char *run_keys[] = {"seed", "data_seed", "lr", "weight_decay", "batch", "flip", "label_drop", "steps",
                              "val_every", "threads"};
    for (int i = 0; i < 10; i++) ck_assert(config_find_key(model_keys[i])->part == PART_MODEL);
    for (int i = 0; i < 10; i++) ck_assert(config_find_key(run_keys[i])->part == PART_RUN);
    ck_assert_ptr_null(config_find_key("train.step"));
    int n_model = 0, n_run = 0;
    Config d = config_default();
    model_config_foreach_field(&d.model, count_field, &n_model);
    run_config_foreach_field(&d.run, count_field, &n_run);
    ck_assert_int_eq(n_model, 17);
    ck_assert_int_eq(n_run, 17);

    // each part checks itself
    ModelConfig m = model_config_default();
    ck_assert_int_eq(model_config_check(&m, err, sizeof err), 0);
    m.heads = 3;
    ck_assert_int_eq(model_config_check(&m, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "heads=3"), "%s", err);
    RunConfig r = run_config_default();
    ck_assert_int_eq(run_config_check(&r, err, sizeof err), 0);
    r.batch = 0;
    ck_assert_int_eq(run_config_check(&r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "batch=0"), "%s", err);

    // config_apply: every setting, then one check; a failure changes nothing
    Config c = config_default(), before = c;
    const char *good[] = {"dim=64", "lr=1e-3", "modern", "steps=10"};
    ck_assert_msg(config_apply(&c, good, 4, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.model.dim, 64); ck_assert(c.run.lr == 1e-3f); ck_assert_int_eq(c.run.steps, 10);
    ck_assert_int_eq(c.model.norm, NORM_RMSNORM);
    before = c;
    const char *unknown[] = {"dim=32", "colour=red"}, *misfit[] = {"dim=32", "heads=3"};
    ck_assert_int_eq(config_apply(&c, unknown, 2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "unknown config key 'colour'"), "%s", err);
    ck_assert_int_eq(config_apply(&c, misfit, 2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "dim=32 is not a multiple of heads=3"), "%s", err);
    ck_assert(memcmp(&c, &before, sizeof c) == 0);

    // a resume: the checkpoint's model and what its run computes, the
    // options' steps, val_every and threads
    Config saved = config_default(), given = config_default();
    const char *s_sets[] = {"dim=32", "seed=1", "lr=3e-4", "batch=16", "flip=false", "steps=60", "threads=1"};
    const char *g_sets[] = {"dim=64", "seed=2", "lr=1e-3", "batch=64", "steps=200", "val_every=50", "threads=2"};
    ck_assert(config_apply(&saved, s_sets, 7, err, sizeof err) == 0 && config_apply(&given, g_sets, 7, err, sizeof err) == 0);
    Config res = config_for_resume(&saved, &given);
    ck_assert(memcmp(&res.model, &saved.model, sizeof res.model) == 0);
    ck_assert(res.run.seed == 1 && res.run.lr == 3e-4f && res.run.batch == 16 && !res.run.flip);
    ck_assert_int_eq(res.run.steps, 200); ck_assert_int_eq(res.run.val_every, 50); ck_assert_int_eq(res.run.threads, 2);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(config_find_key(run_keys[i])->resume == FROM_OPTIONS,
                         !strcmp(run_keys[i], "steps") || !strcmp(run_keys[i], "val_every") || !strcmp(run_keys[i], "threads"));
    ck_assert(config_find_key("dim")->resume == FROM_CHECKPOINT);
}
END_TEST

// The sampling part: guidance is checked like any key; a resume takes the
// options' value; two runs that differ in it are two configs, while the
// thread count and val_every leave one run, and the seeds make a seed pair.
START_TEST(test_sampling_part_and_what_runs_differ_in) {
    Config c = config_default();
    ck_assert(c.run.guidance == 1.0f);
    ck_assert(config_find_key("guidance")->part == PART_SAMPLING);
    set_ok(&c, "guidance=0");
    set_ok(&c, "guidance=7.5");
    ck_assert(c.run.guidance == 7.5f);
    set_fails("guidance=-1", ">= 0");
    set_fails("guidance=inf", "guidance");
    c.run.guidance = NAN;                // filled in by hand
    ck_assert_int_eq(run_config_check(&c.run, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "guidance=nan"), "%s", err);

    Config saved = config_default(), given = config_default();
    set_ok(&given, "guidance=3");
    ck_assert(config_for_resume(&saved, &given).run.guidance == 3.0f);
    ck_assert(!configs_agree(&saved, &given, true));
    given = saved;
    set_ok(&given, "threads=3");
    set_ok(&given, "val_every=10");
    ck_assert(configs_agree(&saved, &given, false));
    set_ok(&given, "data_seed=4");
    ck_assert(!configs_agree(&saved, &given, false) && configs_agree(&saved, &given, true));
    set_ok(&given, "steps=10");
    ck_assert(!configs_agree(&saved, &given, true));
}
END_TEST

// One depth limit, depth's bound: every depth it allows builds (the tensor
// table grows with the model), the next one is refused with the bound.
START_TEST(test_one_depth_limit) {
    Config c = config_default();
    set_ok(&c, "dim=32"); set_ok(&c, "heads=2");
    const char *depths[] = { "depth=13", "depth=64" };
    for (int i = 0; i < 2; i++) {
        set_ok(&c, depths[i]);
        Model m;
        ck_assert_msg(model_build(&m, &c.model, err, sizeof err) == 0, "%s: %s", depths[i], err);
        ck_assert_int_eq(m.n_params, model_count_params(&c.model));
        ck_assert_str_eq(m.tensors[m.n_tensors - 1].name, "head.bias");
        model_free(&m);
    }
    c.model.depth = 65;
    Model m;
    ck_assert_int_eq(model_build(&m, &c.model, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "depth=65: must be an integer in [1, 64]"), "%s", err);
}
END_TEST

START_TEST(test_set_or_exit) {
    Config c = config_default();
    config_set_or_exit(&c, "dim=64");
    ck_assert_int_eq(c.model.dim, 64);
    config_set_or_exit(&c, "nonsense=1");   // exits 2 (tcase_add_exit_test)
}
END_TEST

int main(void) {
    Suite *s = suite_create("config");
    TCase *tc = add_tests(s, "config", 0, TESTS(test_defaults, test_every_key_settable, test_python_style_values,
                                                test_modern, test_unknown_and_bad, test_strict_numbers, test_validate,
                                                test_mlp_hidden, test_round_trip, test_describe_and_keys,
                                                test_model_and_run_parts, test_float_as_given,
                                                test_sampling_part_and_what_runs_differ_in, test_one_depth_limit));
    tcase_add_exit_test(tc, test_set_or_exit, 2);
    return run_suite(s);
}
