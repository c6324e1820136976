// plan.h: the ablation's plan (ablation.c): which configurations and
// seeds run, and the train command of each.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "../step6_ablation/ablation_runs.h"
#include "train/trainer.h"

typedef struct {
    Preset preset;
    int jobs;                        // runs side by side
    int threads;                     // per run; 0 = the run's default (all cores)
    int seeds;                       // --seeds: seeds per configuration (default 1)
    const char *out_dir;             // NULL: the train command's default (runs/)
    const char *exe;                 // the program of the train commands (lab_train_program)
    bool log_to_file;                // --log: output to DIR/NAME/train.log even with one job
    bool selected[ABLATION_CONFIGS][ABLATION_MAX_SEEDS];   // [config][seed]: run it
} AblationPlan;

// The selected runs in the order they are started: the tutorial's nine
// first, then every configuration's seed 1, then seed 2, ... so that a plan
// interrupted part-way leaves whole rounds of seeds. Returns the count (at most
// cap), the runs in config[i], seed[i].
int ablation_plan_runs(const AblationPlan *p, int *config, int *seed, int cap);

// Parses the options of `ablation` (argv[0] is the command's name, as for
// every command of the lab). ARGS_OK, ARGS_HELP or ARGS_BAD
// (common/io/args.h). Sets *mode when --print-commands / --list asked to
// print instead of running.
typedef enum { ABL_RUN, ABL_PRINT_COMMANDS, ABL_LIST } AblationMode;
int ablation_parse(int argc, char **argv, AblationPlan *p, AblationMode *mode);

// The train command of configuration c at seed k as one shell line
// (arguments quoted where needed): its --set values, and --set seed=k for
// the baseline and for every seed k >= 1. 0, or -1 if it did not fit in len.
int ablation_command_line(const AblationPlan *p, int config, int seed, char *line, size_t len);

// `lab ablation` (argv[0] is the command's name).
int cmd_ablation(int argc, char **argv);
