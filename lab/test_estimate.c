// test_estimate.c: the arithmetic of `lab estimate` (estimate.c) on fixed
// timings, worked out by hand: a run, a resumed run, runs side by side, the
// whole job (which trains no probe: the scorecard's is the shipped one); and --since against a saved estimate. Nothing is
// timed here: `make check` must not depend on how busy the machine is.
#include <time.h>
#include "testutil.h"
#include "lab.h"
#include "io/config_parse.h"

// Every configuration's step 100 ms except SwiGLU's, 150; a forward pass
// 0.01 ms an image; fresh buffers 500 ms; probe features 0.002 ms an image;
// reading the data 2 s; a run of --jobs 2 1.6x slower.
static JobTimings fixed(void) {
    JobTimings t = { .exam_ms_per_image = 0.01, .sample_ms_per_image = 0.01, .fresh_ms = 500,
                     .probe_ms_per_image = 0.002, .data_seconds = 2, .jobs_factor = 1.6, .eval_jobs_factor = 1.6 };
    for (int c = 0; c < ABLATION_CONFIGS; c++) t.step_ms[c] = c == CFG_SWIGLU ? 150 : 100;
    return t;
}

static RunWork quick_run(int config, int done) {
    RunWork w = { config, config_default(), done, 0 };
    preset_apply(PRESET_QUICK, &w.cfg, &w.ckpt_every);   // 1,000 steps, a val check and a checkpoint every 250
    return w;
}

START_TEST(test_one_run) {
    JobTimings t = fixed();
    // steps 1000 x 100 = 100,000 ms; 4 val checks of 2,000 images: 80 ms, and
    // their fresh buffers 500; the scorecard: val MSE 20 ms, 1,000 samples x
    // 20 Euler steps 200 ms, fresh buffers 500, probe features of 10,000 test
    // images and the 1,000 samples 22 ms; then 2 s of data
    RunWork w = quick_run(CFG_BASE, 0);
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 1), (100000 + 580 + 742) / 1000.0 + 2, 1e-9);
    // half done: 500 steps and 2 checks left, the whole scorecard
    w.steps_done = 500;
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 1), (50000 + 540 + 742) / 1000.0 + 2, 1e-9);
    // finished: nothing left, not even the data
    w.steps_done = -1;
    ck_assert_double_eq(estimate_run_seconds(&t, &w, 1), 0.0);
    // SwiGLU: its steps and its forward passes cost 1.5x the baseline's
    w = quick_run(CFG_SWIGLU, 0);
    double fwd = 4 * 2000 * 0.01 * 1.5 + 500 + (2000 * 0.01 + 20000 * 0.01) * 1.5 + 500 + 11000 * 0.002;
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 1), (150000 + fwd) / 1000.0 + 2, 1e-9);
    // a run of --jobs 2: the compute 1.6x, the data read as fast
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 2), 1.6 * (150000 + fwd) / 1000.0 + 2, 1e-9);
    // its steps and its scorecard slowed each by their own factor
    t.eval_jobs_factor = 1.2;
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 2), (1.6 * 150000 + 1.2 * fwd) / 1000.0 + 2, 1e-9);
    t.eval_jobs_factor = 1.6;
    // smoke: no val checks (val_every 0), 60 steps
    int ckpt;
    preset_apply(PRESET_SMOKE, &w.cfg, &ckpt);
    w.config = CFG_BASE;
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 1), (60 * 100 + 742) / 1000.0 + 2, 1e-9);
}
END_TEST

START_TEST(test_class_conditional_run) {
    JobTimings t = fixed();
    // classes=10: the scorecard samples 1,000 more, 100 a class, and the
    // probe sees them too (1,000 x 0.002 = 2 ms). At guidance 1 one forward
    // pass a step: 1,000 x 20 x 0.01 = 200 ms more; at any other w the null
    // label's pass too: 400 ms more
    RunWork w = quick_run(CFG_BASE, 0);
    ck_assert_int_eq(config_set(&w.cfg, "classes=10", NULL, 0), 0);
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 1), (100000 + 580 + 742 + 200 + 2) / 1000.0 + 2, 1e-9);
    ck_assert_int_eq(config_set(&w.cfg, "guidance=3", NULL, 0), 0);
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 1), (100000 + 580 + 742 + 400 + 2) / 1000.0 + 2, 1e-9);
    ck_assert_int_eq(config_set(&w.cfg, "guidance=0", NULL, 0), 0);
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 1), (100000 + 580 + 742 + 400 + 2) / 1000.0 + 2, 1e-9);
}
END_TEST

START_TEST(test_schedule) {
    // runs in order, each where a place is free first (xargs -P)
    double runs[4] = { 10, 20, 30, 40 };
    double share[4];
    ck_assert_double_eq(schedule_seconds(runs, 4, 1, NULL), 100);
    ck_assert_double_eq(schedule_seconds(runs, 4, 2, share), 60);   // 10+30 | 20+40
    // 0-10: runs 0, 1; 10-20: 1, 2; 20-40: 2, 3; 40-60: 3 alone
    double want[4] = { 5, 5 + 5, 5 + 10, 10 + 20 };
    for (int i = 0; i < 4; i++)
        ck_assert_msg(fabs(share[i] - want[i]) < 1e-12, "run %d's part of the wall time: %g, want %g", i, share[i], want[i]);
    ck_assert_double_eq(schedule_seconds(runs, 4, 3, share), 50);   // 10+40 | 20 | 30
    ck_assert_double_eq_tol(share[0] + share[1] + share[2] + share[3], 50, 1e-9);
    ck_assert_double_eq(schedule_seconds(runs, 0, 2, share), 0);
}
END_TEST

START_TEST(test_whole_job) {
    JobTimings t = fixed();
    // the baseline pair (phase 0), then SwiGLU and a finished run (phase 1)
    RunWork runs[4] = { quick_run(CFG_BASE, 0), quick_run(CFG_BASE, 0), quick_run(CFG_SWIGLU, 0),
                        quick_run(CFG_ROPE, -1) };
    int phase[4] = { 0, 0, 1, 1 };
    double base = estimate_run_seconds(&t, &runs[0], 1), swiglu = estimate_run_seconds(&t, &runs[2], 1);
    // one at a time: the runs, and around them the parts of estimate_fixed
    // (here only the step programs' own checks, 2.5 s, and the attention
    // maps' 128 forward passes, 1.28 ms) and no probe to train first
    double e = estimate_job(&t, runs, phase, 4, 1), fixed = 2.5 + 0.00128;
    ck_assert_double_eq_tol(e, 2 * base + swiglu + fixed, 1e-9);
    ck_assert_double_eq_tol(e, 2 * 103.322 + 150.0 + (4 * 2000 * 0.01 * 1.5 + 500 +
                            (2000 * 0.01 + 20000 * 0.01) * 1.5 + 500 + 22) / 1000.0 + 2 + fixed, 1e-9);
    // two at a time: the pair side by side, 1.6x each, then SwiGLU, left
    // alone, on all threads (ablation_lone_run)
    double base2 = estimate_run_seconds(&t, &runs[0], 2);
    e = estimate_job(&t, runs, phase, 4, 2);
    ck_assert_double_eq_tol(e, base2 + swiglu + fixed, 1e-9);
    // a second SwiGLU run: the two side by side
    RunWork four[4] = { runs[0], runs[1], runs[2], runs[2] };
    ck_assert_double_eq_tol(estimate_job(&t, four, phase, 4, 2),
                            base2 + estimate_run_seconds(&t, &runs[2], 2) + fixed, 1e-9);
    // make tutorial's choice: two at a time is faster here (the pair takes
    // 164 s, not 207); with runs side by side 2.1x slower each, one at a time
    ck_assert_int_eq(estimate_faster_jobs(&t, runs, phase, 4), 2);
    JobTimings t2 = t;
    t2.jobs_factor = t2.eval_jobs_factor = 2.1;
    ck_assert_int_eq(estimate_faster_jobs(&t2, runs, phase, 4), 1);
    // the job's line: how long, as a reader reads it
    char d[32];
    format_duration(e, d, sizeof d);
    ck_assert_str_eq(d, "5:20");   // 1.6 x 101.322 + 2 = 164.1 s, 151.472 + 2 = 153.5 s, 2.5 s
    format_duration(3725, d, sizeof d);
    ck_assert_str_eq(d, "1:02:05");
    format_duration(59.6, d, sizeof d);
    ck_assert_str_eq(d, "1:00");
}
END_TEST

// What the job pays besides the runs' work: each run its checkpoints;
// between the runs the step programs, after them the plots; first lab
// estimate itself.
START_TEST(test_fixed_costs) {
    JobTimings t = fixed();
    RunWork w = quick_run(CFG_BASE, 0);
    double work = estimate_run_seconds(&t, &w, 1);
    t.ckpt_seconds = 0.02;
    // 1,000 steps, a checkpoint every 250: four
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 1) - work, 4 * 0.02, 1e-9);
    // from step 500: two more; from step 510: the ones at 750 and 1,000
    w.steps_done = 500;
    double left = estimate_run_seconds(&t, &w, 1);
    t.ckpt_seconds = 0;
    ck_assert_double_eq_tol(left - estimate_run_seconds(&t, &w, 1), 2 * 0.02, 1e-9);
    t.ckpt_seconds = 0.02;
    w.steps_done = 510;
    left = estimate_run_seconds(&t, &w, 1);
    t.ckpt_seconds = 0;
    ck_assert_double_eq_tol(left - estimate_run_seconds(&t, &w, 1), 2 * 0.02, 1e-9);
    // smoke: 60 steps, a checkpoint every 20: three
    preset_apply(PRESET_SMOKE, &w.cfg, &w.ckpt_every);
    w.steps_done = 0;
    work = estimate_run_seconds(&t, &w, 1);
    t.ckpt_seconds = 0.02;
    ck_assert_double_eq_tol(estimate_run_seconds(&t, &w, 1) - work, 3 * 0.02, 1e-9);
    // the parts around the runs: ten figures, the steps' checks and step 7's
    // grid; after the runs eight figures and the attention maps' two forward
    // passes of 64 images
    t = fixed();
    t.figure_seconds = 0.2;
    t.grid_seconds = 3;
    JobFixed f = estimate_fixed(&t);
    ck_assert_double_eq_tol(f.between, 2.0 + 2.5 + 3, 1e-9);
    ck_assert_double_eq_tol(f.after, 1.6 + 128 * 0.01 / 1000, 1e-9);
    // and the whole job counts them, and lab estimate's own time
    RunWork runs[1] = { quick_run(CFG_BASE, 0) };
    int phase[1] = { 0 };
    t.self_seconds = 10;
    ck_assert_double_eq_tol(estimate_job(&t, runs, phase, 1, 1),
                            10 + f.between + f.after + estimate_run_seconds(&t, &runs[0], 1), 1e-9);
}
END_TEST

// Other processes busy while lab estimate timed: a note says so, from a
// quarter of a core on.
START_TEST(test_load_note) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    estimate_load_note(f, 0.1, 2);
    fflush(f);
    ck_assert_uint_eq(len, 0);
    estimate_load_note(f, 1.0, 2);
    fclose(f);
    ck_assert_msg(strstr(text, "other processes kept 1.0 of the 2 cores busy"), "%s", text);
    free(text);
}
END_TEST

// The job's parts read back from lab estimate --save's file, and its
// progress line: what is done of the estimate, and what is left at the pace so far.
START_TEST(test_job_progress) {
    char dir[256], path[300], err[512];
    tmpdir_make(dir, sizeof dir, "estimate");
    snprintf(path, sizeof path, "%s/estimate.txt", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "estimate_seconds 200\nsaved_at 1000\njobs 2\npart estimate 10\nrun p11_base_s0 40\n"
               "run p11_base_s1 40\npart steps 10\nrun p11_rope 90\npart plots 10\n");
    fclose(f);
    JobPlan p;
    ck_assert_int_eq(job_plan_read(path, &p, err, sizeof err), 0);
    ck_assert_int_eq(p.n, 6);
    ck_assert_str_eq(p.part[1].name, "p11_base_s0");
    ck_assert(p.part[1].is_run && !p.part[3].is_run);
    ck_assert_double_eq(p.part[4].seconds, 90);
    ck_assert_double_eq(p.started, 1000);
    // nothing done yet, 5 s in: the estimate as it is
    char line[256];
    job_progress_line(&p, 1005, NULL, line, sizeof line);
    ck_assert_str_eq(line, "[job] 0:05, 0% done, about 3:20 left (estimated 3:20)");
    // the estimate and the pair done (90 of 200 s) in 180 s: twice as slow, so the
    // 110 s left take 220
    p.part[0].done = p.part[1].done = p.part[2].done = 1;
    job_progress_line(&p, 1180, "p11_rope 40/60", line, sizeof line);
    ck_assert_str_eq(line, "[job] 3:00, 45% done, about 3:40 left (estimated 3:20) | p11_rope 40/60");
    // a file that is not an estimate, and a part that is not a number
    f = fopen(path, "w");
    fprintf(f, "hello\n");
    fclose(f);
    ck_assert_int_eq(job_plan_read(path, &p, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "not an estimate"), "%s", err);
    f = fopen(path, "w");
    fprintf(f, "estimate_seconds 200\nsaved_at 1000\nrun p11_rope nan\n");
    fclose(f);
    ck_assert_int_eq(job_plan_read(path, &p, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "not a number"), "%s", err);
    tmpdir_remove(dir);
}
END_TEST

// --since: the time since a saved estimate, against it. And the options
// that are wrong are refused before anything is timed.
START_TEST(test_since_and_options) {
    char dir[256], path[300];
    tmpdir_make(dir, sizeof dir, "estimate");
    snprintf(path, sizeof path, "%s/estimate.txt", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "estimate_seconds 600\nsaved_at %lld\n", (long long)time(NULL) - 300);
    fclose(f);
    char *argv[] = { "estimate", "--since", path, NULL };
    fflush(stdout);
    ck_assert_int_eq(cmd_estimate(3, argv), 0);
    // a file that is not an estimate
    f = fopen(path, "w");
    fprintf(f, "hello\n");
    fclose(f);
    ck_assert_int_eq(cmd_estimate(3, argv), 1);
    char *bad_preset[] = { "estimate", "--preset", "huge", NULL };
    ck_assert_int_eq(cmd_estimate(3, bad_preset), 2);
    char *bad_jobs[] = { "estimate", "--jobs", "0", NULL };
    ck_assert_int_eq(cmd_estimate(3, bad_jobs), 2);
    char *bad_seeds[] = { "estimate", "--seeds", "x", NULL };
    ck_assert_int_eq(cmd_estimate(3, bad_seeds), 2);
    tmpdir_remove(dir);
}
END_TEST

int main(void) {
    return run_tests("estimate", "estimate", 0, TESTS(test_one_run, test_class_conditional_run, test_schedule, test_whole_job,
                                                      test_fixed_costs, test_load_note, test_job_progress,
                                                      test_since_and_options));
}
