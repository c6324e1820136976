// options.c: step8_recipe's command line, as data (common/io/args.h).
#include <stdio.h>
#include <string.h>
#include "step8.h"
#include "eval/scorecard.h"
#include "io/figure.h"
#include "io/paths.h"

const int NFE_LIST[NFE_COUNT] = { 2, 4, 8, 16, 32, 64 };

int step8_parse_options(int argc, char **argv, Options *o) {
    static char shipped[1024];
    project_path(shipped, sizeof shipped, SHIPPED_MODEL);
    *o = (Options){ .model = shipped, .model_name = SHIPPED_MODEL, .figures = figure_default_dir(),
                    .samples = FD_SAMPLES, .rounds = 10 };
    ArgOption opts[] = {
        ARG_STRING("model", "FILE", &o->model, "a checkpoint (a run's ckpt.safetensors too)"),
        ARG_STRING("out", "FILE", &o->out, "nfe: the .tsv it writes (a line per sampler and NFE)"),
        ARG_INT("samples", "N", &o->samples, 10, 100000, "nfe: samples per point"),
        ARG_FLAG("ema", &o->ema, true, "nfe: the checkpoint's EMA of the weights (a run with ema > 0)"),
        ARG_INT("rounds", "N", &o->rounds, 1, 1000, "cost: timed rounds"),
        ARG_FIGURES(&o->figures),
        ARG_END,
    };
    opts[0].hide_default = 1;
    const ArgSpec spec = {
        .program = "step8_recipe", .options = opts, .words = "[nfe | curves TSV... | table RUN... | cost]",
        .word_v = &o->words, .word_n = &o->nwords,
        .about = "  training and sampling like 2026: logit-normal times, the power-function EMA of the\n"
                 "  weights, Heun's sampler against Euler's, on a flow whose answer is known and on the\n"
                 "  shipped model (" SHIPPED_MODEL "); figures step8_times.png, step8_orders.png.\n"
                 "  nfe --model CKPT --out F.tsv: CKPT's probe-FD at 2 to 64 model evaluations, Euler and\n"
                 "  Heun, from the scorecard's noise (needs the data). curves F.tsv...: step8_nfe.png.\n"
                 "  table RUN...: the runs' val MSE and probe-FD, raw and EMA, each configuration (a run's\n"
                 "  folder less _sN) over its seeds against the first's raw weights.\n"
                 "  cost: a training step with the EMA against one without, in turns (a timing).",
    };
    int rc = args_parse(&spec, argc, argv);
    if (rc != ARGS_OK) return rc;
    if (o->model != shipped) o->model_name = o->model;
    const char *cmd = o->nwords ? o->words[0] : "";
    if (o->nwords == 0 || (!strcmp(cmd, "nfe") && o->nwords == 1 && o->out) ||
        (!strcmp(cmd, "curves") && o->nwords > 1 && o->figures) || (!strcmp(cmd, "table") && o->nwords > 1) ||
        (!strcmp(cmd, "cost") && o->nwords == 1))
        return ARGS_OK;
    if (!strcmp(cmd, "nfe") && o->nwords > 1) args_error(NULL, "nfe takes no words, only options");
    else if (!strcmp(cmd, "nfe")) args_error(NULL, "nfe wants --out FILE");
    else if (!strcmp(cmd, "curves") && !o->figures) args_error(NULL, "curves draws into --figures DIR: not with --no-figures");
    else if (!strcmp(cmd, "curves")) args_error(NULL, "curves wants the nfe .tsv files");
    else if (!strcmp(cmd, "table")) args_error(NULL, "table wants run folders (each with a metrics.json)");
    else if (!strcmp(cmd, "cost")) args_error(NULL, "cost takes no words, only options");
    else args_error(NULL, "unknown argument '%s' (the commands: nfe, curves TSV..., table RUN..., cost)", cmd);
    args_usage(&spec, stderr);
    return ARGS_BAD;
}
