// lab.h: the lab's commands (main.c) and what of them the tests call.
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include "io/args.h"
#include "io/config_parse.h"
#include "io/metrics.h"
#include "nn/model.h"
#include "nn/rng.h"
#include "nn/train_step.h"
#include "train/ablation.h"
#include "train/trainer.h"

// The commands (argv[0] is the command's name): each answers 0 when it did
// its work, 2 for a bad command line (common/io/args.h), 128 + N when signal
// N stopped the runs it started, 1 otherwise.
int cmd_estimate(int argc, char **argv);
int cmd_ablation(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_speed(int argc, char **argv);
int cmd_report(int argc, char **argv);

// ---------------------------------------------------------------------------
// The options of the commands that plan runs (ablation, sweep, estimate), on
// a plan with the fields they name; LAB_RUN_OPTIONS adds those of the
// commands that start them, --print-commands setting *mode to commands_mode.
#define LAB_PLAN_OPTIONS(plan)                                                                                  \
    ARG_PRESET(&(plan)->preset),                                                                                \
    ARG_INT("seeds", "N", &(plan)->seeds, 1, ABLATION_MAX_SEEDS, "seeds per configuration"),                 \
    ARG_INT("jobs", "N", &(plan)->jobs, 1, 64, "runs side by side; each run's output then goes to\n"         \
                                               "DIR/NAME/train.log")
#define LAB_RUN_OPTIONS(plan, mode, commands_mode)                                                             \
    LAB_PLAN_OPTIONS(plan),                                                                                     \
    { "threads", "T", ARG_KIND_INT, &(plan)->threads, 1, 4096, NULL,                                          \
      "threads per run (default: the run's own, all cores)", 1, NULL },                                        \
    ARG_FLAG("log", &(plan)->log_to_file, true, "each run's output to DIR/NAME/train.log, also with --jobs 1"), \
    ARG_SWITCH("print-commands", (int *)(mode), commands_mode, "print the train commands, one a line, and run\n" \
                                                               "nothing (for GNU parallel, xargs, make -j, Slurm)"), \
    ARG_FLAG("left", &(plan)->left_only, true, "with --print-commands: only the runs that have not ended\n"   \
                                                "(neither metrics.json nor diverged.json), what is left to run")

// ---------------------------------------------------------------------------
// The ablation (ablation.c): which configurations and seeds run, and the
// train command of each.
typedef struct {
    Preset preset;
    int jobs;                        // runs side by side
    int threads;                     // per run; 0 = the run's default (all cores)
    bool split_cores;                // threads: the cores divided by jobs (no --threads given)
    int seeds;                       // --seeds: seeds per configuration (default 1)
    const char *out_dir;             // NULL: the train command's default (runs/)
    const char *exe;                 // the program of the train commands (lab_train_program)
    bool log_to_file;                // --log: output to DIR/NAME/train.log even with one job
    const char *estimate;            // --estimate FILE: the job's parts (lab estimate --save), for its progress
    bool left_only;                  // --left: --print-commands prints the runs not ended only
    bool selected[ABLATION_CONFIGS][ABLATION_MAX_SEEDS];   // [config][seed]: run it
} AblationPlan;

// Selects the runs of --seeds p->seeds: seeds 0 to ablation_config_seeds - 1
// of each configuration (common/train/ablation.h).
void ablation_select_seeds(AblationPlan *p);

#define ABLATION_PLAN_MAX (ABLATION_CONFIGS * ABLATION_MAX_SEEDS)
// The selected runs in the order they are started: the tutorial's nine
// first, then every configuration's seed 1, then seed 2, ... so that a plan
// interrupted part-way leaves whole rounds of seeds. Returns the count (at most
// cap), the runs in config[i], seed[i].
int ablation_plan_runs(const AblationPlan *p, int *config, int *seed, int cap);

// Of n runs, left[i] those still to train, `jobs` side by side: the one that
// starts alone at the end (the last, when one is over), or -1. It gets all
// the cores the jobs split, as no run is left to share them.
int ablation_lone_run(const bool *left, int n, int jobs);

// Parses the options of `ablation`: ARGS_OK, ARGS_HELP or ARGS_BAD. Sets
// *mode when --print-commands asked to print instead of running.
typedef enum { ABL_RUN, ABL_PRINT_COMMANDS } AblationMode;
int ablation_parse(int argc, char **argv, AblationPlan *p, AblationMode *mode);

// The train command of configuration c at seed k as one shell line
// (arguments quoted where needed): its --set values, and --set seed=k for
// the baseline and for every seed k >= 1. 0, or -1 if it did not fit in len.
int ablation_command_line(const AblationPlan *p, int config, int seed, char *line, size_t len);

// Configuration c at preset p, as its run would have it (the preset, then
// its --set values). Its checkpoints' interval.
int ablation_config_of(Preset p, int c, Config *cfg);

// ---------------------------------------------------------------------------
// A sweep's plan and its run names (sweep.c; sweep_curves.c reads them).
#define SWEEP_MAX_VALUES 16
#define SWEEP_MAX_SETS 8
#define SWEEP_CONFIGS CFG_BASE_LR2E3   // the six configurations at their own lr

typedef struct {
    Preset preset;
    const char *key;                    // --key
    int n_values;
    char values[SWEEP_MAX_VALUES][24];
    int n_configs, config[SWEEP_CONFIGS];
    int n_sets;                         // --set key=value: the same for every run of the sweep
    char sets[SWEEP_MAX_SETS][64];
    int seeds, jobs, threads;
    char out_dir[PATH_MAX];
    bool log_to_file, left_only;
} SweepPlan;

// A configuration's name in a sweep: its ablation name without "p11_".
static inline const char *config_short(int c) { return ABLATION_CONFIG[c].name + strlen("p11_"); }

// The folder of configuration p->config[c] at value v and seed k:
// <config>_<key><value>_s<seed>, e.g. base_lr8e-3_s0.
static inline void sweep_run_name(const SweepPlan *p, int c, int v, int seed, char *out, size_t n) {
    snprintf(out, n, "%s_%s%s_s%d", config_short(p->config[c]), p->key, p->values[v], seed);
}

// --curves (sweep_curves.c): each configuration's val MSE against the
// first's at every check of val.tsv; with tsv one line per check.
void sweep_curves(const SweepPlan *p, bool tsv);

// ---------------------------------------------------------------------------
// The one launcher (runner.c): the ablation and the sweep turn their runs
// into shell command lines and hand them here.

// The step 6 program whose `train` command every run is, by its absolute
// path, so that the commands work from any folder.
const char *lab_train_program(void);

// Quotes s for a POSIX shell if it needs it ('...'), else copies it.
void shell_quote(const char *s, char *out, size_t outlen);

// Appends `--set key=value`.
void line_add_set(char *line, size_t len, const char *setting);
// Begins the line of one run: `EXE train --name NAME --preset P --resume`,
// and `--out DIR` unless out_dir is NULL (the train command's default).
void train_line_start(char *line, size_t len, const char *exe, const char *name, Preset preset, const char *out_dir);
// Appends ` >> DIR/NAME/train.log 2>&1` (quoted if it needs it), making the
// folder DIR/NAME for it. 0, or -1 when that failed (a message) or the line is full.
int line_add_log(char *line, size_t len, const char *runs_dir, const char *name);

// Prints the lines, loads the probe if need_probe, runs them `jobs` at a time
// (xargs -P), waits, frees them. A SIGINT or SIGTERM goes on to the runs (each
// saves its checkpoint) and into *stop_signal. A watch (or NULL) hears each
// start, a tick a second and the end. xargs' status (0 all well, 123 one or
// more failed), or -1: the probe failed or xargs did not start.
typedef char CommandLine[8192];
typedef struct JobWatch JobWatch;
int launch_lines(CommandLine *lines, int n, int jobs, bool need_probe, JobWatch *watch, int *stop_signal);

// ---------------------------------------------------------------------------
// The job's progress (job_progress.c): the parts of make tutorial's job as
// lab estimate --save wrote them, read back by lab ablation --estimate,
// which shows the job's progress by them as its runs advance.
typedef struct {
    char name[64];      // a run's name; the job's other parts: estimate, steps, plots
    bool is_run;
    double seconds;     // its share of the estimate
    double steps_share; // a run's: the share of its training steps in it (the rest: its scorecard, ...)
    double done;        // how much of it is done, 0 to 1
} JobPart;
#define JOB_MAX_PARTS (ABLATION_PLAN_MAX + 3)
typedef struct {
    double estimate;    // the job's estimate, seconds
    double started;     // when the job began (lab estimate did), seconds since the epoch
    int n;
    JobPart part[JOB_MAX_PARTS];
} JobPlan;
// 0, or -1 with a message.
int job_plan_read(const char *path, JobPlan *p, char *err, size_t errlen);
// The job's line at `now` (seconds since the epoch), `what` the running runs:
// "[job] 2:05, 25% done, about 5:40 left (estimated 8:20) | p11_rope 420/1000".
// What is left goes at the pace of what is done, against the estimate.
void job_progress_line(const JobPlan *p, double now, const char *what, char *out, size_t n);

// The watch over lab ablation's n runs (steps[i] each, was_finished[i] before
// it began) for launch_lines: a line as each starts and ends; with draw (the
// runs' output not on the terminal) the job's line too, against estimate_file
// if not NULL, after a run ends and every half minute.
JobWatch *job_watch_new(const char *dir, int n, const char (*names)[64], const int *steps, const bool *was_finished,
                        const char *estimate_file, bool draw);
void job_watch_started(JobWatch *w, int i, pid_t pid);   // line i's process
void job_watch_tick(JobWatch *w, bool last);
void job_watch_free(JobWatch *w);

// How the run DIR/NAME ended: finished (its metrics.json, read into *m),
// diverged (its diverged.json, the step in *diverged_step), or neither yet.
typedef enum { RUN_UNFINISHED, RUN_FINISHED, RUN_DIVERGED } RunOutcome;
RunOutcome run_outcome(const char *runs_dir, const char *name, RunMetrics *m, int *diverged_step);
// Whether the run DIR/NAME ever started: it wrote a checkpoint or its
// loss.tsv (its folder alone may be there, made for its log ahead of it).
bool run_started(const char *runs_dir, const char *name);

// ---------------------------------------------------------------------------
// The main job's time (estimate.c): the arithmetic, on given timings, so that
// the tests can pin it. What the job's work costs here, in milliseconds
// unless named otherwise:
typedef struct {
    double step_ms[ABLATION_CONFIGS]; // one training step of each configuration, on all threads
    double exam_ms_per_image;         // the val exam, one image, the baseline (a forward pass)
    double sample_ms_per_image;       // one Euler step of one sample, the baseline (a forward pass)
    double fresh_ms;                  // the scorecard's parts once a run, beyond their images (fresh buffers)
    double probe_ms_per_image;        // the probe's features and statistics of one test image
    double data_seconds;              // CIFAR-10 read from disk: once per run
    double jobs_factor;               // a step of one of --jobs 2's runs, the other beside it / on all threads
    double eval_jobs_factor;          // the same for its val checks and scorecard, on its half of the threads
    // what the job pays besides the runs' work, in seconds:
    double ckpt_seconds;              // one checkpoint of the baseline written (a run writes one every ckpt_every steps)
    double figure_seconds;            // one figure drawn by gnuplot (0 without gnuplot)
    double grid_seconds;              // step 7's grid: the shipped class-conditional model loaded and sampled
    double self_seconds;              // lab estimate itself, which is the job's first part
} JobTimings;

// The work left in one run of configuration c, whose config is cfg, of which
// steps_done steps are done (its loss.tsv; -1: finished, nothing left),
// with a checkpoint every ckpt_every steps.
typedef struct {
    int config;
    Config cfg;
    int steps_done, ckpt_every;
} RunWork;

// Seconds of one run: its data, steps, checkpoints, val checks (VAL_IMAGES
// every cfg.val_every steps) and scorecard (val MSE, FD_SAMPLES samples of
// FD_EULER_STEPS, more at a guidance w != 1, the probe's features), a forward
// pass the baseline's times the ratio of their steps. With jobs > 1
// t->jobs_factor and t->eval_jobs_factor slower. 0 for a finished run.
double estimate_run_seconds(const JobTimings *t, const RunWork *w, int jobs);

// The job around the runs, in seconds: the step programs between the phases
// (checks, timings, figures, step 7's grid); after them the plots and maps.
typedef struct { double between, after; } JobFixed;
JobFixed estimate_fixed(const JobTimings *t);

// The wall time of runs of these durations started in this order, `jobs` at
// a time, each in the first free place (as xargs -P does); in share (unless
// NULL) each run's part of it, every stretch split evenly among the runs going.
double schedule_seconds(const double *run_s, int n, int jobs, double *share);

// The whole job's seconds: lab estimate, the baseline pair (phase 0), the step
// programs, the others (phase 1), each phase `jobs` at a time (a run left to
// start alone on all threads, ablation_lone_run), and the plots.
double estimate_job(const JobTimings *t, const RunWork *runs, const int *phase, int n, int jobs);

// 2 (two runs side by side) if estimate_job finds it faster than 1, else 1.
int estimate_faster_jobs(const JobTimings *t, const RunWork *runs, const int *phase, int n);

// The note lab estimate ends with when other processes kept `others` of the
// machine's cores busy while it timed (a quarter of a core or more); nothing otherwise.
void estimate_load_note(FILE *f, double others, int cores);

// ---------------------------------------------------------------------------
// The speed race (speed.c), and the steps lab estimate times.

// One training step of a configuration, ready to be timed in turns
// (bench_interleaved, common/io/bench.h): its model, its optimizer state and
// a batch of made-up images x1 (a step's speed does not depend on the pixels).
typedef struct {
    Model m;
    TrainState ts;
    Rng rng;
    const float *x1;
    int reps, threads;     // steps a turn (1; a smoke step lasts a few ms); threads, 0: as they are
    double flops, bytes;   // the step's products, its elementwise passes' traffic
} Racer;
// Builds cfg's model and optimizer state at cfg->run.batch. 0, or -1 with a message.
int racer_init(Racer *r, const Config *cfg, const float *x1);
void racer_free(Racer *r);
// A turn: reps training steps (a BenchFn's function; ctx is the Racer).
void racer_turn(void *ctx);

// Floating-point operations of config c's products at batch N (speed.c
// counts them): the forward's Linears and attention, the forward, the step.
typedef struct { double linear, attention, forward, step; } StepFlops;
StepFlops train_step_flops_detail(const ModelConfig *c, int N);

// Bytes the elementwise passes of that step move (norms, residuals,
// softmax, activations, AdamW; speed.c lists them), for the roofline.
double train_step_bytes(const ModelConfig *c, int N, size_t n_params);

// ---------------------------------------------------------------------------
// What the estimate and the job's progress both use (job_progress.c).
// A duration as "1:02:03" or "12:34" (minutes and seconds).
void format_duration(double seconds, char *out, size_t n);
// Steps a run has done: the lines of DIR/NAME/loss.tsv after its header (0 without one).
int steps_in(const char *dir, const char *name);
