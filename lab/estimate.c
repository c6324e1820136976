// estimate.c: the main job's time, measured here before it starts. Step
// times from another machine say little (they vary severalfold with the
// machine and its load), so the job times its parts where it will run (what,
// lab estimate --help says) and adds them up (lab.h: estimate_run_seconds,
// estimate_fixed, estimate_job). It is as good as the machine is steady.
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>
#include "lab.h"
#include "nn/flow.h"
#include "eval/scorecard.h"
#include "io/bench.h"
#include "io/checkpoint.h"
#include "io/cifar.h"
#include "io/clock.h"
#include "io/figure.h"
#include "io/fileio.h"
#include "io/paths.h"
#include "io/shipped.h"   // step 7's grid: SHIPPED_C10, GRID_W_COUNT columns of GRID_STEPS Euler steps

// ---------------------------------------------------------------------------
// The arithmetic

double estimate_run_seconds(const JobTimings *t, const RunWork *w, int jobs) {
    const Config *c = &w->cfg;
    if (w->steps_done < 0 || w->steps_done > c->run.steps) return 0;
    double scale = t->step_ms[w->config] / t->step_ms[CFG_BASE];   // its forward passes against the baseline's
    double train_ms = (c->run.steps - w->steps_done) * t->step_ms[w->config];
    int checks = c->run.val_every > 0 ? c->run.steps / c->run.val_every - w->steps_done / c->run.val_every : 0;
    double checks_ms = checks * VAL_IMAGES * t->exam_ms_per_image * scale + (checks > 0 ? t->fresh_ms : 0);
    // a class-conditional run samples as many again at its guidance: two forward passes a step at w != 1
    int guided = c->model.classes > 0 ? flow_guided_rows(FD_SAMPLES, c->run.guidance) : 0;
    double scorecard_ms = (VAL_IMAGES * t->exam_ms_per_image
                           + (double)(FD_SAMPLES + guided) * FD_EULER_STEPS * t->sample_ms_per_image) * scale
                          + t->fresh_ms + (CIFAR_RECORDS_PER_FILE + FD_SAMPLES + (guided ? FD_SAMPLES : 0)) * t->probe_ms_per_image;
    int left = c->run.steps - w->steps_done, every = w->ckpt_every > 0 ? w->ckpt_every : c->run.steps;
    int ckpts = c->run.steps / every - w->steps_done / every + (c->run.steps % every != 0 && left > 0);
    double train_factor = jobs > 1 ? t->jobs_factor : 1.0, eval_factor = jobs > 1 ? t->eval_jobs_factor : 1.0;
    return (train_ms * train_factor + (checks_ms + scorecard_ms) * eval_factor) / 1000.0 + t->data_seconds + ckpts * t->ckpt_seconds;
}

// The step programs' work that is neither a run's nor a figure: steps 2 to
// 5 check their layers and time them a fixed number of turns (step 2's 51 of
// four calls, step 4's 9 of five), about 2.5 s of two cores. Fixed, not
// timed here: timing them would cost as long as running them.
#define STEP_CHECKS_SECONDS 2.5
// A quick run's scorecard as the timings have it, to weigh one set of timings against another.
static double eval_ms(const JobTimings *t) {
    return VAL_IMAGES * t->exam_ms_per_image + FD_SAMPLES * FD_EULER_STEPS * t->sample_ms_per_image + t->fresh_ms
           + (CIFAR_RECORDS_PER_FILE + FD_SAMPLES) * t->probe_ms_per_image;
}

JobFixed estimate_fixed(const JobTimings *t) {
    // steps 1 to 5 two figures each and their checks, step 7 its grid (a program's start, about
    // 15 ms, and the probe's, 3 ms, are not counted here or in a run: far below the noise)
    double between = 10 * t->figure_seconds + STEP_CHECKS_SECONDS + t->grid_seconds;
    // the attention maps (two models on 64 test images, two figures) and plots.sh's six (seven with val.tsv)
    double after = 8 * t->figure_seconds + 2 * 64 * t->exam_ms_per_image / 1000.0;
    return (JobFixed){ between, after };
}

double schedule_seconds(const double *run_s, int n, int jobs, double *share) {
    double free_at[64] = {0}, start[n + 1], at[2 * n + 1];
    jobs = jobs < 1 ? 1 : jobs > 64 ? 64 : jobs;
    for (int i = 0; i < n; i++) {
        int first = 0;
        for (int j = 1; j < jobs; j++)
            if (free_at[j] < free_at[first]) first = j;
        at[2 * i] = start[i] = free_at[first];
        at[2 * i + 1] = free_at[first] += run_s[i];
        if (share) share[i] = 0;
    }
    qsort(at, 2 * (size_t)n, sizeof *at, cmp_double);
    for (int k = 0; share && k + 1 < 2 * n; k++) {   // the stretch from each start or end to the next
        int going = 0;
        for (int i = 0; i < n; i++) going += start[i] <= at[k] && at[k] < start[i] + run_s[i];
        for (int i = 0; i < n; i++)
            if (start[i] <= at[k] && at[k] < start[i] + run_s[i]) share[i] += (at[k + 1] - at[k]) / going;
    }
    return n > 0 ? at[2 * n - 1] : 0;   // the last end
}

// Phase ph's runs' seconds into s, in their order (their count returned),
// the one left to start alone (ablation_lone_run) on all threads: *lone.
static int phase_seconds(const JobTimings *t, const RunWork *runs, const int *phase, int n, int ph, int jobs,
                         double *s, int *lone) {
    int k = 0, at[ABLATION_PLAN_MAX];
    bool left[ABLATION_PLAN_MAX] = { false };
    for (int i = 0; i < n; i++)
        if (phase[i] == ph) { at[k] = i; left[k++] = runs[i].steps_done >= 0; }
    *lone = ablation_lone_run(left, k, jobs);
    for (int j = 0; j < k; j++) s[j] = estimate_run_seconds(t, &runs[at[j]], j == *lone ? 1 : jobs);
    return k;
}

double estimate_job(const JobTimings *t, const RunWork *runs, const int *phase, int n, int jobs) {
    JobFixed fixed = estimate_fixed(t);
    double total = t->self_seconds + fixed.between + fixed.after;
    double s[ABLATION_PLAN_MAX];
    for (int ph = 0, lone; ph < 2; ph++) total += schedule_seconds(s, phase_seconds(t, runs, phase, n, ph, jobs, s, &lone), jobs, NULL);
    return total;
}

int estimate_faster_jobs(const JobTimings *t, const RunWork *runs, const int *phase, int n) {
    return estimate_job(t, runs, phase, n, 2) < estimate_job(t, runs, phase, n, 1) ? 2 : 1;
}

void estimate_load_note(FILE *f, double others, int cores) {
    if (others < 0.25) return;   // a quarter of a core: the noise of a shared machine's daemons and shells
    fprintf(f, "[estimate] other processes kept %.1f of the %d cores busy while it timed: the estimate is for the\n"
               "           machine so loaded (a busy core behind a run's threads slows each of its steps); the job\n"
               "           goes faster if they stop, slower if more start\n", others, cores);
}

// ---------------------------------------------------------------------------
// The timing

// Files the job writes, timed in a temporary folder: one checkpoint of
// model m (its weights and two AdamW moments of zeros) and one figure drawn
// by gnuplot, as the steps draw theirs (figure_draw; 0 s without gnuplot,
// the steps then draw none). 0, or -1 with a message.
static int time_files(const Model *m, const RunConfig *run, JobTimings *t) {
    char dir[] = "/tmp/tinydit_estimate_XXXXXX", path[96], err[1024];
    float *zeros = calloc(m->n_params, sizeof *zeros);
    if (!zeros || !mkdtemp(dir)) {
        free(zeros);
        fprintf(stderr, "error: %s\n", zeros ? "cannot make a temporary folder in /tmp" : "out of memory");
        return -1;
    }
    snprintf(path, sizeof path, "%s/ckpt.safetensors", dir);
    CheckpointArray extra[2] = { { CHECKPOINT_ADAMW_M, zeros }, { CHECKPOINT_ADAMW_V, zeros } };
    double t0 = wall_seconds();
    int rc = checkpoint_save(path, m, run, extra, 2, NULL, 0, err, sizeof err);
    t->ckpt_seconds = wall_seconds() - t0;
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    t->figure_seconds = 0;
    t0 = wall_seconds();
    if (rc == 0 && figure_gnuplot_available()
        && figure_draw(dir, "curve", 800, 500, "plot sin(x) title 'a', cos(x) title 'b'\n", err, sizeof err) == 0)
        t->figure_seconds = wall_seconds() - t0;
    const char *files[] = { "ckpt.safetensors", "curve.gp", "curve.png", "curve.log" };
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    free(zeros);
    return rc;
}

// A part of the scorecard timed as a run pays it: a call of n units on fresh
// buffers, again, then one of n + more. Its ms a unit (the last two apart);
// what the first call cost beyond its units (buffers, noise) into *fixed_ms.
typedef struct { Model *m; float *samples; CifarSet test; Probe *probe; } EvalParts;
typedef void (*EvalPart)(EvalParts *e, int units);
static double time_part(EvalPart part, EvalParts *e, int n, int more, double *fixed_ms) {
    double t[4];
    for (int i = 0; i < 3; i++) {
        t[i] = wall_seconds();
        part(e, i < 2 ? n : n + more);
    }
    t[3] = wall_seconds();
    double unit = 1000.0 * fmax(0, (t[3] - t[2]) - (t[2] - t[1])) / more;
    *fixed_ms += fmax(0, 1000.0 * (t[1] - t[0]) - n * unit);
    return unit;
}
static void euler_steps(EvalParts *e, int steps) { scorecard_samples(e->m, e->samples, SCORECARD_BATCH, steps); }
static void exam_images(EvalParts *e, int n) { scorecard_val_mse(e->m, &e->test, n); }
static void probe_images(EvalParts *e, int n) {   // the test set's features and their statistics
    CifarSet some = { n, e->test.pixels, e->test.labels };
    FeatureStats real;
    if (scorecard_real_stats(e->probe, &some, &real) == 0) feature_stats_free(&real);
}

// The baseline's scorecard at preset p, its own functions on made-up images
// (their speed does not depend on the pixels): Euler steps of a batch of
// samples, the val exam, the probe's statistics of test images; and the files.
static int time_eval(Preset p, int threads, JobTimings *t) {
    Config cfg;
    ablation_config_of(p, CFG_BASE, &cfg);
    omp_set_num_threads(threads);
    Model m;
    char err[512];
    if (model_build(&m, &cfg.model, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return -1; }
    model_init_weights(&m, 0);
    enum { IMAGES = 1250 };
    EvalParts e = { &m, malloc(sizeof(float) * cfg_image_floats(&cfg.model) * SCORECARD_BATCH),
                    { IMAGES, malloc(IMAGES * CIFAR_PIXELS), calloc(IMAGES, 1) }, probe_for_scoring(0, err, sizeof err) };
    int rc = e.samples && e.probe && e.test.pixels && e.test.labels ? 0 : -1;
    if (rc != 0) fprintf(stderr, "error: %s\n", e.probe ? "out of memory" : err);
    if (rc == 0) rc = time_files(&m, &cfg.run, t);
    if (rc == 0) {
        Rng rng;
        rng_seed(&rng, 2);
        for (int i = 0; i < IMAGES * CIFAR_PIXELS; i++) e.test.pixels[i] = (uint8_t)rng_below(&rng, 256);
        t->fresh_ms = 0;
        t->sample_ms_per_image = time_part(euler_steps, &e, 1, 4, &t->fresh_ms) / SCORECARD_BATCH;
        t->exam_ms_per_image = time_part(exam_images, &e, SCORECARD_BATCH, 2 * SCORECARD_BATCH, &t->fresh_ms);
        t->probe_ms_per_image = time_part(probe_images, &e, 250, 1000, &t->fresh_ms);
    }
    cifar_free(&e.test);
    free(e.samples);
    probe_free(e.probe);
    model_free(&m);
    return rc;
}

// Step 7's grid: the shipped class-conditional model read, then a sample of
// each of the 10 classes at each of its GRID_W_COUNT guidance scales, one
// of them w = 1 (one forward pass a step), the others two. One guided and
// one plain Euler step timed, the grid counted from them.
static int time_grid(int threads, JobTimings *t) {
    char path[4096], err[1024];
    Model m;
    Activations a;
    enum { K = 10 };
    omp_set_num_threads(threads);
    project_path(path, sizeof path, SHIPPED_C10);
    double t0 = wall_seconds();
    if (checkpoint_load(path, &m, NULL, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return -1; }
    double load = wall_seconds() - t0;
    size_t per = cfg_image_floats(&m.cfg);
    float *x = calloc(per * K, sizeof *x);
    int y[K], rc = x && activations_alloc(&a, &m, 2 * K, false) == 0 ? 0 : -1;
    for (int k = 0; k < K; k++) y[k] = k;
    if (rc != 0) fprintf(stderr, "error: out of memory\n");
    double guided = 0, plain = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {   // the first round touches fresh buffers: the second counts
        double t1 = wall_seconds();
        rc = flow_sample_with(&m, &a, x, y, K, 2.0f, SAMPLER_EULER, 1, err, sizeof err);
        double t2 = wall_seconds();
        if (rc == 0) rc = flow_sample_with(&m, &a, x, y, K, 1.0f, SAMPLER_EULER, 1, err, sizeof err);
        guided = t2 - t1;
        plain = wall_seconds() - t2;
    }
    if (rc != 0 && x) fprintf(stderr, "error: %s\n", err);
    t->grid_seconds = load + GRID_STEPS * ((GRID_W_COUNT - 1) * guided + plain);
    if (x) activations_free(&a);
    free(x);
    model_free(&m);
    return rc;
}

// The CPU seconds other processes took: the machine's busy time (/proc/stat)
// less this process's and its children's (times); -1 without /proc/stat.
static double others_cpu_seconds(void) {
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                       &v[6], &v[7]) : 0;
    if (f) fclose(f);
    if (n < 8) return -1;
    struct tms own;
    times(&own);
    long hz = sysconf(_SC_CLK_TCK);
    // user, nice, system, irq, softirq, steal: not idle (3), not waiting for disk (4)
    double busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
    return (busy - (double)(own.tms_utime + own.tms_stime + own.tms_cutime + own.tms_cstime)) / (hz > 0 ? hz : 100);
}

// ---------------------------------------------------------------------------
// The runs of the job and what is left of them

// The job's runs at preset p: phase 0 the baseline pair, phase 1 the rest,
// and what dir holds done of each. The count.
static int job_runs(Preset p, int seeds, const char *dir, RunWork *runs, char (*names)[64], int *phase) {
    AblationPlan plan = { .preset = p, .seeds = seeds };
    ablation_select_seeds(&plan);
    int config[ABLATION_PLAN_MAX], seed[ABLATION_PLAN_MAX];
    int n = ablation_plan_runs(&plan, config, seed, ABLATION_PLAN_MAX);
    for (int i = 0; i < n; i++) {
        ablation_run_name(config[i], seed[i], names[i], 64);
        runs[i].config = config[i];
        runs[i].ckpt_every = ablation_config_of(p, config[i], &runs[i].cfg);
        RunMetrics m;
        int at;   // a run that ended (finished or diverged) is not started again: -1, nothing left
        runs[i].steps_done = run_outcome(dir, names[i], &m, &at) != RUN_UNFINISHED ? -1 : steps_in(dir, names[i]);
        if (runs[i].steps_done > runs[i].cfg.run.steps) runs[i].steps_done = runs[i].cfg.run.steps;
        phase[i] = config[i] == CFG_BASE && seed[i] < 2 ? 0 : 1;
    }
    return n;
}

// ---------------------------------------------------------------------------
// The command

typedef struct {
    Preset preset;
    int seeds, jobs;
    bool choose_jobs;           // --choose-jobs: jobs is the faster of 1 and 2, here and now
    const char *out_dir;
    const char *save;           // --save FILE: the estimate in seconds and when it was made
    const char *since;          // --since FILE: the time since, against that estimate
} EstimateOptions;

static int estimate_parse(int argc, char **argv, EstimateOptions *o) {
    *o = (EstimateOptions){ PRESET_QUICK, 1, 1, false, NULL, NULL, NULL };
    ArgOption opts[] = {
        LAB_PLAN_OPTIONS(o),
        ARG_STRING("out", "DIR", &o->out_dir, "the runs' folder (default: the project's runs/)"),
        ARG_STRING("save", "FILE", &o->save, "also write the job's estimate to FILE: its seconds, its start and\n"
                   "its parts, for `lab ablation --estimate FILE` (the job's progress)\n"
                   "and `lab estimate --since FILE` (make tutorial does both)"),
        ARG_STRING("since", "FILE", &o->since, "the time since the estimate saved in FILE, against it"),
        ARG_FLAG("choose-jobs", &o->choose_jobs, true, "instead of --jobs: 1 or 2, whichever the estimate says is\n"
                 "faster here now (make tutorial takes it from --save's file when JOBS is not set)"),
        ARG_END,
    };
    opts[1].help = "seeds per configuration (1: the tutorial's nine runs)";
    opts[2].help = "runs side by side";
    const ArgSpec spec = {
        .program = "lab estimate", .options = opts,
        .about = "  how long `make tutorial` (lab ablation and the steps) will take on this machine: times a\n"
                 "  few training steps of every configuration here, the scorecard's parts, a checkpoint, a\n"
                 "  figure and step 7's grid, and adds up the job: itself, every run's data, steps, val\n"
                 "  checks, checkpoints and scorecard, minus what DIR holds done already, the step programs\n"
                 "  between the runs and the plots after them, also with the other --jobs. Other\n"
                 "  work while it times slows what it measures, and it says so. Writes nothing but --save.",
    };
    return args_parse(&spec, argc, argv);
}

// The two runs of --jobs 2 share more than the cores (the memory bus, the
// last-level cache, often the physical cores behind the virtual ones): a
// step timed alone sees none of that, so the pair is timed side by side.
static void pair_turn(void *ctx) {
    Racer *pair = ctx;
    int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(2);   // each run keeps its own threads inside its half
    #pragma omp parallel num_threads(2)
    racer_turn(&pair[omp_get_thread_num()]);
    omp_set_max_active_levels(levels);
}

// Every configuration of the job's preset, and the baseline as --jobs 2's pair
// (unless one), raced in turns (bench_interleaved): a burst of other work slows
// all alike, and the ratios hold. Step times into t. 0, or -1 after a message.
static int race_steps(Preset job, int all, int half_threads, JobTimings *t) {
    enum { PAIR = ABLATION_CONFIGS, RACERS = PAIR + 2 };
    Config cfg[RACERS];
    for (int c = 0; c < RACERS; c++) ablation_config_of(job, c >= PAIR ? CFG_BASE : c, &cfg[c]);
    long n = (long)(cfg[0].run.batch * cfg_image_floats(&cfg[0].model));
    Racer *racer = calloc(RACERS, sizeof *racer);
    float *x1 = malloc(sizeof(float) * n);
    int ready = 0, rc = racer && x1 ? 0 : -1;
    bool paired = half_threads != all;
    if (rc != 0) fprintf(stderr, "error: out of memory\n");
    else {
        Rng rng;
        rng_seed(&rng, 1);
        rng_fill_uniform(&rng, x1, n, -1.0f, 1.0f);
    }
    for (; rc == 0 && ready < RACERS; ready++) {
        if (racer_init(&racer[ready], &cfg[ready], x1) != 0) { rc = -1; break; }
        racer[ready].reps = cfg[ready].model.dim * cfg[ready].run.batch < 128 * 64 ? 8 : 1;
        racer[ready].threads = ready >= PAIR ? half_threads : all;
    }
    if (rc == 0) {
        BenchFn fns[PAIR + 1];
        double ms[PAIR + 1];
        for (int i = 0; i < PAIR; i++) fns[i] = (BenchFn){ "step", racer_turn, &racer[i] };
        fns[PAIR] = (BenchFn){ "pair", pair_turn, &racer[PAIR] };
        bench_interleaved(fns, PAIR + paired, 1, 9, 1, ms);   // a warm-up round, the median of nine
        for (int c = 0; c < ABLATION_CONFIGS; c++) t->step_ms[c] = ms[c] / racer[c].reps;
        t->jobs_factor = paired ? ms[PAIR] / racer[PAIR].reps / t->step_ms[CFG_BASE] : 1.0;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (2L * half_threads > cores) t->jobs_factor *= 2.0 * half_threads / cores;   // two runs share the cores
    }
    for (int i = 0; i < ready; i++) racer_free(&racer[i]);
    omp_set_num_threads(all);
    free(racer);
    free(x1);
    return rc;
}

// --save: "estimate_seconds S\nsaved_at T\njobs J\n" (T: the job's start, in
// seconds since the epoch), then the job's parts in order, each with its seconds
// (lab ablation --estimate's progress): "part estimate S", the pair's "run NAME S
// F", "part steps S", the other runs, "part plots S". A run's S: its part of its
// phase's wall time (schedule_seconds), F: the share of its steps in its time.
static int save_estimate(const char *path, double seconds, double started, int jobs, const JobTimings *t,
                         const RunWork *runs, const char (*names)[64], const int *phase, int n) {
    char *text = malloc(256 + (size_t)n * 96), err[1024];
    if (!text) { fprintf(stderr, "error: out of memory\n"); return -1; }
    JobFixed fixed = estimate_fixed(t);
    int len = sprintf(text, "estimate_seconds %.0f\nsaved_at %lld\njobs %d\npart estimate %.1f\n", seconds,
                      (long long)started, jobs, t->self_seconds);
    for (int ph = 0; ph < 2; ph++) {
        double s[ABLATION_PLAN_MAX], share[ABLATION_PLAN_MAX];
        int lone, k = phase_seconds(t, runs, phase, n, ph, jobs, s, &lone);
        schedule_seconds(s, k, jobs, share);
        k = 0;
        for (int i = 0; i < n; i++) {
            if (phase[i] != ph) continue;
            // and the share of its steps in it (the rest: its data, val checks and scorecard)
            const RunWork *w = &runs[i];
            double steps_s = w->steps_done < 0 ? 0 : (w->cfg.run.steps - w->steps_done) * t->step_ms[w->config] / 1000.0
                                                     * (jobs > 1 && k != lone ? t->jobs_factor : 1.0);
            len += sprintf(text + len, "run %s %.1f %.3f\n", names[i], share[k], s[k] > 0 ? steps_s / s[k] : 0);
            k++;
        }
        if (ph == 0) len += sprintf(text + len, "part steps %.1f\n", fixed.between);
    }
    len += sprintf(text + len, "part plots %.1f\n", fixed.after);
    int rc = write_file_atomic(path, text, (size_t)len, err, sizeof err);
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    free(text);
    return rc;
}

static int print_since(const char *path) {
    char err[1024];
    size_t len;
    char *text = read_file_all(path, &len, err, sizeof err);
    double est;
    long long at;
    if (!text || sscanf(text, "estimate_seconds %lf saved_at %lld", &est, &at) != 2) {
        fprintf(stderr, "error: %s: %s\n", path, text ? "not an estimate saved by lab estimate --save" : err);
        free(text);
        return 1;
    }
    free(text);
    double took = difftime(time(NULL), (time_t)at);
    char a[32], b[32];
    format_duration(took, a, sizeof a);
    format_duration(est, b, sizeof b);
    printf("[estimate] the job took %s from its estimate on, which said %s (%+.0f%%)\n", a, b,
           est > 0 ? 100.0 * (took - est) / est : 0.0);
    return 0;
}

int cmd_estimate(int argc, char **argv) {
    EstimateOptions o;
    int rc = estimate_parse(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    if (o.since) return print_since(o.since);
    const char *dir = o.out_dir ? o.out_dir : default_runs_dir();
    int all = omp_get_max_threads();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int half = cores / 2 > 1 ? (int)(cores / 2) : 1;   // a run's threads with --jobs 2 (lab ablation)
    printf("[estimate] timing a few training steps of each configuration and the scorecard's parts\n"
           "           here (%s preset, %d thread%s)...\n", preset_name(o.preset), all, all == 1 ? "" : "s");
    double t0 = wall_seconds();
    char err[CIFAR_ERRLEN];
    CifarSet train = {0}, test = {0};
    bool have_data = cifar_load_train(NULL, &train, err, sizeof err) == 0 && cifar_load_test(NULL, &test, err, sizeof err) == 0;
    double data_s = have_data ? wall_seconds() - t0 : 0;
    if (!have_data) printf("[estimate] no CIFAR-10 (%s): reading it is not counted\n", err);
    cifar_free(&train);
    cifar_free(&test);
    JobTimings t = { .data_seconds = data_s };
    double others0 = others_cpu_seconds(), t1 = wall_seconds();
    // the scorecard of a run of --jobs 2 runs on its half of the threads: timed there too
    JobTimings on_half = t;
    if (race_steps(o.preset, all, half, &t) != 0 || time_eval(o.preset, all, &t) != 0 ||
        (half != all && time_eval(o.preset, half, &on_half) != 0))
        return 1;
    omp_set_num_threads(all);
    t.eval_jobs_factor = half != all ? eval_ms(&on_half) / eval_ms(&t) : t.jobs_factor;
    double others = others0 < 0 ? -1 : (others_cpu_seconds() - others0) / (wall_seconds() - t1);
    if (time_grid(all, &t) != 0) return 1;
    RunWork runs[ABLATION_PLAN_MAX];
    char names[ABLATION_PLAN_MAX][64];
    int phase[ABLATION_PLAN_MAX], n = job_runs(o.preset, o.seeds, dir, runs, names, phase), left = 0;
    for (int i = 0; i < n; i++) left += runs[i].steps_done >= 0;
    t.self_seconds = wall_seconds() - t0;
    if (o.choose_jobs && cores >= 2) o.jobs = estimate_faster_jobs(&t, runs, phase, n);
    int other_jobs = o.jobs == 1 ? 2 : 1;
    double e = estimate_job(&t, runs, phase, n, o.jobs);
    char d[32];
    format_duration(e, d, sizeof d);
    JobFixed fixed = estimate_fixed(&t);
    printf("[estimate] the job here: about %s (%s preset, %d run%s left of %d in %s, %d at a time;\n"
           "           of it %.0f s this estimate, %.0f s the step programs between the runs, %.0f s the plots)\n",
           d, preset_name(o.preset), left, left == 1 ? "" : "s", n, dir, o.jobs, t.self_seconds, fixed.between,
           fixed.after);
    if (o.save && save_estimate(o.save, e, (double)time(NULL) - (wall_seconds() - t0), o.jobs, &t, runs, names,
                                phase, n) != 0)
        return 1;
    format_duration(estimate_job(&t, runs, phase, n, other_jobs), d, sizeof d);
    printf("           with JOBS=%d (%d run%s at a time, %d thread%s each): about %s\n", other_jobs, other_jobs,
           other_jobs == 1 ? "" : "s", other_jobs == 1 ? all : half, (other_jobs == 1 ? all : half) == 1 ? "" : "s", d);
    // On a cluster every run is a task of its own on `all` threads: what it
    // costs is the sum of the runs, and the longest bounds a task's time limit.
    double run_sum = 0, longest = 0;
    for (int i = 0; i < n; i++) {
        double s = estimate_run_seconds(&t, &runs[i], 1.0);
        run_sum += s;
        if (s > longest) longest = s;
    }
    format_duration(longest, d, sizeof d);
    printf("           on a cluster (RUNNER=slurm, a task a run, %d thread%s each): about %.2f core-hours,\n"
           "           the longest run about %s\n", all, all == 1 ? "" : "s", run_sum * all / 3600.0, d);
    if (o.choose_jobs)
        printf("[estimate] so the job runs %s (JOBS=%d), the faster here now; JOBS=%d makes it run %s\n",
               o.jobs == 1 ? "one run at a time on all threads" : "two runs side by side", o.jobs, other_jobs,
               other_jobs == 1 ? "one at a time" : "two side by side");
    printf("           (measured in %.0f s on this machine as loaded now: work beside the job, now or\n"
           "           later, slows it; lab estimate --help says what is timed)\n", wall_seconds() - t0);
    estimate_load_note(stdout, others, (int)cores);
    return 0;
}
