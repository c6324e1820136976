// ablation.h: the parts of step6_ablation, shared by main.c and the tests.
//
//   ablation.c  the nine runs, their train commands, and running them side by side
//   results.c   reading the runs' metrics.json; the seed gap and the
//               standard error over seeds (the verdicts)
//   table.c     the text: the tutorial's table, the table over seeds, the
//               lr 2e-3 pair, --compare, --tsv (the `table` command)
//   report.c    the same tables in Markdown: runs/report.md (`report`)
//   curves.c    table --curves: the loss curves over seeds, window by window
//   runner.c    many train commands, N at a time, by xargs -P; how a run ended
//   speed.c     the fair speed race and the floating-point work of a step
//   speed_eval.c  speed --eval: is the scoring threaded as well as the step?
//   sweep.c     one config key over a list of values (sweep_plan.h: its plan
//               and run names; sweep_curves.c: --curves, val MSE along the runs)
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "io/bench.h"
#include "io/config_parse.h"
#include "io/metrics.h"
#include "nn/model.h"
#include "train/trainer.h"

// ---------------------------------------------------------------------------
// The runs (ablation.c). Each configuration differs from the baseline by the
// --set values listed, nothing else: same preset, same data, same scorecard.
// Each is trained with one or more seeds; the run of configuration c at seed
// k is one folder under runs/ (ablation_run_name):
//   the baseline   p11_base_s0, p11_base_s1, p11_base_s2, ...
//   the others     p11_rope (seed 0), p11_rope_s1, p11_rope_s2, ...
#define ABLATION_CONFIGS 8
#define ABLATION_MAX_SEEDS 16
#define ABLATION_MAX_SETS 4

typedef struct {
    const char *name;                       // folder of its seed-0 run ("p11_base": every seed suffixed)
    const char *label;                      // row of the table
    const char *sets[ABLATION_MAX_SETS + 1];// --set key=value, NULL-terminated
} AblationConfig;

extern const AblationConfig ABLATION_CONFIG[ABLATION_CONFIGS];
enum { CFG_BASE, CFG_RMSNORM, CFG_QKNORM, CFG_SWIGLU, CFG_ROPE, CFG_ALL, CFG_BASE_LR2E3, CFG_QKNORM_LR2E3 };

// The tutorial's nine runs: the baseline at seeds 0 and 1, every other
// configuration at seed 0. `ablation` with no --seeds trains these.
#define ABLATION_RUNS 9
typedef struct {
    const char *name;                       // folder under runs/
    const char *label;                      // row of the table
    int config, seed;
} AblationRun;

extern const AblationRun ABLATION[ABLATION_RUNS];
enum { RUN_BASE_S0, RUN_BASE_S1, RUN_RMSNORM, RUN_QKNORM, RUN_SWIGLU, RUN_ROPE, RUN_ALL,
       RUN_BASE_LR2E3, RUN_QKNORM_LR2E3 };
// Index of one of the nine by name, -1 if it is not one of them.
int ablation_index(const char *name);

// The folder name of configuration c at seed k.
void ablation_run_name(int config, int seed, char *out, size_t outlen);
// The other way round: 0 with *config and *seed, or -1 if no run has this name.
int ablation_run_parse(const char *name, int *config, int *seed);
// How many seeds configuration c trains with --seeds n: n, and at least two
// for the baseline, whose seed pair is the tutorial's yardstick.
int ablation_config_seeds(int config, int n);

typedef struct {
    Preset preset;
    int jobs;                        // runs side by side
    int threads;                     // per run; 0 = the run's default (all cores)
    int seeds;                       // --seeds: seeds per configuration (default 1)
    const char *out_dir;             // NULL: the train command's default (runs/)
    const char *exe;                 // how to call ourselves
    bool log_to_file;                // --log: output to DIR/NAME/train.log even with one job
    bool selected[ABLATION_CONFIGS][ABLATION_MAX_SEEDS];   // [config][seed]: run it
} AblationPlan;

// The selected runs in the order they are started: the tutorial's nine
// first, then every configuration's seed 1, then seed 2, ... so that a plan
// stopped part-way leaves whole rounds of seeds. Returns the count (at most
// cap), the runs in config[i], seed[i].
int ablation_plan_runs(const AblationPlan *p, int *config, int *seed, int cap);

// Parses the options of `ablation` (argv: the options alone, without the
// command's name). ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h). Sets
// *mode when --print-commands / --list asked to print, not run.
typedef enum { ABL_RUN, ABL_PRINT_COMMANDS, ABL_LIST } AblationMode;
int ablation_parse(int argc, char **argv, AblationPlan *p, AblationMode *mode);

// The train command of configuration c at seed k, as an argv (NULL-terminated,
// at most cap entries; the strings live in buf): its --set values, and
// --set seed=k for the baseline and for every seed k >= 1. Returns the number
// of arguments, -1 if cap or buflen are too small.
int ablation_argv(const AblationPlan *p, int config, int seed, char **argv, int cap, char *buf, size_t buflen);
// The same command as one shell line (arguments quoted where needed).
void ablation_command_line(const AblationPlan *p, int config, int seed, char *out, size_t outlen);

int cmd_ablation(int argc, char **argv, const char *self);

// The probe classifier of probe-FD is trained once and cached
// (common/eval/probe.h); two runs started side by side on an empty cache
// would both train it, so the ablation and the sweep make sure it is there
// before they start any run. 0, or -1 with a message on stderr.
int prepare_probe(Preset preset);

// The other commands take argv[0] = the command's name, and getopt_long
// reads the rest (common/io/args.h).
// sweep.c: one config key over a list of values, per configuration and seed.
int cmd_sweep(int argc, char **argv, const char *self);

// Quotes s for a POSIX shell if it needs it ('...'), else copies it.
void shell_quote(const char *s, char *out, size_t outlen);

// ---------------------------------------------------------------------------
// Running many runs (runner.c).

// Runs each shell command line, `jobs` at a time, by `xargs -0 -n 1 -P jobs
// sh -c`, and waits for all. A SIGINT or SIGTERM meanwhile is passed on to
// the commands (each run saves its checkpoint) and returned in *stop_signal.
// xargs' exit status: 0 when every command exited 0, 123 when one or more
// failed; -1 when xargs could not be started.
int run_lines(char *const *lines, int n, int jobs, int *stop_signal);

// How the run DIR/NAME ended: finished (its metrics.json, read into *m),
// diverged (its diverged.json, the step in *diverged_step), or neither yet.
typedef enum { RUN_UNFINISHED, RUN_FINISHED, RUN_DIVERGED } RunOutcome;
RunOutcome run_outcome(const char *runs_dir, const char *name, RunMetrics *m, int *diverged_step);

// ---------------------------------------------------------------------------
// Reading the runs (results.c). The scorecard fields of each metrics.json are
// read by common/io/metrics.h; the table adds the loss curve and the config's lr.
#define CURVE_MAX 512

typedef struct {
    bool present;             // metrics.json read and understood
    char note[METRICS_ERRLEN];// why not, when !present
    RunMetrics m;             // params, val_mse, probe_fd (NAN if null), ms_per_step, loss_spikes, preset, cfg
    double lr;                // config.lr, NAN if the file has no config
    int steps;                // config.steps, 0 if the file has no config
    double train_seconds;     // "train_seconds": the steps, summed over resumed sessions; NAN if absent
    double scorecard_seconds; // the sum of "scorecard_seconds" (val MSE, sampling, probe-FD); NAN if absent
    int n_curve;              // "curve": [[step, mean loss of the window], ...]
    double curve_step[CURVE_MAX], curve_loss[CURVE_MAX];
} AblationRow;

// One configuration over its seeds.
typedef struct {
    AblationRow seed[ABLATION_MAX_SEEDS];   // seed[k]: the run of seed k, present or not
    int n;                    // seeds present
    SeedSpread val;           // val MSE over the present seeds (common/io/metrics.h)
    double probe_fd;          // mean over the seeds that have one, NAN if none
    double ms_per_step;       // mean over the present seeds
    int spikes;               // summed over the present seeds
    long long params;         // of the first present seed
} ConfigResults;

typedef struct {
    char dir[1024];
    ConfigResults cfg[ABLATION_CONFIGS];
    int n_present;            // runs (any seed) with a metrics.json
    int nine_present;         // of the tutorial's nine
    // the tutorial's method: one pair of baseline seeds
    bool have_gap;            // both p11_base_s0 and p11_base_s1 are there
    double base_mean, gap;    // mean of the two seeds' val MSE, |s0 - s1|
    bool not_seed_pair;       // the two baselines differ in more than the seed
    bool mixed_presets;       // the present runs come from different presets
    bool dir_missing;         // there is no such folder at all
} AblationResults;

// Reads DIR/<name>/metrics.json of every configuration's seeds 0 to
// ABLATION_MAX_SEEDS - 1. A missing or broken file gives a run with
// present = false and a note, never an error.
void results_load(const char *dir, AblationResults *res);
// results_load of dir, and of ref_dir when it is not NULL (else *ref = NULL).
// NULL (and *ref = NULL) with a message when out of memory; free both.
AblationResults *results_load_pair(const char *dir, const char *ref_dir, AblationResults **ref);
// One of the tutorial's nine runs (r = RUN_BASE_S0 ... RUN_QKNORM_LR2E3).
const AblationRow *results_run(const AblationResults *res, int r);
// Reads one metrics.json into a row. 0, or -1 with row->note saying why.
int ablation_row_read(const char *path, AblationRow *row);

// The tutorial's verdict of one val MSE against one seed gap: delta = val -
// base_mean; within the gap (|delta| <= gap) it is "same", beyond it a gain
// (lower is better) or a loss, with |delta| in units of the gap. Writes e.g.
// "same", "gain, 7.3 gaps", "loss, 1.2 gaps" into out; *gaps = |delta| / gap.
void verdict(double val, double base_mean, double gap, char *out, size_t outlen, double *gaps);

// Our verdict: two means over seeds, compared with the standard error of
// their difference, se = sqrt(sd_a^2 / n_a + sd_b^2 / n_b). A difference of
// more than COMPARE_SE standard errors is a gain (lower val MSE) or a loss;
// anything smaller is "not resolved": the seeds cannot tell it from noise.
// When one side has a single seed its spread is not measured: the other
// side's is assumed (assumed = true, and the verdict ends in '*'). With no
// spread on either side there is no verdict ("? no spread").
#define COMPARE_SE 2.0
typedef struct {
    double diff;              // mean(a) - mean(b)
    double se;                // standard error of diff, NAN when unknown
    double z;                 // |diff| / se
    bool assumed;             // one side's spread was assumed, not measured
    bool resolved;            // |diff| > COMPARE_SE * se
    char verdict[48];         // "gain (3.1 se)", "loss (2.4 se)", "not resolved (0.8 se)", + "*"
} Comparison;
void compare_means(SeedSpread a, SeedSpread b, Comparison *out);

// The tables as cells (table.c), printed as text there and as Markdown by
// report.c; and the words under them.
void fill_tutorial_table(const AblationResults *res, Table *t);
void fill_seeds_table(const AblationResults *res, Table *t);
void fill_compare_table(const AblationResults *res, const AblationResults *ref, Table *t);
void fill_lr_table(const AblationResults *res, Table *t);
// Run r's loss curve as two lists, "[1.43, 1.25, ...]" and its steps (n bytes
// each); false when the run or its curve is missing.
bool curve_lists(const AblationResults *res, int r, char *losses, char *steps, size_t n);
// Whether a configuration has a single seed while the baseline has several.
bool any_assumed(const AblationResults *res);
// The preset of the first run that names one, NULL if none does.
const char *preset_of(const AblationResults *res);
extern const char *const SEEDS_FOOTNOTE, *const ASSUMED_FOOTNOTE;

// Prints the tutorial's table (one run per configuration, one seed gap), the
// table over seeds (mean, spread, difference and its standard error,
// verdict), the lr 2e-3 pair, and with ref != NULL the user's means against
// those of ref (e.g. the committed results/quick). The columns are aligned by
// common/io/bench.h's table_print.
void results_print(const AblationResults *res, const AblationResults *ref);
// One tab-separated line per run of the nine, for scripts/plots.sh (NaN where
// unknown):
//   name label present params val_mse probe_fd ms_step spikes base_mean gap
void results_print_tsv(const AblationResults *res, FILE *f);
// One line per run of every seed, then the configurations over their seeds:
//   run  config label seed val_mse train_seconds scorecard_seconds name
//   mean config label n mean sd se
void results_print_seeds_tsv(const AblationResults *res, FILE *f);
// table --curves (curves.c): the training loss per window over seeds, each
// configuration at the default lr against the baseline window by window
// (difference and standard error), and from which window on it is ahead or
// behind for good.
void results_print_curves(const AblationResults *res);
// DIR/report.md: the same content in Markdown, with links to DIR/plots/*.png
// that exist. 0, or -1 with a message.
int report_write(const AblationResults *res, const AblationResults *ref, const char *path, char *err,
                 size_t errlen);

int cmd_table(int argc, char **argv);
int cmd_report(int argc, char **argv);

// ---------------------------------------------------------------------------
// Speed (speed.c).

// Floating-point operations of one training step (forward, backward, AdamW)
// of config c at batch N: matrix products only, see speed.c for the count.
double train_step_flops(const Config *c, int N);
// The same, split: forward matmuls and the attention products within them.
typedef struct { double linear, attention, forward, step; } StepFlops;
StepFlops train_step_flops_detail(const Config *c, int N);

int cmd_speed(int argc, char **argv);
// speed --eval (speed_eval.c): the training step and the scoring parts (val
// exam, sampling, probe features, Frechet distance), each on 1 and on 2
// threads in the same rounds, and each one's speed-up. 0, or an exit code.
int speed_eval(const Config *base, int batch, int warmup, int rounds);

// ---------------------------------------------------------------------------
// Where trained models look (attention_maps.c).
#define ATT_MAX_LAYERS 16
#define ATT_MAX_GRID 16
#define ATT_MAX_OFFSETS ((2 * ATT_MAX_GRID - 1) * (2 * ATT_MAX_GRID - 1))

// The mean attention of one model's layers over a batch, in units of the even
// share 1/L (1 = no preference).
typedef struct {
    int depth, grid;
    // offsets[l][(dy + g - 1) * (2g - 1) + (dx + g - 1)]: the attention of a
    // query to the key dy rows and dx columns away, averaged over the queries
    // that have one, the images and the heads
    float offsets[ATT_MAX_LAYERS][ATT_MAX_OFFSETS];
    // centre[l][row * g + col]: the attention of the centre patch (g/2, g/2)
    float centre[ATT_MAX_LAYERS][ATT_MAX_GRID * ATT_MAX_GRID];
    double self[ATT_MAX_LAYERS];      // mean attention of a query to itself (a probability)
    double distance[ATT_MAX_LAYERS];  // mean attention-weighted distance to the keys, in patches
    double uniform_distance;          // the same with even attention
} AttentionMaps;

// From the softmax probabilities that model_forward left in a->att[l].att
// (N, H, L, L) for every layer l.
void attention_maps_compute(const Model *m, const Activations *a, AttentionMaps *out);
int cmd_attention_maps(int argc, char **argv);
