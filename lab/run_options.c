// run_options.c: see run_options.h.
#include "run_options.h"
#include "train/trainer.h"

int lab_take_preset(const char *value, void *preset) {
    return preset_parse(value, preset) == 0 ? ARGS_OK : args_error(NULL, "unknown preset '%s'", value);
}
