// lab: the experiments around step 6. Every run it starts is one
// `step6_ablation train` command (step 6 is the lesson: train a pair, read
// the table); the lab plans many of them, runs them a few at a time, and
// reads what they wrote. `lab --help` lists the commands, `lab COMMAND
// --help` their options; each command is cmd_NAME(argc, argv) with argv[0]
// its name (lab.h).
#include "lab.h"
#include "io/blas_kernel.h"

typedef int Command(int argc, char **argv);
static const struct { const char *name; Command *run; const char *what; } COMMANDS[] = {
    { "estimate", cmd_estimate, "how long the main job (make tutorial) will take here: a few steps of each configuration timed" },
    { "ablation", cmd_ablation, "every configuration with N seeds, each run one `train --resume`, N side by side" },
    { "sweep", cmd_sweep, "one config key over a list of values (e.g. the lr), per configuration and seed" },
    { "speed", cmd_speed, "the six variants timed in rounds in one process, with GFLOP/s and matmul's rate" },
    { "report", cmd_report, "step 6's tables as Markdown in runs-dir/report.md, with links to the plots" },
};
#define N_COMMANDS (int)(sizeof COMMANDS / sizeof COMMANDS[0])

static void usage(FILE *f) {
    fprintf(f, "usage: lab COMMAND [options]   (lab COMMAND --help: its options)\n\ncommands:\n");
    for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-15s %s\n", COMMANDS[i].name, COMMANDS[i].what);
    fprintf(f, "\nEvery run is one `step6_ablation train` command (step6_ablation --help).\n");
}

int main(int argc, char **argv) {
    restart_fitted(argv);   // OpenBLAS's kernel and OpenMP's waiting: io/blas_kernel.h
    // line by line even into a file or a pipe, so that stdout and stderr keep their order
    setvbuf(stdout, NULL, _IOLBF, 0);
    // no command is a question, not a mistake: the list of commands, exit 0
    if (argc < 2 || is_help_option(argv[1])) { usage(stdout); return 0; }
    for (int i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0) return COMMANDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "error: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
