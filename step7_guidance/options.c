// options.c: step7_guidance's command line, as data (common/io/args.h).
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step7.h"
#include "eval/scorecard.h"
#include "io/figure.h"
#include "io/paths.h"
#include "nn/errors.h"

const char *const CIFAR_CLASS[10] = { "airplane", "automobile", "bird", "cat", "deer",
                                      "dog", "frog", "horse", "ship", "truck" };
const float GRID_W[GRID_W_COUNT] = { 0, 1, 2, 4, 6 };

int parse_w_list(const char *s, float *w, int max, char *err, size_t errlen) {
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !isfinite(v) || v < 0 || (*end && *end != ','))
            return errorf(err, errlen, "--w %s: want finite numbers >= 0 separated by commas, e.g. %s", s,
                          SWEEP_W_DEFAULT);
        if (n == max) return errorf(err, errlen, "--w %s: at most %d values", s, max);
        w[n++] = (float)v;
        p = *end ? end + 1 : end;
        if (*end && !*p) return errorf(err, errlen, "--w %s: a value is missing after the last comma", s);
    }
    return n ? n : errorf(err, errlen, "--w: no value given");
}

int step7_parse_options(int argc, char **argv, Options *o) {
    static char shipped[1024];
    project_path(shipped, sizeof shipped, SHIPPED_C10);
    *o = (Options){ .model = shipped, .model_name = SHIPPED_C10, .figures = figure_default_dir(),
                    .w_list = SWEEP_W_DEFAULT, .samples = FD_SAMPLES, .steps = FD_EULER_STEPS,
                    .sampler_name = "euler" };
    ArgOption opts[] = {
        ARG_STRING("model", "FILE", &o->model, "the class-conditional checkpoint (a run's ckpt.safetensors too)"),
        ARG_STRING("w", "LIST", &o->w_list, "sweep: the guidance scales, e.g. 0,1,2"),
        ARG_STRING("out", "FILE", &o->out, "sweep: the .tsv it writes (one line per w)"),
        ARG_INT("samples", "N", &o->samples, 10, 100000, "sweep: samples per w, a multiple of 10"),
        ARG_INT("steps", "N", &o->steps, 1, 1000, "sweep: sampler steps per sample"),
        ARG_STRING("sampler", "NAME", &o->sampler_name, "sweep: euler | heun (two model evaluations a step)"),
        ARG_FLAG("ema", &o->ema, 1, "sweep: the checkpoint's EMA of the weights (a run with ema > 0)"),
        ARG_FIGURES(&o->figures),
        ARG_END,
    };
    opts[0].hide_default = 1;   // the shipped class-conditional model, named below
    const ArgSpec spec = {
        .program = "step7_guidance", .options = opts, .words = "[sweep | curves TSV...]",
        .word_v = &o->words, .word_n = &o->nwords,
        .about = "  class labels and classifier-free guidance: the label table and its null row, label\n"
                 "  dropout, the guided velocity, and a sample of every class at w = 0, 1, 2, 4, 6 from\n"
                 "  the shipped class-conditional model (" SHIPPED_C10 "); figure step7_grid.png.\n"
                 "  sweep --model CKPT --out F.tsv: CKPT's guided scorecard at every w of --w, from the\n"
                 "  same noise (probe-FD against the CIFAR-10 test set, class accuracy; needs the data).\n"
                 "  curves RUN/guidance.tsv...: step7_curves, probe-FD and class accuracy against w, each\n"
                 "  configuration (a run's folder less _sN) its mean, lowest and highest seed.",
    };
    int rc = args_parse(&spec, argc, argv);
    if (rc != ARGS_OK) return rc;
    if (o->model != shipped) o->model_name = o->model;
    o->sampler = (SamplerKind)-1;
    for (int k = 0; SAMPLER_NAMES[k]; k++)
        if (!strcmp(o->sampler_name, SAMPLER_NAMES[k])) o->sampler = (SamplerKind)k;
    if ((int)o->sampler < 0) {
        args_error(NULL, "--sampler %s: want euler or heun", o->sampler_name);
        args_usage(&spec, stderr);
        return ARGS_BAD;
    }
    const char *cmd = o->nwords ? o->words[0] : "";
    if (o->nwords == 0 || (!strcmp(cmd, "sweep") && o->nwords == 1 && o->out && o->samples % 10 == 0) ||
        (!strcmp(cmd, "curves") && o->nwords > 1 && o->figures))
        return ARGS_OK;
    if (!strcmp(cmd, "sweep") && o->nwords > 1) args_error(NULL, "sweep takes no words, only options");
    else if (!strcmp(cmd, "sweep") && !o->out) args_error(NULL, "sweep wants --out FILE");
    else if (!strcmp(cmd, "sweep")) args_error(NULL, "--samples %d: want a multiple of 10 (as many of each class)", o->samples);
    else if (!strcmp(cmd, "curves") && !o->figures) args_error(NULL, "curves draws into --figures DIR: not with --no-figures");
    else if (!strcmp(cmd, "curves")) args_error(NULL, "curves wants the sweeps' .tsv files");
    else args_error(NULL, "unknown argument '%s' (the commands: sweep, curves TSV...)", cmd);
    args_usage(&spec, stderr);
    return ARGS_BAD;
}
