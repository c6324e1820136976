// ablation_table.h: step 6's tables, printed from the runs that
// ablation_runs.h reads: as text by step6_ablation's `table` command, and
// as cells the Markdown report fills (`table --report`, which `lab report` runs).
//
//   ablation_table.c   the text: the tutorial's table, the table over seeds,
//                      the lr 2e-3 pair, --compare, --tsv (the `table` command)
//   ablation_curves.c  table --curves: the loss curves over seeds, window by
//                      window
//   ablation_report.c  table --report: runs/report.md
//   table.c            the `table` command: its options, which of these runs
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "ablation_runs.h"
#include "io/bench.h"


// The tables as cells (ablation_table.c), printed as text there and as Markdown by
// ablation_report.c; and the words under them.
void fill_tutorial_table(const AblationResults *res, Table *t);
// committed: the project's runs of the same preset (load_committed), whose
// verdict stands beside a row of one seed; NULL for none.
void fill_seeds_table(const AblationResults *res, const AblationResults *committed, Table *t);
AblationResults *load_committed(const AblationResults *res);
// The verdict of configuration c over seeds, as the table prints it (none
// for a configuration of one seed, then the committed one if given).
void seeds_verdict(const AblationResults *res, const AblationResults *committed, int c, char *out, size_t n);
void fill_compare_table(const AblationResults *res, const AblationResults *ref, Table *t);
void fill_lr_table(const AblationResults *res, Table *t);
// Run r's loss curve as two lists, "[1.43, 1.25, ...]" and its steps (n bytes
// each); false when the run or its curve is missing.
bool curve_lists(const AblationResults *res, int r, char *losses, char *steps, size_t n);
// Whether a configuration other than the baseline has a single seed.
bool any_one_seed(const AblationResults *res);
// Whether the runs are the smoke preset's (they test the machinery only).
bool is_smoke(const AblationResults *res);
// The preset of the first run that names one, NULL if none does.
const char *preset_of(const AblationResults *res);
extern const char *const SEEDS_FOOTNOTE, *const ONE_SEED_FOOTNOTE, *const SHARED_MACHINE_NOTE, *const SMOKE_NOTE;
// Which probe the probe-FD columns are by, and the runs scored by another,
// whose probe-FD the tables do not show ("other probe"), grouped by probe;
// as text, or as Markdown (a paragraph and a list). Nothing without a probe-FD.
void print_probe_note(FILE *f, const AblationResults *res, bool markdown);

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
// table --curves (ablation_curves.c): the training loss per window over seeds, each
// configuration at the default lr against the baseline window by window
// (difference and standard error), and from which window on it is ahead or
// behind for good.
void results_print_curves(const AblationResults *res);

// dir/report.md (ablation_report.c): the tables in Markdown, with links to
// dir/plots/*.png that exist. 0, or -1 with a message.
int report_write(const AblationResults *res, const char *dir, char *err, size_t errlen);

int cmd_table(int argc, char **argv);
