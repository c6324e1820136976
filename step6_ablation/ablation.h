// ablation.h: the parts of step6_ablation, shared by main.c and the tests.
//
//   ablation.c  the nine runs, their train commands, and running them side by side
//   table.c     reading the runs' metrics.json: the table, the seed gap, the
//               verdicts, the lr 2e-3 pair, runs/report.md
//   speed.c     the fair speed race and the floating-point work of a step
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "io/config_parse.h"
#include "io/metrics.h"
#include "train/trainer.h"

// ---------------------------------------------------------------------------
// The runs (ablation.c). Each differs from the baseline by the --set values
// listed, nothing else: same preset, same data, same scorecard.
#define ABLATION_RUNS 9
#define ABLATION_MAX_SETS 4

typedef struct {
    const char *name;                       // folder under runs/
    const char *label;                      // row of the table
    const char *sets[ABLATION_MAX_SETS + 1];// --set key=value, NULL-terminated
} AblationRun;

extern const AblationRun ABLATION[ABLATION_RUNS];
// Index of a run by name, -1 if there is none.
int ablation_index(const char *name);

// Where the rows of the table come from.
enum { RUN_BASE_S0, RUN_BASE_S1, RUN_RMSNORM, RUN_QKNORM, RUN_SWIGLU, RUN_ROPE, RUN_ALL,
       RUN_BASE_LR2E3, RUN_QKNORM_LR2E3 };

typedef struct {
    Preset preset;
    int jobs;                        // runs side by side
    int threads;                     // per run; 0 = the run's default (all cores)
    const char *out_dir;             // NULL: the train command's default (runs/)
    const char *exe;                 // how to call ourselves
    bool log_to_file;                // --log: output to DIR/NAME/train.log even with one job
    bool selected[ABLATION_RUNS];    // --only
} AblationPlan;

// Parses the options of `ablation`. Returns 0, or 2 with a message on stderr.
// Sets *print_only when --print-commands / --list asked to print, not run.
typedef enum { ABL_RUN, ABL_PRINT_COMMANDS, ABL_LIST } AblationMode;
int ablation_parse(int argc, char **argv, AblationPlan *p, AblationMode *mode);

// The train command of run r, as an argv (NULL-terminated, at most cap
// entries; the strings live in buf). Returns the number of arguments, -1 if
// cap or buflen are too small.
int ablation_argv(const AblationPlan *p, int r, char **argv, int cap, char *buf, size_t buflen);
// The same command as one shell line (arguments quoted where needed).
void ablation_command_line(const AblationPlan *p, int r, char *out, size_t outlen);

int cmd_ablation(int argc, char **argv, const char *self);

// Quotes s for a POSIX shell if it needs it ('...'), else copies it.
void shell_quote(const char *s, char *out, size_t outlen);

// ---------------------------------------------------------------------------
// Reading the runs (table.c). The scorecard fields of each metrics.json are
// read by common/io/metrics.h; the table adds the loss curve and the config's lr.
#define CURVE_MAX 512

typedef struct {
    bool present;             // metrics.json read and understood
    char note[METRICS_ERRLEN];// why not, when !present
    RunMetrics m;             // params, val_mse, probe_fd (NAN if null), ms_per_step, loss_spikes, preset, cfg
    double lr;                // config.lr, NAN if the file has no config
    int steps;                // config.steps, 0 if the file has no config
    int n_curve;              // "curve": [[step, mean loss of the window], ...]
    double curve_step[CURVE_MAX], curve_loss[CURVE_MAX];
} AblationRow;

typedef struct {
    char dir[1024];
    AblationRow run[ABLATION_RUNS];
    int n_present;
    bool have_gap;            // both baseline seeds are there
    double base_mean, gap;    // mean of the two seeds' val MSE, |s0 - s1|
    bool not_seed_pair;       // the two baselines differ in more than the seed
    bool mixed_presets;       // the present runs come from different presets
    bool dir_missing;         // there is no such folder at all
} AblationResults;

// Reads DIR/<name>/metrics.json of every run. A missing or broken file gives
// a run with present = false and a note, never an error.
void results_load(const char *dir, AblationResults *res);
// Reads one metrics.json into a row. 0, or -1 with row->note saying why.
int ablation_row_read(const char *path, AblationRow *row);

// The verdict of a val MSE against the baseline: delta = val - base_mean;
// within the seed gap (|delta| <= gap) it is "same", beyond it a gain (lower
// is better) or a loss, with |delta| in units of the gap. Writes e.g.
// "same", "gain, 7.3 gaps", "loss, 1.2 gaps" into out; *gaps = |delta| / gap.
void verdict(double val, double base_mean, double gap, char *out, size_t outlen, double *gaps);

// Prints the table, the seed gap, the verdicts and the lr 2e-3 pair to
// stdout (the columns are aligned by common/io/bench.h's table_print).
void results_print(const AblationResults *res);
// One tab-separated line per run, for scripts/plots.sh (NaN where unknown):
//   name label present params val_mse probe_fd ms_step spikes base_mean gap
void results_print_tsv(const AblationResults *res, FILE *f);
// DIR/report.md: the same content in Markdown, with links to DIR/plots/*.png
// that exist. 0, or -1 with a message.
int report_write(const AblationResults *res, const char *path, char *err, size_t errlen);

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
