// options.c: step0_tour's command line, as data (common/io/args.h).
#include <stdio.h>
#include <string.h>
#include "step0.h"
#include "io/args.h"
#include "io/paths.h"

int step0_parse_options(int argc, char **argv, Options *o) {
    static char shipped[1024];
    project_path(shipped, sizeof shipped, SHIPPED_MODEL);
    *o = (Options){ .model = shipped, .model_name = SHIPPED_MODEL };
    ArgOption opts[] = {
        ARG_STRING("model", "FILE", &o->model, "another checkpoint to look at (a run's ckpt.safetensors too)"),
        ARG_FLAG("test-image", &o->test_image, true, "follow CIFAR-10's test image 0 instead (needs the data)"),
        ARG_FLAG("val-mse", &o->val_mse, true, "also the val MSE on the first 2,000 CIFAR-10 test images (needs the data)"),
        ARG_FLAG("time", &o->timed, true, "also the wall time of loading and of the 8 samples"),
        ARG_FOLDER("figures", "DIR", &o->figures, "also draws tinydit_flow_path (needs the data), tinydit_euler_walk,\n"
                                                    "tinydit_samples, tinydit_gradient_sizes into DIR"),
        ARG_INT("threads", "N", &o->threads, 0, 1024, "OpenMP threads, 0 for all cores"),
        ARG_CALL("set", "key=value", args_take_list, &o->sets, "backward, gates: a setting of their model, e.g. --set ada=zero"),
        ARG_END,
    };
    opts[0].hide_default = 1;   // the shipped model, named below
    const ArgSpec spec = {
        .program = "step0_tour", .options = opts, .words = "[export RUN_CKPT OUT | backward | gates]",
        .word_v = &o->words, .word_n = &o->nwords,
        .about = "  the tour: the model's first sample through the trained model part by part, then\n"
                 "  8 samples of 20 Euler steps (the shipped model: " SHIPPED_MODEL ").\n"
                 "  export RUN_CKPT OUT writes RUN_CKPT's weights and config without the optimizer state.\n"
                 "  backward checks the backward pass of a tiny model by finite differences (docs/backward.md).\n"
                 "  gates prints adaLN-Zero's gradients over the first three updates (docs/tinydit.md).",
    };
    int rc = args_parse(&spec, argc, argv);
    if (o->model != shipped) o->model_name = o->model;
    if (rc != ARGS_OK) return rc;
    if (o->nwords == 0 || (o->nwords == 3 && strcmp(o->words[0], "export") == 0) ||
        (o->nwords == 1 && (strcmp(o->words[0], "backward") == 0 || strcmp(o->words[0], "gates") == 0))) {
        if (o->sets.n == 0 || o->nwords == 1) return ARGS_OK;
        args_error(NULL, "--set is for `backward` and `gates` only");
    } else if (strcmp(o->words[0], "export") == 0) args_error(NULL, "export wants RUN_CKPT and OUT");
    else args_error(NULL, "unknown argument '%s' (the commands: export RUN_CKPT OUT, backward, gates)", o->words[0]);
    args_usage(&spec, stderr);
    return ARGS_BAD;
}
