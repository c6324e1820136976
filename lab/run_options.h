// run_options.h: the options of the lab's commands that plan training runs
// (ablation, sweep, estimate), declared once. Each command's plan has the
// fields these name (preset, seeds, jobs; to start them also threads,
// log_to_file, and a mode of its own for --print-commands and --list); the
// table entries below go into its option table (common/io/args.h) beside
// the command's own.
#pragma once
#include "io/args.h"
#include "../step6_ablation/ablation_runs.h"
#include "train/trainer.h"

// What runs, for every command that plans them (ablation, sweep, estimate).
#define LAB_PLAN_OPTIONS(plan)                                                                                  \
    ARG_PRESET(&(plan)->preset),                                                                                \
    ARG_INT("seeds", "N", &(plan)->seeds, 1, ABLATION_MAX_SEEDS, "seeds per configuration"),                 \
    ARG_INT("jobs", "N", &(plan)->jobs, 1, 64, "runs side by side; each run's output then goes to\n"         \
                                               "DIR/NAME/train.log")

// How they run, for the commands that start them (ablation, sweep).
#define LAB_RUN_OPTIONS(plan, mode, commands_mode, list_mode)                                                  \
    LAB_PLAN_OPTIONS(plan),                                                                                     \
    { "threads", "T", ARG_KIND_INT, &(plan)->threads, 1, 4096, NULL,                                          \
      "threads per run (default: the run's own, all cores)", 1, NULL },                                        \
    ARG_FLAG("log", &(plan)->log_to_file, true, "each run's output to DIR/NAME/train.log, also with --jobs 1"), \
    ARG_SWITCH("print-commands", (int *)(mode), commands_mode, "print the train commands, one a line, and run\n" \
                                                               "nothing (for GNU parallel, xargs, make -j)"),   \
    ARG_SWITCH("list", (int *)(mode), list_mode, "print the run names, one a line")
