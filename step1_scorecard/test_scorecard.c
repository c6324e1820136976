// test_scorecard.c: step 1's scorecard on made-up runs.
//
// Every metrics.json here is written by the test with known numbers, so what
// the reader returns and what step1_scorecard prints can be checked exactly:
//   - common/io/metrics.c reads the five scorecard fields and the extras, and
//     refuses a file that lacks one (naming the file and the field);
//   - the seed gap is |val MSE(s0) − val MSE(s1)| of two runs that are one
//     config at two seeds, and only of such runs;
//   - the program: --help, bad arguments (exit 2), a missing metrics.json
//     (exit 1, naming it), a table of given runs, and the default mode
//     finding finished baseline runs instead of training them again.
// No data and no training: the finished runs are a made-up metrics.json
// next to a checkpoint that says it is done.
#include <cJSON.h>
#include <unistd.h>
#include "io/args.h"
#include "io/checkpoint.h"
#include "io/figure.h"
#include "io/fileio.h"
#include "io/metrics.h"
#include "io/paths.h"
#include "testutil.h"
#include "step1.h"
#include "train/trainer.h"

static char g_tmp[256];

static void make_tmp(void) { tmpdir_make(g_tmp, sizeof g_tmp, "scorecard"); }
static void remove_tmp(void) { tmpdir_remove(g_tmp); }

// The baseline config of a preset at a seed, as a run would have it.
static Config baseline(Preset p, unsigned long long seed) {
    Config c;
    int every;
    preset_apply(p, &c, &every);
    c.run.seed = seed;
    return c;
}

static void add_field(const char *key, const char *value, void *obj) {
    cJSON_AddStringToObject((cJSON *)obj, key, value);
}

// A metrics.json in the trainer's schema with the given numbers; cfg NULL
// leaves out the extras (a file as the tutorial's own scripts would write).
// drop: a required field to leave out ("params", "val_mse", ...) or NULL.
// The probe it names: the shipped probe's key at g_probe_acc (the shipped
// one's unless a test says otherwise), no fingerprint (as the project's older
// runs recorded it), or g_probe_weights when set (as the trainer records the
// shipped probe).
#define SHIPPED_ACC 0.6147000193595886      // a float32 0.6147 as metrics.json keeps it
static double g_probe_acc = SHIPPED_ACC;
static const char *g_probe_weights = NULL;
static void write_metrics(const char *dir, const char *name, const Config *cfg, double val_mse,
                          double probe_fd, double it_per_s, int spikes, const char *drop) {
    char path[600], err[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(make_dirs(path, err, sizeof err), 0);
    cJSON *root = cJSON_CreateObject();
    if (cfg) cJSON_AddStringToObject(root, "name", name);
    if (!drop || strcmp(drop, "params")) cJSON_AddNumberToObject(root, "params", 1152176);
    if (!drop || strcmp(drop, "it_per_s")) cJSON_AddNumberToObject(root, "it_per_s", it_per_s);
    if (!drop || strcmp(drop, "loss_spikes")) cJSON_AddNumberToObject(root, "loss_spikes", spikes);
    cJSON *raw = cJSON_AddObjectToObject(root, "raw");
    if (!drop || strcmp(drop, "val_mse")) cJSON_AddNumberToObject(raw, "val_mse", val_mse);
    cJSON *uncond = cJSON_AddObjectToObject(raw, "uncond");
    if (!drop || strcmp(drop, "probe_fd")) {
        if (isfinite(probe_fd)) cJSON_AddNumberToObject(uncond, "probe_fd", probe_fd);
        else cJSON_AddNullToObject(uncond, "probe_fd");
    }
    if (cfg) {
        cJSON_AddStringToObject(root, "preset", "smoke");
        cJSON_AddNumberToObject(root, "seed", (double)cfg->run.seed);
        config_foreach_field(cfg, add_field, cJSON_AddObjectToObject(root, "config"));
        cJSON *probe = cJSON_AddObjectToObject(root, "probe");
        cJSON_AddStringToObject(probe, "key", "2c20f3f74af509e0");
        cJSON_AddNumberToObject(probe, "test_acc", g_probe_acc);
        if (g_probe_weights) {
            cJSON_AddStringToObject(probe, "weights", g_probe_weights);
            cJSON_AddStringToObject(probe, "source", "shipped");
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    snprintf(path, sizeof path, "%s/%s/metrics.json", dir, name);
    ck_assert_int_eq(write_file_atomic(path, text, strlen(text), err, sizeof err), 0);
    free(text);
}

static void write_text(const char *dir, const char *name, const char *text) {
    char path[600], err[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(make_dirs(path, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/%s/metrics.json", dir, name);
    ck_assert_int_eq(write_file_atomic(path, text, strlen(text), err, sizeof err), 0);
}

static int read_run(const char *dir, const char *name, RunMetrics *r, char *err, size_t errlen) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return metrics_read(path, r, err, errlen);
}

// ---------------------------------------------------------------------------
// The reader.
START_TEST(test_reads_every_field) {
    make_tmp();
    Config c = baseline(PRESET_SMOKE, 1);
    write_metrics(g_tmp, "a", &c, 0.2833, 70.5, 6.7, 2, NULL);
    RunMetrics r;
    char err[METRICS_ERRLEN];
    ck_assert_msg(read_run(g_tmp, "a", &r, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(r.name, "a");
    ck_assert_int_eq(r.params, 1152176);
    ck_assert(r.val_mse == 0.2833);
    ck_assert(r.probe_fd == 70.5);
    ck_assert(fabs(r.ms_per_step - 1000.0 / 6.7) < 1e-9);
    ck_assert_int_eq(r.loss_spikes, 2);
    ck_assert_str_eq(r.preset, "smoke");
    ck_assert(r.has_config);
    char d1[1024], d2[1024];
    config_describe(&r.cfg, d1, sizeof d1);
    config_describe(&c, d2, sizeof d2);
    ck_assert_str_eq(d1, d2);
    ck_assert_str_eq(r.probe_key, "2c20f3f74af509e0");
    ck_assert(r.probe_test_acc == SHIPPED_ACC);
    ck_assert_str_eq(r.probe_weights, "");   // older runs recorded none
    g_probe_weights = "0011223344556677";
    write_metrics(g_tmp, "b", &c, 0.2833, 70.5, 6.7, 2, NULL);
    g_probe_weights = NULL;
    ck_assert_msg(read_run(g_tmp, "b", &r, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(r.probe_weights, "0011223344556677");
    ck_assert_str_eq(r.probe_source, "shipped");

    // the file itself, not its folder, reads the same
    char path[600];
    snprintf(path, sizeof path, "%s/a/metrics.json", g_tmp);
    RunMetrics again;
    ck_assert_int_eq(metrics_read(path, &again, err, sizeof err), 0);
    ck_assert(again.val_mse == r.val_mse);

    // the tutorial's minimal schema: no name (the folder's), no config, and a
    // probe-FD of null (no probe) reads as NAN
    write_metrics(g_tmp, "tutorial_style", NULL, 0.2562, NAN, 6.7, 0, NULL);
    ck_assert_msg(read_run(g_tmp, "tutorial_style", &r, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(r.name, "tutorial_style");
    ck_assert(!r.has_config);
    ck_assert(isnan(r.probe_fd));
    ck_assert(isnan(r.probe_test_acc));
    remove_tmp();
}
END_TEST

START_TEST(test_missing_fields_are_errors) {
    make_tmp();
    Config c = baseline(PRESET_SMOKE, 0);
    const char *required[5] = { "params", "val_mse", "probe_fd", "it_per_s", "loss_spikes" };
    const char *dotted[5] = { "\"params\"", "\"raw.val_mse\"", "\"raw.uncond.probe_fd\"", "\"it_per_s\"",
                              "\"loss_spikes\"" };
    RunMetrics r;
    char err[METRICS_ERRLEN];
    for (int i = 0; i < 5; i++) {
        write_metrics(g_tmp, required[i], &c, 0.28, 70.0, 6.7, 0, required[i]);
        ck_assert_int_eq(read_run(g_tmp, required[i], &r, err, sizeof err), -1);
        ck_assert_msg(strstr(err, dotted[i]) && strstr(err, "metrics.json"), "message: %s", err);
    }
    write_text(g_tmp, "wrong_type", "{\"params\": 1, \"it_per_s\": 2, \"loss_spikes\": 0,"
                                    " \"raw\": {\"val_mse\": \"0.28\", \"uncond\": {\"probe_fd\": 1}}}");
    ck_assert_int_eq(read_run(g_tmp, "wrong_type", &r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "wrong type") && strstr(err, "raw.val_mse"), "message: %s", err);
    write_text(g_tmp, "not_json", "val MSE 0.28\n");
    ck_assert_int_eq(read_run(g_tmp, "not_json", &r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "not a JSON object"), "message: %s", err);
    ck_assert_int_eq(read_run(g_tmp, "no_such_run", &r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "no_such_run/metrics.json: no such file"), "message: %s", err);
    remove_tmp();
}
END_TEST

// ---------------------------------------------------------------------------
// The seed gap, and which pairs have one.
START_TEST(test_seed_gap) {
    make_tmp();
    Config s0 = baseline(PRESET_SMOKE, 0), s1 = baseline(PRESET_SMOKE, 1), qk = s1;
    qk.model.qk_norm = true;
    Config s1_threads = s1;
    s1_threads.run.threads = 3;
    write_metrics(g_tmp, "s0", &s0, 0.2812, 72.2, 6.7, 0, NULL);
    write_metrics(g_tmp, "s1", &s1, 0.2833, 70.5, 6.6, 0, NULL);
    write_metrics(g_tmp, "s1_threads", &s1_threads, 0.2833, 70.5, 6.6, 0, NULL);
    write_metrics(g_tmp, "qk", &qk, 0.2700, 75.0, 5.0, 0, NULL);
    write_metrics(g_tmp, "bare", NULL, 0.2700, 75.0, 5.0, 0, NULL);
    RunMetrics a, b, t, q, bare;
    char err[METRICS_ERRLEN];
    ck_assert_int_eq(read_run(g_tmp, "s0", &a, err, sizeof err), 0);
    ck_assert_int_eq(read_run(g_tmp, "s1", &b, err, sizeof err), 0);
    ck_assert_int_eq(read_run(g_tmp, "s1_threads", &t, err, sizeof err), 0);
    ck_assert_int_eq(read_run(g_tmp, "qk", &q, err, sizeof err), 0);
    ck_assert_int_eq(read_run(g_tmp, "bare", &bare, err, sizeof err), 0);

    ck_assert(metrics_val_mse_gap(&a, &b) == fabs(0.2812 - 0.2833));
    ck_assert(metrics_val_mse_gap(&b, &a) == metrics_val_mse_gap(&a, &b));
    ck_assert(fabs(metrics_val_mse_gap(&a, &b) - 0.0021) < 1e-12);
    ck_assert(metrics_is_seed_pair(&a, &b));
    ck_assert(metrics_is_seed_pair(&a, &t));      // the thread count is not part of the model
    ck_assert(!metrics_is_seed_pair(&b, &t));     // same seed: not a pair
    ck_assert(!metrics_is_seed_pair(&a, &q));     // another config: not a seed gap
    ck_assert(!metrics_is_seed_pair(&a, &bare));  // no config: cannot tell
    remove_tmp();
}
END_TEST

// Which probe-FDs compare: one probe's only. The key and the test accuracy
// must both agree, and the fingerprints of the weights where both runs
// recorded one (older runs recorded none).
START_TEST(test_same_probe) {
    RunMetrics a, b;
    memset(&a, 0, sizeof a);
    snprintf(a.probe_key, sizeof a.probe_key, "2c20f3f74af509e0");
    a.probe_test_acc = 0.6129000186920166;   // a float32 0.6129 as metrics.json keeps it
    b = a;
    ck_assert(metrics_same_probe(&a, &b));
    b.probe_test_acc = 0.6147000193595886;   // the same key, another training
    ck_assert(!metrics_same_probe(&a, &b));
    b = a;
    snprintf(b.probe_weights, sizeof b.probe_weights, "0011223344556677");
    ck_assert(metrics_same_probe(&a, &b) && metrics_same_probe(&b, &a));
    b.probe_test_acc = 0.6147000193595886;
    ck_assert(!metrics_same_probe(&a, &b) && !metrics_same_probe(&b, &a));
    b.probe_test_acc = a.probe_test_acc;
    a = b;
    ck_assert(metrics_same_probe(&a, &b));
    snprintf(b.probe_weights, sizeof b.probe_weights, "0011223344556678");
    ck_assert(!metrics_same_probe(&a, &b));
    b = a;
    b.probe_test_acc = NAN;
    ck_assert(!metrics_same_probe(&a, &b));

    char label[160];
    snprintf(a.probe_source, sizeof a.probe_source, "shipped");
    metrics_probe_label(&a, label, sizeof label);
    ck_assert_str_eq(label, "the shipped probe (weights 0011223344556677, test accuracy 61.29%)");
    snprintf(a.probe_source, sizeof a.probe_source, "trained");
    metrics_probe_label(&a, label, sizeof label);
    ck_assert_str_eq(label, "probe 2c20f3f74af509e0 (trained, weights 0011223344556677, test accuracy 61.29%)");
    a.probe_weights[0] = 0;
    metrics_probe_label(&a, label, sizeof label);
    ck_assert_str_eq(label, "probe 2c20f3f74af509e0 (test accuracy 61.29%, weights not recorded)");
    memset(&a, 0, sizeof a);
    a.probe_test_acc = NAN;
    metrics_probe_label(&a, label, sizeof label);
    ck_assert_str_eq(label, "no probe recorded");
}
END_TEST

// The table row: the tutorial's columns, with a thousands separator and a
// dash for a missing probe-FD.
START_TEST(test_print_row) {
    make_tmp();
    Config c = baseline(PRESET_SMOKE, 0);
    write_metrics(g_tmp, "s0", &c, 0.2812, 72.2, 6.7, 3, NULL);
    write_metrics(g_tmp, "noprobe", &c, 0.2812, NAN, 6.7, 3, NULL);
    RunMetrics r, n;
    char err[METRICS_ERRLEN];
    ck_assert_int_eq(read_run(g_tmp, "s0", &r, err, sizeof err), 0);
    ck_assert_int_eq(read_run(g_tmp, "noprobe", &n, err, sizeof err), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    metrics_print_header(f);
    metrics_print_row(f, NULL, &r, false);
    metrics_print_row(f, "label", &n, false);
    metrics_print_row(f, "by_another", &r, true);
    fclose(f);
    const char *want[] = { "run", "params", "val MSE", "probe-FD", "ms/step", "spikes",
                           "s0", "1,152,176", "0.2812", "72.2", "149.3", "3", "label" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(buf, want[i]), "'%s' not in:\n%s", want[i], buf);
    const char *last = strstr(buf, "label");
    ck_assert_msg(strstr(last, " - "), "no dash for a missing probe-FD:\n%s", buf);
    // a probe-FD by another probe than the table's is not printed
    const char *other = strstr(buf, "by_another");
    ck_assert_msg(other && strstr(other, "other probe") && !strstr(other, "72.2"), "%s", buf);
    free(buf);
    remove_tmp();
}
END_TEST

// ---------------------------------------------------------------------------
// The program itself.

typedef struct { int code; char *out, *err; } Ran;

static Ran run(const char *args) {
    Ran r = { run_program("", "step1_scorecard/step1_scorecard", args, g_tmp), NULL, NULL };
    char o[400], e[400], err[600];
    snprintf(o, sizeof o, "%s/out.txt", g_tmp);
    snprintf(e, sizeof e, "%s/err.txt", g_tmp);
    size_t len;
    r.out = read_file_all(o, &len, err, sizeof err);
    r.err = read_file_all(e, &len, err, sizeof err);
    ck_assert(r.out && r.err);
    return r;
}

static void ran_free(Ran *r) { free(r->out); free(r->err); }

START_TEST(test_program_arguments) {
    make_tmp();
    Ran r = run("--help");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "usage: step1_scorecard"));
    ran_free(&r);
    const char *bad[] = { "--bogus", "--preset", "--preset huge", "--threads -1", "--threads x",
                          "--preset smoke some_run" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = run(bad[i]);
        ck_assert_msg(r.code == 2, "'%s' exited %d", bad[i], r.code);
        ck_assert_msg(strstr(r.err, "usage:") || strstr(r.err, "presets:"), "'%s': no usage:\n%s", bad[i], r.err);
        ran_free(&r);
    }
    char args[600];
    snprintf(args, sizeof args, "'%s/nowhere'", g_tmp);
    r = run(args);
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "nowhere/metrics.json"), "the message does not name the file:\n%s", r.err);
    ran_free(&r);
    remove_tmp();
}
END_TEST

// The commands it prints work where they are printed: from the root, from
// the program's own folder, from another step's folder, from elsewhere.
// And a smoke baseline draws into figures/smoke, never over a real run's.
START_TEST(test_commands_where_printed_and_smoke_figures) {
    char here[4096], out[4096], want[4200];
    ck_assert_ptr_nonnull(getcwd(here, sizeof here));
    static const struct { const char *dir, *printed; } CASES[] = {
        { "", "step1_scorecard/step1_scorecard" },
        { "step1_scorecard", "./step1_scorecard" },
        { "step3_qknorm", "../step1_scorecard/step1_scorecard" },
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s", project_root(), CASES[i].dir);
        ck_assert_int_eq(chdir(dir), 0);
        project_command(out, sizeof out, "step1_scorecard/step1_scorecard");
        ck_assert_str_eq(out, CASES[i].printed);
    }
    ck_assert_int_eq(chdir("/"), 0);
    project_command(out, sizeof out, "step1_scorecard/step1_scorecard");
    ck_assert_msg(out[0] == '/' && strstr(out, "/step1_scorecard/step1_scorecard"), "%s", out);
    ck_assert_int_eq(chdir(here), 0);

    Step1Options o;
    char *smoke[] = { "step1_scorecard", "--preset", "smoke", NULL };
    ck_assert_int_eq(step1_parse_options(3, smoke, &o), ARGS_OK);
    snprintf(want, sizeof want, "%s/smoke", figure_default_dir());
    ck_assert_str_eq(o.plan.figures, want);
    char *quick[] = { "step1_scorecard", "--preset", "quick", NULL };
    ck_assert_int_eq(step1_parse_options(3, quick, &o), ARGS_OK);
    ck_assert_str_eq(o.plan.figures, figure_default_dir());
    char *given[] = { "step1_scorecard", "--preset", "smoke", "--figures", "/tmp/f", NULL };
    ck_assert_int_eq(step1_parse_options(5, given, &o), ARGS_OK);
    ck_assert_str_eq(o.plan.figures, "/tmp/f");
}
END_TEST

// No arguments: the committed seeds of results/quick, nothing trained,
// nothing written, and the command that trains your own.
START_TEST(test_program_default_is_the_committed_runs) {
    make_tmp();
    Ran r = run("");
    ck_assert_msg(r.code == 0, "exit %d:\n%s", r.code, r.err);
    const char *want[] = { "committed baseline seeds (results/quick", "p11_base_s0", "p11_base_s1",
                           "from 3 seeds", "train your own: ./step1_scorecard --preset quick" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.out, want[i]), "'%s' not in:\n%s", want[i], r.out);
    ck_assert_msg(!strstr(r.out, "figures:"), "drew figures unasked:\n%s", r.out);
    ran_free(&r);
    remove_tmp();
}
END_TEST

START_TEST(test_program_prints_given_runs) {
    make_tmp();
    Config s0 = baseline(PRESET_SMOKE, 0), s1 = baseline(PRESET_SMOKE, 1), qk = s0;
    qk.model.qk_norm = true;
    write_metrics(g_tmp, "base_s0", &s0, 0.2812, 72.2, 6.7, 0, NULL);
    write_metrics(g_tmp, "base_s1", &s1, 0.2833, 70.5, 6.6, 1, NULL);
    write_metrics(g_tmp, "qknorm", &qk, 0.2790, 75.0, 5.2, 0, NULL);
    char args[1200];
    snprintf(args, sizeof args, "'%s/base_s0' '%s/base_s1' '%s/qknorm' --no-figures", g_tmp, g_tmp, g_tmp);
    Ran r = run(args);
    ck_assert_msg(r.code == 0, "exit %d:\n%s", r.code, r.err);
    const char *want[] = { "base_s0", "base_s1", "qknorm", "0.2812", "0.2833", "0.2790", "72.2", "70.5",
                           "seed gap", "= 0.0021",
                           "by the shipped probe (weights f2043fe15e1cb445, test accuracy 61.47%)",
                           "what the numbers are" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.out, want[i]), "'%s' not in:\n%s", want[i], r.out);
    // one seed pair among the three: one seed gap line
    const char *gap = strstr(r.out, "seed gap |");
    ck_assert_ptr_nonnull(gap);
    ck_assert_ptr_null(strstr(gap + 1, "seed gap |"));
    ran_free(&r);

    snprintf(args, sizeof args, "'%s/base_s0' '%s/qknorm'", g_tmp, g_tmp);
    r = run(args);
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(strstr(r.out, "no seed gap"), "%s", r.out);
    ran_free(&r);

    // a run scored by another probe (the same key, another accuracy): its
    // probe-FD is not printed beside the others, and the legend names its probe
    g_probe_acc = 0.6129;
    write_metrics(g_tmp, "other_probe", &s1, 0.2800, 60.0, 6.6, 0, NULL);
    g_probe_acc = SHIPPED_ACC;
    snprintf(args, sizeof args, "'%s/base_s0' '%s/other_probe' --no-figures", g_tmp, g_tmp);
    r = run(args);
    ck_assert_int_eq(r.code, 0);
    const char *row = strstr(r.out, "other_probe ");
    ck_assert_msg(row && strstr(row, "other probe") && !strstr(r.out, "60.0"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "other_probe: by another probe, not compared with these:\n"
                                "              probe 2c20f3f74af509e0 (test accuracy 61.29%"), "%s", r.out);
    ran_free(&r);

    // a file with a field missing: exit 1, naming the file and the field
    write_metrics(g_tmp, "broken", &s0, 0.28, 70.0, 6.7, 0, "val_mse");
    snprintf(args, sizeof args, "'%s/base_s0' '%s/broken'", g_tmp, g_tmp);
    r = run(args);
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "broken/metrics.json") && strstr(r.err, "raw.val_mse"), "%s", r.err);
    ran_free(&r);
    remove_tmp();
}
END_TEST

// A finished run without training: its made-up metrics.json, and a
// checkpoint whose trainer state says all its steps are done.
static void finished_run(const char *dir, const char *name, const Config *cfg, double val_mse) {
    char path[600], err[1024];
    Model m;
    ck_assert_msg(model_build(&m, &cfg->model, err, sizeof err) == 0, "%s", err);
    model_init_weights(&m, cfg->run.seed);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(make_dirs(path, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/%s/ckpt.safetensors", dir, name);
    char steps[32];
    snprintf(steps, sizeof steps, "%d", cfg->run.steps);
    CheckpointMeta meta[1] = { { "train.step", steps } };
    ck_assert_msg(checkpoint_save(path, &m, &cfg->run, NULL, 0, meta, 1, err, sizeof err) == 0, "%s", err);
    model_free(&m);
    write_metrics(dir, name, cfg, val_mse, 80.0, 40.0, 0, NULL);
    // a loss curve that falls, a little different for every seed
    snprintf(path, sizeof path, "%s/%s/loss.tsv", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "step\tloss\tgrad_norm\tmax_logit\n");
    Rng r;
    rng_seed(&r, 50 + cfg->run.seed);
    for (int s = 1; s <= cfg->run.steps; s++)
        fprintf(f, "%d\t%.6f\t1.0\t2.0\n", s, 0.3 + 1.2 / (1 + 0.1 * s) + 0.02 * rng_normal(&r));
    fclose(f);
}

START_TEST(test_program_reuses_finished_baselines) {
    make_tmp();
    Config s0 = baseline(PRESET_SMOKE, 0), s1 = baseline(PRESET_SMOKE, 1), quick_s1 = baseline(PRESET_QUICK, 1);
    finished_run(g_tmp, "p11_base_s0", &s0, 0.3000);       // step 6's baseline at this preset: used
    finished_run(g_tmp, "p11_base_s1", &quick_s1, 0.2500); // another preset: not used
    finished_run(g_tmp, "step1_smoke_s1", &s1, 0.3100);    // step 1's own: used
    char args[600];
    snprintf(args, sizeof args, "--preset smoke --out '%s' --no-figures", g_tmp);
    Ran r = run(args);
    ck_assert_msg(r.code == 0, "exit %d:\n%s", r.code, r.err);
    const char *want[] = { "p11_base_s0", "step1_smoke_s1", "finished already", "0.3000", "0.3100",
                           "= 0.0100", "smoke preset" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.out, want[i]), "'%s' not in:\n%s", want[i], r.out);
    ck_assert_msg(!strstr(r.out, "0.2500"), "used a run of another preset:\n%s", r.out);
    ran_free(&r);

    // step 1's folder holding a run of another config: refuse, touch nothing
    Config other = s0;
    other.model.pos = POS_ROPE2D;
    snprintf(args, sizeof args, "--preset smoke --out '%s/elsewhere' --no-figures", g_tmp);
    char sub[400];
    snprintf(sub, sizeof sub, "%s/elsewhere", g_tmp);
    finished_run(sub, "step1_smoke_s0", &other, 0.2000);
    r = run(args);
    ck_assert_int_eq(r.code, 1);
    ck_assert_msg(strstr(r.err, "another config"), "%s", r.err);
    ran_free(&r);
    remove_tmp();
}
END_TEST

// Three finished baseline seeds: the program reads all three, prints the
// noise (mean, spread, what N seeds buy), and draws its two figures, or
// says how to get them without gnuplot.
START_TEST(test_program_noise_and_figures) {
    make_tmp();
    Config s0 = baseline(PRESET_SMOKE, 0), s1 = baseline(PRESET_SMOKE, 1), s2 = baseline(PRESET_SMOKE, 2);
    finished_run(g_tmp, "p11_base_s0", &s0, 0.2809);
    finished_run(g_tmp, "step1_smoke_s1", &s1, 0.2821);
    finished_run(g_tmp, "p11_base_s2", &s2, 0.2790);           // a third seed, from step 6's --seeds
    char args[1400], figs[400];
    snprintf(figs, sizeof figs, "%s/figures", g_tmp);
    snprintf(args, sizeof args, "--preset smoke --out '%s' --figures '%s'", g_tmp, figs);
    Ran r = run(args);
    ck_assert_msg(r.code == 0, "exit %d:\n%s", r.code, r.err);
    const char *want[] = { "p11_base_s2", "= 0.0012", "from 3 seeds", "mean val MSE 0.2807",
                           "spread (sample standard deviation) 0.0016", "standard error of the mean 0.0009",
                           "1.13 spreads (0.0018 here)", "what N seeds per configuration buy",
                           "spread * sqrt(2/N)", "what the numbers are" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.out, want[i]), "'%s' not in:\n%s", want[i], r.out);
    // the table of what seeds buy: 3 seeds a side, se = 0.0016 * sqrt(2/3)
    ck_assert_msg(strstr(r.out, "0.0013") && strstr(r.out, "0.0026"), "%s", r.out);
    const char *const names[] = { "step1_loss_curves", "step1_val_mse" };
    bool gnuplot = figure_gnuplot_available();
    for (int i = 0; i < 2; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.tsv", figs, names[i]);
        ck_assert_msg(file_exists(path), "no %s", path);
        snprintf(path, sizeof path, "%s/%s.png", figs, names[i]);
        if (gnuplot) ck_assert_msg(figure_png_valid(path), "%s is not a PNG", path);
    }
    if (gnuplot) ck_assert_msg(strstr(r.out, "figures: 2 PNGs in"), "%s", r.out);
    else printf("test_program_noise_and_figures: PNGs not checked, gnuplot is not installed\n");
    ran_free(&r);

    // without gnuplot: the same text, the data files, and a notice
    snprintf(args, sizeof args, "--preset smoke --out '%s'", g_tmp);
    const char *out = check_figures_without_gnuplot("step1_scorecard/step1_scorecard", args, names, 2);
    ck_assert_msg(strstr(out, "mean val MSE 0.2807"), "%s", out);

    // given folders: the noise of the group of seeds among them, and its figures
    snprintf(args, sizeof args, "'%s/p11_base_s0' '%s/step1_smoke_s1' '%s/p11_base_s2' --figures '%s/given'",
             g_tmp, g_tmp, g_tmp, g_tmp);
    r = run(args);
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(strstr(r.out, "from 3 seeds") && strstr(r.out, "spread (sample standard deviation) 0.0016"),
                  "%s", r.out);
    char path[600];
    snprintf(path, sizeof path, "%s/given/step1_loss_curves.tsv", g_tmp);
    ck_assert_msg(file_exists(path), "no %s", path);
    ran_free(&r);
    remove_tmp();
}
END_TEST

int main(void) {
    Suite *s = suite_create("step1_scorecard");
    add_tests(s, "metrics", 0, TESTS(test_reads_every_field, test_missing_fields_are_errors, test_seed_gap,
                                     test_same_probe, test_print_row));
    add_tests(s, "program", 60, TESTS(test_program_arguments, test_commands_where_printed_and_smoke_figures,
                                      test_program_default_is_the_committed_runs, test_program_prints_given_runs,
                                      test_program_reuses_finished_baselines, test_program_noise_and_figures));
    return run_suite(s);
}
