// test_guidance.c: the claims of step 7 and the class-conditional scorecard
// it rests on (common/eval/scorecard.h), each as a test.
//   - the scorecard's labels: 100 of each class in 1,000, class i % 10;
//   - class accuracy: the share the probe puts in the asked-for class, per
//     class too, and its value for a tiny model on a fixed setup;
//   - a guided scorecard at w = 1 is the conditional model, one forward a
//     step, bit for bit; at w = 3 the guided velocity of two forwards; every
//     w starts from the unconditional scorecard's noise;
//   - a finished class-conditional run's metrics.json holds raw.cond beside
//     raw.uncond; an unconditional run's holds no raw.cond;
//   - the program answers with no arguments; `sweep` writes a line per w,
//     the same w twice the same line; `curves` averages the seeds; bad
//     input is refused with nothing written;
//   - the shipped class-conditional model is the committed file.
#include "testutil.h"
#include "synth_cifar.h"
#include <cJSON.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "eval/scorecard.h"
#include "io/checkpoint.h"
#include "io/config_parse.h"
#include "io/paths.h"
#include "nn/flow.h"
#include "step7.h"

#define PROGRAM "step7_guidance/step7_guidance"
// small_model's guided samples (test_class_accuracy_of_a_tiny_model):
// the probe sees frogs and trucks in them, so only those classes score
#define CLASS_ACC_TINY 0.10
static const double CLASS_ACC_TINY_OF[10] = { 0, 0, 0, 0, 0, 0, 0.4, 0, 0, 0.6 };

static Probe *shipped_probe(void) {
    char path[4096], err[1024];
    ck_assert_int_eq(project_path(path, sizeof path, PROBE_SHIPPED), 0);
    Probe *p = probe_load(path, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    return p;
}

START_TEST(test_a_hundred_of_each_class) {
    int y[FD_SAMPLES], count[PROBE_CLASSES] = {0};
    scorecard_labels(y, FD_SAMPLES);
    for (int i = 0; i < FD_SAMPLES; i++) {
        ck_assert_int_eq(y[i], i % 10);
        count[y[i]]++;
    }
    for (int k = 0; k < PROBE_CLASSES; k++) ck_assert_int_eq(count[k], 100);
}
END_TEST

START_TEST(test_class_accuracy_counts_the_asked_for_class) {
    // 30 made-up images; the probe's own classes asked for in every third,
    // another class in the rest: 10 of 30 right, and each class's share
    // counted over the images that asked for it
    enum { N = 30 };
    size_t per = 3 * 32 * 32;
    float *x = alloc_floats(per * N);
    fill_normal(x, per * N, 0.5f, 3);
    Probe *p = shipped_probe();
    uint8_t seen[N];
    probe_predict(p, x, N, seen);
    int y[N], asked_of[10] = {0}, right_of[10] = {0};
    for (int i = 0; i < N; i++) {
        y[i] = i % 3 == 0 ? seen[i] : (seen[i] + 1) % 10;
        asked_of[y[i]]++;
        right_of[y[i]] += i % 3 == 0;
    }
    double per_class[10];
    int asked[10];
    ck_assert_double_eq_tol(scorecard_class_accuracy(p, x, y, N, per_class, asked), 10.0 / 30.0, 1e-12);
    for (int k = 0; k < 10; k++) {
        ck_assert_int_eq(asked[k], asked_of[k]);
        if (asked_of[k]) ck_assert_double_eq_tol(per_class[k], (double)right_of[k] / asked_of[k], 1e-12);
        else ck_assert(isnan(per_class[k]));
    }
    probe_free(p);
    free(x);
}
END_TEST

START_TEST(test_class_accuracy_of_a_tiny_model) {
    // the tiny model (seed 0), 100 samples from the scorecard's noise, 10 a
    // class, 4 Euler steps at w = 2: the probe puts 10 of them in the class
    // asked for, 4 of the frogs and 6 of the trucks (an untrained model's
    // samples are alike whatever the label)
    Model m;
    small_model(&m);
    enum { N = 100 };
    float *x = alloc_floats(3 * 32 * 32 * N);
    int y[N];
    scorecard_labels(y, N);
    char err[256];
    ck_assert_msg(scorecard_guided_samples(&m, x, y, N, 2.0f, SAMPLER_EULER, 4, NULL, 0, err, sizeof err) == 0, "%s", err);
    Probe *p = shipped_probe();
    double per_class[10];
    int asked[10];
    double acc = scorecard_class_accuracy(p, x, y, N, per_class, asked);
    for (int k = 0; k < 10; k++) ck_assert_int_eq(asked[k], 10);
    ck_assert_msg(fabs(acc - CLASS_ACC_TINY) < 1e-12, "class accuracy %.4f, per class %g %g %g %g %g %g %g %g %g %g", acc,
                  per_class[0], per_class[1], per_class[2], per_class[3], per_class[4], per_class[5], per_class[6],
                  per_class[7], per_class[8], per_class[9]);
    for (int k = 0; k < 10; k++) ck_assert_double_eq_tol(per_class[k], CLASS_ACC_TINY_OF[k], 1e-12);
    probe_free(p);
    free(x);
    model_free(&m);
}
END_TEST

// Euler by hand: v from model_forward with labels y (w = 1) or the guided
// mix of two separate forwards, one with the null label and one with y.
static void euler_by_hand(Model *m, float *x, const int *y, int N, float w, int steps) {
    size_t per = (size_t)m->cfg.channels * m->cfg.img * m->cfg.img, n = per * N;
    Activations a;
    ck_assert_int_eq(activations_alloc(&a, m, N, false), 0);
    float *t = alloc_floats(N), *v_null = alloc_floats(n), *v = alloc_floats(n);
    int *null = malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++) null[i] = m->cfg.classes;
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < N; i++) t[i] = (float)s / steps;
        if (w != 1.0f) {
            model_forward(m, &a, x, t, null);
            memcpy(v_null, a.v, sizeof(float) * n);
        }
        model_forward(m, &a, x, t, y);
        for (size_t i = 0; i < n; i++) v[i] = w == 1.0f ? a.v[i] : v_null[i] + w * (a.v[i] - v_null[i]);
        flow_euler_step(x, v, 1.0f / steps, n);
    }
    activations_free(&a);
    free(t); free(v_null); free(v); free(null);
}

START_TEST(test_guided_scorecard_at_w1_is_one_forward_a_step) {
    Model m;
    small_model(&m);
    enum { N = 12, STEPS = 3 };
    size_t per = 3 * 32 * 32;
    float *guided = alloc_floats(per * N), *hand = alloc_floats(per * N);
    int y[N];
    scorecard_labels(y, N);
    char err[256];
    // no step: the noise itself, the unconditional scorecard's
    ck_assert_int_eq(scorecard_guided_samples(&m, guided, y, N, 3.0f, SAMPLER_EULER, 0, NULL, 0, err, sizeof err), 0);
    scorecard_samples(&m, hand, N, 0);
    ck_assert_mem_eq(guided, hand, sizeof(float) * per * N);
    // w = 1: the conditional velocity alone, bit for bit
    ck_assert_msg(scorecard_guided_samples(&m, guided, y, N, 1.0f, SAMPLER_EULER, STEPS, NULL, 0, err, sizeof err) == 0, "%s", err);
    euler_by_hand(&m, hand, y, N, 1.0f, STEPS);
    ck_assert_mem_eq(guided, hand, sizeof(float) * per * N);
    // w = 3: null and label in one batch of 2N, against two forwards of N
    scorecard_samples(&m, hand, N, 0);
    ck_assert_int_eq(scorecard_guided_samples(&m, guided, y, N, 3.0f, SAMPLER_EULER, STEPS, NULL, 0, err, sizeof err), 0);
    euler_by_hand(&m, hand, y, N, 3.0f, STEPS);
    double worst = 0;
    for (size_t i = 0; i < per * N; i++) worst = fmax(worst, fabs(guided[i] - hand[i]));
    ck_assert_msg(worst < 1e-5, "guided samples at w = 3 differ from the hand-made ones by %g", worst);
    // a refusal: a negative w
    ck_assert_int_ne(scorecard_guided_samples(&m, guided, y, N, -1.0f, SAMPLER_EULER, STEPS, NULL, 0, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "guidance"), "%s", err);
    free(guided); free(hand);
    model_free(&m);
}
END_TEST

// The class-conditional val exam is sat with each test image's own label:
// its val MSE is the loss of the exam's noise and times with the true
// labels, and not the one with the null label or with any one class.
static double exam_by_hand(Model *m, const CifarSet *test, int n, const int *y) {
    size_t per = 3 * 32 * 32;
    float *x0 = alloc_floats(per * n), *t = alloc_floats(n), *x1 = alloc_floats(per * n);
    float *xt = alloc_floats(per * n), *target = alloc_floats(per * n);
    scorecard_exam(x0, t, per, n);
    cifar_range_to_float(test, 0, n, x1);
    flow_interpolate(xt, target, x1, x0, t, n, per);
    Activations a;
    ck_assert_int_eq(activations_alloc(&a, m, n, false), 0);
    model_forward(m, &a, xt, t, y);
    double mse = flow_mse(NULL, a.v, target, per * n);
    activations_free(&a);
    free(x0); free(t); free(x1); free(xt); free(target);
    return mse;
}

START_TEST(test_val_exam_sits_with_the_true_labels) {
    Model m;
    small_model(&m);
    for (size_t i = 0; i < (size_t)11 * m.cfg.dim; i++) m.p.y_embed[i] = 0.5f * sinf((float)i);   // labels that matter
    enum { N = 40 };
    uint8_t pixels[N * 3 * 32 * 32], labels[N];
    for (int i = 0; i < N; i++) {
        labels[i] = (uint8_t)((i * 7) % 10);
        synth_cifar_image(labels[i], (uint32_t)i, pixels + (size_t)i * 3 * 32 * 32);
    }
    CifarSet test = { N, pixels, labels };
    int truth[N], null_label[N], first_class[N];
    for (int i = 0; i < N; i++) { truth[i] = labels[i]; null_label[i] = 10; first_class[i] = 0; }
    double val = scorecard_val_mse(&m, &test, N), want = exam_by_hand(&m, &test, N, truth);
    ck_assert_msg(fabs(val - want) <= 1e-9 * want, "val MSE %.9f, the exam with the true labels %.9f", val, want);
    double with_null = exam_by_hand(&m, &test, N, null_label), with_0 = exam_by_hand(&m, &test, N, first_class);
    ck_assert_msg(fabs(with_null - want) > 1e-6 && fabs(with_0 - want) > 1e-6,
                  "the labels change nothing here (%.9f, null %.9f, class 0 %.9f): the test cannot tell", want,
                  with_null, with_0);
    model_free(&m);
}
END_TEST

// A conditional model's unconditional samples (no labels asked for) go
// through the null label's row: the guided sampler's at w = 1 with every
// label null, and not any class's.
START_TEST(test_unconditional_samples_use_the_null_row) {
    Model m;
    small_model(&m);
    for (size_t i = 0; i < (size_t)11 * m.cfg.dim; i++) m.p.y_embed[i] = 0.5f * cosf((float)i);
    enum { N = 10, STEPS = 3 };
    size_t per = 3 * 32 * 32;
    float *plain = alloc_floats(per * N), *null_row = alloc_floats(per * N), *class0 = alloc_floats(per * N);
    int nulls[N], zeros[N];
    for (int i = 0; i < N; i++) { nulls[i] = 10; zeros[i] = 0; }
    char err[256];
    scorecard_samples(&m, plain, N, STEPS);
    ck_assert_msg(scorecard_guided_samples(&m, null_row, nulls, N, 1.0f, SAMPLER_EULER, STEPS, NULL, 0, err,
                                           sizeof err) == 0, "%s", err);
    ck_assert_msg(memcmp(plain, null_row, sizeof(float) * per * N) == 0,
                  "the unconditional samples are not the null label's");
    ck_assert_int_eq(scorecard_guided_samples(&m, class0, zeros, N, 1.0f, SAMPLER_EULER, STEPS, NULL, 0, err,
                                              sizeof err), 0);
    ck_assert_msg(memcmp(plain, class0, sizeof(float) * per * N) != 0, "class 0's samples are the null label's");
    free(plain); free(null_row); free(class0);
    model_free(&m);
}
END_TEST

// The synthetic data set (tests/synth_cifar.h) in dir/data, and the
// environment that points a program at it, into env.
static void synthetic_data(const char *dir, char *env, size_t n) {
    char data[512];
    snprintf(data, sizeof data, "%s/data", dir);
    ck_assert_int_eq(mkdir(data, 0755), 0);
    ck_assert_int_eq(synth_cifar_write(data, SYNTH_CIFAR_RECORDS), 0);
    snprintf(env, n, "CIFAR_DIR='%s' CIFAR_RECORDS=%d OMP_NUM_THREADS=1", data, SYNTH_CIFAR_RECORDS);
}

// A smoke run of 2 steps with the sets given, in dir/runs/NAME, on the
// synthetic data (env); its metrics.json parsed.
static cJSON *finished_run(const char *dir, const char *env, const char *name, const char *sets) {
    char opts[1024];
    snprintf(opts, sizeof opts, "train --name %s --preset smoke --set steps=2 --set depth=1 %s --out '%s/runs'", name,
             sets, dir);
    int st = run_program(env, "step6_ablation/step6_ablation", opts, dir);
    ck_assert_msg(st == 0, "step6_ablation %s: exit %d\n%s", opts, st, read_text_in(dir, "err.txt"));
    char path[1024];
    snprintf(path, sizeof path, "%s/runs/%s/metrics.json", dir, name);
    char *text = read_whole_file(path);
    cJSON *j = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(j);
    return j;
}

START_TEST(test_metrics_of_a_conditional_run) {
    char dir[256];
    tmpdir_make(dir, sizeof dir, "cond_run");
    char env[1024];
    synthetic_data(dir, env, sizeof env);
    cJSON *j = finished_run(dir, env, "c10", "--set classes=10 --set guidance=2");
    cJSON *raw = cJSON_GetObjectItem(j, "raw"), *cond = cJSON_GetObjectItem(raw, "cond");
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(raw, "val_mse")));
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(raw, "uncond"), "probe_fd")));
    ck_assert_ptr_nonnull(cond);
    ck_assert_double_eq(cJSON_GetObjectItem(cond, "guidance")->valuedouble, 2.0);
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(cond, "probe_fd")));
    double acc = cJSON_GetObjectItem(cond, "class_acc")->valuedouble, mean = 0;
    cJSON *of = cJSON_GetObjectItem(cond, "class_acc_per_class");
    ck_assert_int_eq(cJSON_GetArraySize(of), 10);
    for (int k = 0; k < 10; k++) mean += cJSON_GetArrayItem(of, k)->valuedouble / 10;   // 100 a class: the mean
    ck_assert_double_eq_tol(acc, mean, 1e-9);
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "scorecard_seconds"), "guided_sampling")));
    cJSON_Delete(j);
    // the unconditional model's file: no cond, no guided sampling
    j = finished_run(dir, env, "plain", "");
    ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "raw"), "cond"));
    ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "scorecard_seconds"), "guided_sampling"));
    cJSON_Delete(j);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_the_program_answers) {
    char dir[256];
    tmpdir_make(dir, sizeof dir, "step7");
    int st = run_program("", PROGRAM, "--no-figures", dir);
    ck_assert_msg(st == 0, "exit %d\n%s", st, read_text_in(dir, "err.txt"));
    const char *want[] = { "1. The label table: y_embed.weight (11, 32)", "10         null",
                           "seed 0 again drops the same labels at step 1: yes", "(checksums verified)",
                           "4. The guided velocity", "  2  ", "2.0000", "right (*)", "try it:" };
    assert_contains_all(read_text_in(dir, "out.txt"), want, sizeof want / sizeof *want);
    ck_assert(!file_in(dir, "step7_grid.png"));
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_the_grid_picture) {
    char dir[256];
    tmpdir_make(dir, sizeof dir, "step7_grid");
    char opts[512];
    snprintf(opts, sizeof opts, "--figures '%s/figs'", dir);
    ck_assert_int_eq(run_program("", PROGRAM, opts, dir), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/figs/step7_grid.png", dir);
    ck_assert(figure_png_valid(path));
    ck_assert(strstr(read_text_in(dir, "out.txt"), "step7_grid.png"));
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_sweep_a_line_per_w) {
    char dir[256], opts[1024], env[1024];
    tmpdir_make(dir, sizeof dir, "sweep");
    synthetic_data(dir, env, sizeof env);
    // w = 2 twice: the same noise and labels at every w, so the same line
    snprintf(opts, sizeof opts, "sweep --samples 20 --steps 2 --w 2,0,2 --out '%s/g.tsv'", dir);
    int st = run_program(env, PROGRAM, opts, dir);
    ck_assert_msg(st == 0, "exit %d\n%s", st, read_text_in(dir, "err.txt"));
    char *tsv = read_text_in(dir, "g.tsv");
    char *lines[8];
    int n = 0;
    for (char *l = strtok(tsv, "\n"); l && n < 8; l = strtok(NULL, "\n"))
        if (l[0] != '#') lines[n++] = l;
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(lines[0], lines[2]);
    ck_assert_str_ne(lines[0], lines[1]);
    int tabs = 0;
    for (char *c = lines[1]; *c; c++) tabs += *c == '\t';
    ck_assert_int_eq(tabs, 12);   // w, probe_fd, class_acc and ten classes
    ck_assert(!strncmp(lines[1], "0\t", 2));
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_curves_average_the_seeds) {
    char dir[256], path[512], opts[2048];
    tmpdir_make(dir, sizeof dir, "curves");
    const char *lines[2] = { "0\t10\t0.2\n2\t10.5\t0.25\n", "0\t20\t0.4\n2\t20.5\t0.45\n" };
    for (int s = 0; s < 2; s++) {
        snprintf(path, sizeof path, "%s/cfg_s%d", dir, s);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/cfg_s%d/guidance.tsv", dir, s);
        FILE *f = fopen(path, "w");
        fprintf(f, "# w\tprobe_fd\tclass_acc\n%s", lines[s]);
        fclose(f);
    }
    snprintf(opts, sizeof opts, "curves '%s/cfg_s0/guidance.tsv' '%s/cfg_s1/guidance.tsv' --figures '%s/f'", dir,
             dir, dir);
    ck_assert_int_eq(run_program("TINYDIT_GNUPLOT=/nonexistent/gnuplot", PROGRAM, opts, dir), 0);
    char figs[300];
    snprintf(figs, sizeof figs, "%s/f", dir);
    const char *data = read_text_in(figs, "step7_curves.tsv");
    ck_assert_msg(strstr(data, "# cfg (2 seeds)"), "%s", data);
    ck_assert_msg(strstr(data, "0\t15.0000\t10.0000\t20.0000\t0.3000\t0.2000\t0.4000\n"), "%s", data);
    ck_assert_msg(strstr(data, "2\t15.5000\t10.5000\t20.5000\t0.3500\t0.2500\t0.4500\n"), "%s", data);
    if (gnuplot_or_skip("curves")) {
        ck_assert_int_eq(run_program("", PROGRAM, opts, dir), 0);
        const char *names[] = { "step7_curves" };
        check_figures_drawn(figs, names, 1);
    }
    tmpdir_remove(dir);
}
END_TEST

// The sweeps' table: each configuration at the run's w and at its best w,
// with step 6's verdict against *_base at the same w. Made-up sweeps, three
// seeds a side, spread 1 (probe-FD) and 0.01 (accuracy): se = sqrt(2/3) and
// sqrt(2/3)/100, so a probe-FD 2 lower is a gain of 2.4 se and one 1 lower
// is not resolved; accuracy 0.1 higher, 12.2 se.
START_TEST(test_curves_table_gives_step6s_verdicts) {
    char dir[256], path[512], opts[4096] = "curves";
    tmpdir_make(dir, sizeof dir, "verdicts");
    const char *cfg[2] = { "x_base", "x_up" };
    double fd1[2] = { 11, 9 }, fd4[2] = { 11, 10 }, acc1[2] = { 0.11, 0.21 }, acc4[2] = { 0.11, 0.31 };
    for (int c = 0; c < 2; c++)
        for (int s = 0; s < 3; s++) {
            snprintf(path, sizeof path, "%s/%s_s%d", dir, cfg[c], s);
            mkdir(path, 0755);
            snprintf(path, sizeof path, "%s/%s_s%d/guidance.tsv", dir, cfg[c], s);
            FILE *f = fopen(path, "w");
            fprintf(f, "# w\tprobe_fd\tclass_acc\n1\t%g\t%g\n4\t%g\t%g\n", fd1[c] + s - 1, acc1[c] + 0.01 * (s - 1),
                    fd4[c] + s - 1, acc4[c] + 0.01 * (s - 1));
            fclose(f);
            snprintf(opts + strlen(opts), sizeof opts - strlen(opts), " '%s'", path);
        }
    snprintf(opts + strlen(opts), sizeof opts - strlen(opts), " --figures '%s/f'", dir);
    ck_assert_int_eq(run_program("TINYDIT_GNUPLOT=/nonexistent/gnuplot", PROGRAM, opts, dir), 0);
    const char *want[] = { "against\nx_base at the same w", "x_up               3  1  the run's, lowest probe-FD",
                           "9.00 +- 1.00  0.210 +- 0.010                -          -2.00 gain (2.4 se)   +0.100 gain (12.2 se)",
                           "3  4            highest accuracy           10.00 +- 1.00  0.310 +- 0.010",
                           "-1.00 not resolved (1.2 se)   +0.200 gain (24.5 se)" };
    assert_contains_all(read_text_in(dir, "out.txt"), want, sizeof want / sizeof *want);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_bad_input_is_refused) {
    char dir[256], opts[8192], rope[4096];
    tmpdir_make(dir, sizeof dir, "step7_bad");
    const char *bad[] = { "--w -1 sweep --out x.tsv", "--w 1,,2 sweep --out x.tsv", "sweep", "sweep --out x.tsv --samples 15",
                          "curves", "curves a.tsv --no-figures", "nonsense" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int st = run_program("", PROGRAM, bad[i], dir);
        ck_assert_msg(st == 2, "%s: exit %d, not 2", bad[i], st);
        ck_assert_msg(!file_in(dir, "x.tsv"), "%s wrote x.tsv", bad[i]);
    }
    // an --out whose folder is missing: refused before any sampling
    snprintf(opts, sizeof opts, "sweep --out '%s/no/such/x.tsv'", dir);
    ck_assert_int_eq(run_program("", PROGRAM, opts, dir), 1);
    ck_assert_msg(strstr(read_text_in(dir, "err.txt"), "not writable"), "%s", read_text_in(dir, "err.txt"));
    // an unconditional model is no model to guide: a message, nothing written
    ck_assert_int_eq(project_path(rope, sizeof rope, "models/tinydit_rope_tutorial.safetensors"), 0);
    snprintf(opts, sizeof opts, "sweep --model '%s' --out '%s/x.tsv'", rope, dir);
    ck_assert_int_eq(run_program("", PROGRAM, opts, dir), 1);
    ck_assert_msg(strstr(read_text_in(dir, "err.txt"), "classes=0"), "%s", read_text_in(dir, "err.txt"));
    ck_assert(!file_in(dir, "x.tsv"));
    snprintf(opts, sizeof opts, "--model '%s' --no-figures", rope);
    ck_assert_int_eq(run_program("", PROGRAM, opts, dir), 1);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_the_shipped_model_is_the_committed_one) {
    char models[4096], cmd[8192];
    ck_assert_int_eq(project_path(models, sizeof models, "models"), 0);
    snprintf(cmd, sizeof cmd, "cd '%s' && sha256sum --check --status tinydit_c10_recipe.safetensors.sha256", models);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "models/tinydit_c10_recipe.safetensors does not match its .sha256 (missing, damaged, or exported "
                  "again without a new checksum)");
    char path[4200], err[1024];
    snprintf(path, sizeof path, "%s/tinydit_c10_recipe.safetensors", models);
    Model m;
    SafeTensors s;
    ck_assert_msg(checkpoint_load(path, &m, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(m.cfg.classes, 10);
    ck_assert_ptr_nonnull(model_find(&m, "y_embed.weight"));
    ck_assert_ptr_null(st_find(&s, CHECKPOINT_ADAMW_M "y_embed.weight"));   // exported: no optimizer state
    ck_assert_ptr_nonnull(st_find(&s, CHECKPOINT_EMA "y_embed.weight"));     // but its EMA, which step 7 draws from
    st_free(&s);
    model_free(&m);
}
END_TEST

int main(void) {
    return run_tests("guidance", "guidance", 300,
                     TESTS(test_a_hundred_of_each_class, test_class_accuracy_counts_the_asked_for_class,
                           test_val_exam_sits_with_the_true_labels, test_unconditional_samples_use_the_null_row,
                           test_class_accuracy_of_a_tiny_model, test_guided_scorecard_at_w1_is_one_forward_a_step,
                           test_metrics_of_a_conditional_run, test_the_program_answers, test_the_grid_picture,
                           test_sweep_a_line_per_w, test_curves_average_the_seeds,
                           test_curves_table_gives_step6s_verdicts, test_bad_input_is_refused,
                           test_the_shipped_model_is_the_committed_one));
}
