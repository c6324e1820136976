// estimate.c: the main job's time, measured here before it starts.
//
// A number from another machine says little: the committed runs' step times
// vary severalfold with the machine and with what else ran on it. So the job
// times itself where it will run: a few real training steps of every
// configuration (the model is built, the steps run on made-up images of the
// right shape; their speed does not depend on the pixels), the baseline's val
// exam, sampling and probe features, and reading CIFAR-10. The sums are
// estimate_run_seconds and estimate_job below: a run is its steps times its
// step time, plus its val checks and scorecard as forward passes of the
// baseline scaled by the configuration's step time. The timing takes seconds
// on an idle machine (more on a busy one), and the estimate is as good as the
// machine is steady: work started beside the job later slows every part of it.
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "lab.h"
#include "nn/flow.h"
#include "eval/scorecard.h"
#include "io/bench.h"
#include "io/cifar.h"
#include "io/clock.h"
#include "io/fileio.h"
#include "io/paths.h"

// ---------------------------------------------------------------------------
// The arithmetic

double estimate_run_seconds(const JobTimings *t, const RunWork *w, double factor) {
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
    return (train_ms + checks_ms + scorecard_ms) * factor / 1000.0 + t->data_seconds;
}

double schedule_seconds(const double *run_s, int n, int jobs) {
    double free_at[64] = {0};
    if (jobs < 1) jobs = 1;
    if (jobs > 64) jobs = 64;
    for (int i = 0; i < n; i++) {
        int first = 0;
        for (int j = 1; j < jobs; j++)
            if (free_at[j] < free_at[first]) first = j;
        free_at[first] += run_s[i];
    }
    double end = 0;
    for (int j = 0; j < jobs; j++) end = fmax(end, free_at[j]);
    return end;
}

double estimate_job(const JobTimings *t, const RunWork *runs, const int *phase, int n, int jobs) {
    double total = 0, factor = jobs > 1 ? t->jobs_factor : 1.0;
    double *s = calloc((size_t)n + 1, sizeof *s);
    for (int ph = 0; ph < 2 && s; ph++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (phase[i] == ph) s[k++] = estimate_run_seconds(t, &runs[i], factor);
        total += schedule_seconds(s, k, jobs);
    }
    free(s);
    return total;
}

int estimate_faster_jobs(const JobTimings *t, const RunWork *runs, const int *phase, int n) {
    return estimate_job(t, runs, phase, n, 2) < estimate_job(t, runs, phase, n, 1) ? 2 : 1;
}

void format_duration(double seconds, char *out, size_t n) {
    long s = (long)(seconds + 0.5);
    if (s >= 3600) snprintf(out, n, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    else snprintf(out, n, "%ld:%02ld", s / 60, s % 60);
}

// ---------------------------------------------------------------------------
// The timing

// Configuration c at preset p, as its run would have it (the preset, then its --set values).
static void config_of(Preset p, int c, Config *cfg) {
    int ckpt_every;
    preset_apply(p, cfg, &ckpt_every);
    for (int i = 0; ABLATION_CONFIG[c].sets[i]; i++) config_set_or_exit(cfg, ABLATION_CONFIG[c].sets[i]);
}

// The scorecard's batch (common/eval/scorecard.c): its val exam and its
// sampling run the model on this many images at a time.
#define SCORECARD_BATCH 250

// The baseline's scorecard at preset p, by its own functions on one batch
// of made-up images: sampling with 1 and with 3 Euler steps (the
// difference is two forward passes; the rest, the first touch of fresh
// buffers that each call allocates, is paid once a call), the val exam of
// one batch, and the probe's features of as many images.
static int time_eval(Preset p, int threads, JobTimings *t) {
    Config cfg;
    config_of(p, CFG_BASE, &cfg);
    omp_set_num_threads(threads);
    Model m;
    char err[512];
    if (model_build(&m, &cfg.model, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return -1; }
    model_init_weights(&m, 0);
    size_t per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img;
    float *samples = malloc(sizeof(float) * per * SCORECARD_BATCH);
    float *features = malloc(sizeof(float) * PROBE_FEATURES * SCORECARD_BATCH);
    Probe *probe = probe_alloc();
    // made-up test images for the val exam: its speed does not depend on them
    CifarSet test = { SCORECARD_BATCH, calloc(SCORECARD_BATCH, CIFAR_PIXELS), calloc(SCORECARD_BATCH, 1) };
    int rc = samples && features && probe && test.pixels && test.labels ? 0 : -1;
    if (rc != 0) fprintf(stderr, "error: out of memory\n");
    if (rc == 0) {
        Rng rng;
        rng_seed(&rng, 2);
        for (int i = 0; i < SCORECARD_BATCH * CIFAR_PIXELS; i++) test.pixels[i] = (uint8_t)rng_below(&rng, 256);
        probe_init(probe, 3);
        double t0 = wall_seconds();
        scorecard_samples(&m, samples, SCORECARD_BATCH, 1);
        double t1 = wall_seconds();
        scorecard_samples(&m, samples, SCORECARD_BATCH, 3);
        double t2 = wall_seconds();
        scorecard_val_mse(&m, &test, SCORECARD_BATCH);
        double t3 = wall_seconds();
        probe_features(probe, samples, SCORECARD_BATCH, features);
        double t4 = wall_seconds();
        double pass_ms = 1000.0 * fmax(0, (t2 - t1) - (t1 - t0)) / 2;   // one forward pass of the batch
        double fresh_ms = fmax(0, 1000.0 * (t1 - t0) - pass_ms);
        t->sample_ms_per_image = pass_ms / SCORECARD_BATCH;
        t->exam_ms_per_image = fmax(pass_ms, 1000.0 * (t3 - t2) - fresh_ms) / SCORECARD_BATCH;
        t->fresh_ms = 2 * fresh_ms;   // the val exam's buffers and the sampler's
        t->probe_ms_per_image = 1000.0 * (t4 - t3) / SCORECARD_BATCH;
    }
    cifar_free(&test);
    free(samples); free(features);
    probe_free(probe);
    model_free(&m);
    return rc;
}

// ---------------------------------------------------------------------------
// The runs of the job and what is left of them

// Steps done of run `name` in dir: -1 when finished (its metrics.json), else
// the lines of its loss.tsv (0 for a run not started).
static int steps_done(const char *dir, const char *name) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s/metrics.json", dir, name);
    if (file_exists(path)) return -1;
    snprintf(path, sizeof path, "%s/%s/loss.tsv", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int lines = 0;
    for (int ch; (ch = fgetc(f)) != EOF;) lines += ch == '\n';
    fclose(f);
    return lines;
}

// The job's runs at preset p: phase 0 the baseline pair, phase 1 the rest,
// and what dir holds done of each. The count.
static int job_runs(Preset p, int seeds, const char *dir, RunWork *runs, int *phase) {
    AblationPlan plan = { .preset = p, .seeds = seeds };
    ablation_select_seeds(&plan);
    int config[ABLATION_PLAN_MAX], seed[ABLATION_PLAN_MAX];
    int n = ablation_plan_runs(&plan, config, seed, ABLATION_PLAN_MAX);
    for (int i = 0; i < n; i++) {
        char name[64];
        ablation_run_name(config[i], seed[i], name, sizeof name);
        runs[i].config = config[i];
        config_of(p, config[i], &runs[i].cfg);
        runs[i].steps_done = steps_done(dir, name);
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
        ARG_STRING("save", "FILE", &o->save, "also write the job's estimate to FILE: its seconds and the time\n"
                   "now, for `lab estimate --since FILE`, which prints the time since\n"
                   "against it (make tutorial does, at its end)"),
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
                 "  few training steps of every configuration here and the scorecard's parts, and adds up\n"
                 "  the job: every run's steps, val checks and scorecard, minus what DIR holds done\n"
                 "  already (the scorecard's probe classifier is the shipped one: nothing to train), also\n"
                 "  with the other --jobs. Other work while it times slows what it measures. Writes nothing.",
    };
    return args_parse(&spec, argc, argv);
}

// The two runs of --jobs 2 share more than the cores: the memory bus, the
// last-level cache and, behind the virtual cores of many machines, the
// physical ones. A run's step timed alone sees none of that, so the pair
// is timed side by side, each on its own threads.
static void pair_turn(void *ctx) {
    Racer *pair = ctx;
    int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(2);   // each run keeps its own threads inside its half
    #pragma omp parallel num_threads(2)
    racer_turn(&pair[omp_get_thread_num()]);
    omp_set_max_active_levels(levels);
}

// Every configuration of the job's preset, and its baseline as the two runs
// of --jobs 2 side by side (unless they would be one), raced in turns in the
// same rounds (bench_interleaved): a burst of other work then slows every
// one of them alike, and the ratios hold. Their step times into t. 0, or -1
// after a message.
static int race_steps(Preset job, int all, int half_threads, JobTimings *t) {
    enum { PAIR = ABLATION_CONFIGS, RACERS = PAIR + 2 };
    Config cfg[RACERS];
    for (int c = 0; c < RACERS; c++) config_of(job, c >= PAIR ? CFG_BASE : c, &cfg[c]);
    long n = (long)cfg[0].run.batch * cfg[0].model.channels * cfg[0].model.img * cfg[0].model.img;
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
        bench_interleaved(fns, PAIR + paired, 1, 3, 1, ms);   // a warm-up round, the median of three
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

// --save: "estimate_seconds S\nsaved_at T\njobs J\n" (T: seconds since the
// epoch; J: the runs side by side the estimate is for).
static int save_estimate(const char *path, double seconds, int jobs) {
    char text[128], err[1024];
    snprintf(text, sizeof text, "estimate_seconds %.0f\nsaved_at %lld\njobs %d\n", seconds, (long long)time(NULL),
             jobs);
    if (write_file_atomic(path, text, strlen(text), err, sizeof err) == 0) return 0;
    fprintf(stderr, "error: %s\n", err);
    return -1;
}

// --since: the time since the estimate was saved, against it.
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
    printf("[estimate] the job took %s since its estimate, which said %s (%+.0f%%)\n", a, b,
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
    // the data: how long it takes to read
    char err[CIFAR_ERRLEN];
    CifarSet train = {0}, test = {0};
    bool have_data = cifar_load_train(NULL, &train, err, sizeof err) == 0 && cifar_load_test(NULL, &test, err, sizeof err) == 0;
    double data_s = have_data ? wall_seconds() - t0 : 0;
    if (!have_data) printf("[estimate] no CIFAR-10 (%s): reading it is not counted\n", err);
    cifar_free(&train);
    cifar_free(&test);
    JobTimings t = { .data_seconds = data_s };
    if (race_steps(o.preset, all, half, &t) != 0 || time_eval(o.preset, all, &t) != 0) return 1;
    RunWork runs[ABLATION_PLAN_MAX];
    int phase[ABLATION_PLAN_MAX], n = job_runs(o.preset, o.seeds, dir, runs, phase), left = 0;
    for (int i = 0; i < n; i++) left += runs[i].steps_done >= 0;
    // --choose-jobs: the faster of one run at a time and two side by side
    if (o.choose_jobs && cores >= 2) o.jobs = estimate_faster_jobs(&t, runs, phase, n);
    int other_jobs = o.jobs == 1 ? 2 : 1;
    double e = estimate_job(&t, runs, phase, n, o.jobs);
    char d[32];
    format_duration(e, d, sizeof d);
    printf("[estimate] the job here: about %s (%s preset, %d run%s left of %d in %s, %d at a time;\n"
           "           the step programs between the runs train nothing)\n",
           d, preset_name(o.preset), left, left == 1 ? "" : "s", n, dir, o.jobs);
    if (!strcmp(probe_choice(), "trained"))
        printf("[estimate] TINYDIT_PROBE=trained: training the probe classifier first, if it is not cached, is not\n"
               "           counted (tools/train_probe trains it alone and says how long it took)\n");
    if (o.save && save_estimate(o.save, e, o.jobs) != 0) return 1;
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
    // Other work while timing, even at nice 19, stalls the steps' threads at
    // every barrier: the steps come out slower than they will run once it stops.
    printf("           (measured in %.0f s on this machine as loaded now: work beside the job, now or\n"
           "           later, slows it; lab estimate --help says what is timed)\n", wall_seconds() - t0);
    return 0;
}
