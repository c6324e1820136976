// step6_ablation: the tutorial's last section, the before/after. Eight
// configurations that differ from the baseline by one switch each (or all
// four, or the learning rate), each trained with one seed or more and read
// against the noise of the seeds (docs/step6_ablation.md).
//
//   step6_ablation train --name NAME [--preset smoke|quick|tutorial] [--set key=value]...
//                        [--out runs] [--resume]       one run: what every row of the table is
//   step6_ablation table [--curves] [--compare DIR] [runs-dir]
//                                                      the tables, from the runs' metrics.json
//   step6_ablation summary [--set key=value]... [--modern]
//                                                      the model as a tree, like print(model)
//   step6_ablation attention-maps [--runs DIR] [--out DIR]
//                                                      where two trained models look (the figures)
//   step6_ablation                                     the committed results' tables
//
// `train` is common/train's trainer_run; `table` is ablation_table.c beside
// this file (and ablation_curves.c for --curves), reading the runs through
// ablation_runs.h; `attention-maps` is attention_maps.c. The experiments
// that start many runs (the ablation, the sweeps, the speed race, the
// report) are the lab's: lab/lab --help.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ablation_table.h"
#include "attention_maps.h"
#include "io/args.h"
#include "io/config_parse.h"
#include "io/paths.h"
#include "nn/model.h"
#include "train/trainer.h"
#include "io/blas_kernel.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: step6_ablation COMMAND [options]\n"
        "\n"
        "with no command: the tables of the committed results (results/quick, results/tutorial),\n"
        "where their figures are, and the commands that train (many runs at once: lab/lab --help)\n"
        "\n"
        "commands (each lists its options with --help):\n"
        "  train --name NAME [--preset P] [--set key=value]... [--modern] [--out DIR] [--resume]\n"
        "        train one run into DIR/NAME (default DIR: the project's runs/): metrics.json, loss.tsv,\n"
        "        ckpt.safetensors, samples.png\n"
        "  table [--tsv | --tsv-seeds | --curves] [--compare DIR] [runs-dir]\n"
        "        the tutorial's table and seed gap; each configuration's mean and spread over its\n"
        "        seeds, its difference to the baseline +- standard error, a verdict; the lr 2e-3\n"
        "        pair; with --compare, your means against the runs in DIR (e.g. results/quick);\n"
        "        with --curves, the training loss window by window against the baseline's\n"
        "  summary [--set key=value]... [--modern]\n"
        "        print the model as a tree with the parameters of each module\n"
        "  attention-maps [--runs DIR] [--out DIR]\n"
        "        where p11_base_s0 and p11_rope look: mean attention per layer, table and figures\n"
        "\n");
    preset_describe(f);
}

// --modern is one more change of the config, kept in its place among the --set ones
static int take_modern(const char *value, void *sets) { return args_take_list("modern=true", sets); }

// The options of train and summary, read once. The preset applies first,
// wherever --preset stands, then --set and --modern in their order
// (preset_config).
// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h; argv[0] is the command).
static int parse_run_options(int argc, char **argv, TrainOptions *o) {
    ArgList sets = { .n = 0 };
    bool ckpt_given = false;
    *o = (TrainOptions){ .preset = PRESET_QUICK, .out_dir = default_runs_dir(), .scorecard = true };
    ArgOption opts[] = {
        ARG_STRING("name", "NAME", &o->name, "the run's folder under --out (train)"),
        ARG_PRESET(&o->preset),
        ARG_SETS(&sets),
        ARG_CALL("modern", NULL, take_modern, &sets, "RMSNorm, SwiGLU, QK-norm and no biases (a modern block in one switch)"),
        ARG_FOLDER("out", "DIR", &o->out_dir, "where the run's folder goes"),
        ARG_FLAG("resume", &o->resume, true, "continue the run from its checkpoint"),
        ARG_INT("ckpt-every", "N", &o->ckpt_every, 1, 100000000, "steps between checkpoints (default: the preset's)"),
        ARG_FLAG("no-scorecard", &o->scorecard, false, "skip val MSE and probe-FD at the end"),
        ARG_INT("stop-after", "N", &o->stop_after, 0, 100000000, "stop after step N as if interrupted (for tests)"),
        ARG_END,
    };
    opts[6].seen = &ckpt_given;
    opts[6].hide_default = opts[8].hide_default = 1;
    char program[64];
    snprintf(program, sizeof program, "step6_ablation %s", argv[0]);
    const ArgSpec spec = { .program = program, .options = opts, .more = preset_describe };
    int rc = args_parse(&spec, argc, argv);
    if (rc != ARGS_OK) return rc;
    int preset_ckpt_every;
    rc = preset_config(o->preset, &sets, &o->cfg, &preset_ckpt_every);
    if (!ckpt_given) o->ckpt_every = preset_ckpt_every;
    return rc;
}

static int cmd_train(int argc, char **argv) {
    TrainOptions o;
    int rc = parse_run_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    if (!o.name) {
        fprintf(stderr, "error: train needs --name NAME (the run's folder under %s/)\n", o.out_dir);
        return 2;
    }
    return trainer_run(&o);
}

static int cmd_summary(int argc, char **argv) {
    TrainOptions o;
    int rc = parse_run_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    Model m;
    char err[512];
    if (model_build(&m, &o.cfg.model, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return 2;
    }
    model_print_summary(&m, stdout);
    model_free(&m);
    return 0;
}

// No command: the answer, as the project's committed runs give it: the
// table of results/quick (three seeds), then of results/tutorial, the
// figures drawn from them, and the commands that train. Reads, writes
// nothing, in well under a second.
static int show_committed_results(void) {
    static const char *const folders[] = { "results/quick", "results/tutorial" };
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
        char dir[2048];
        if (project_path(dir, sizeof dir, folders[i]) != 0) { fprintf(stderr, "error: path too long\n"); return 1; }
        printf("%s== step6_ablation table %s\n", i ? "\n" : "", folders[i]);
        char *args[] = { "table", dir, NULL };
        int rc = cmd_table(2, args);
        if (rc != 0) return rc;
    }
    printf("\nfigures: results/quick/plots/ (val_mse_seeds.png, loss.png, lr2e3.png, the attention maps),\n"
           "         results/tutorial/plots/; docs/step6_ablation.md explains them\n"
           "train your own: lab/lab ablation --preset quick --seeds 3 --out runs\n"
           "         (24 runs; their times are in results/quick/README.md),\n"
           "         then step6_ablation table --compare results/quick runs\n"
           "every command: step6_ablation --help\n");
    return 0;
}

int main(int argc, char **argv) {
    restart_fitted(argv);   // OpenBLAS's kernel and OpenMP's waiting: io/blas_kernel.h
    // Line by line even into a file or a pipe: with the runs' logs, stdout and
    // stderr then keep their order (stderr is never buffered).
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) return show_committed_results();
    if (is_help_option(argv[1])) {
        usage(stdout);
        return 0;
    }
    const char *cmd = argv[1];
    // each command reads argv[1..] with args_parse; argv[0] is its name
    argc--, argv++;
    if (strcmp(cmd, "train") == 0) return cmd_train(argc, argv);
    if (strcmp(cmd, "table") == 0) return cmd_table(argc, argv);
    if (strcmp(cmd, "summary") == 0) return cmd_summary(argc, argv);
    if (strcmp(cmd, "attention-maps") == 0) return cmd_attention_maps(argc, argv);
    fprintf(stderr, "error: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
