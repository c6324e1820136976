// args.c: see args.h.
#include "args.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int args_error(UsageFn *usage, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    if (usage) {
        fprintf(stderr, "\n");
        usage(stderr);
    }
    return ARGS_BAD;
}

int args_unknown(UsageFn *usage, char **argv) {
    // The word just read: a long option getopt does not know, or one whose
    // value is missing. A short one it does not know may sit inside a
    // cluster such as -xv, so that one is named by its letter, optopt.
    const char *word = argv[optind - 1];
    if (strncmp(word, "--", 2) != 0 && optopt > 0 && optopt < 128)
        return args_error(usage, "unknown or incomplete option '-%c'", optopt);
    return args_error(usage, "unknown or incomplete option '%s'", word);
}

int args_figure_option(int c, UsageFn *usage, char **argv, const char **figures_dir) {
    switch (c) {
    case 'f':
        // an empty name would only fail later, at the first figure, after the work
        if (!*optarg) return args_error(usage, "--figures wants a folder");
        *figures_dir = optarg;
        return ARGS_OK;
    case 'n': *figures_dir = NULL; return ARGS_OK;
    case 'h': usage(stdout); return ARGS_HELP;
    default: return args_unknown(usage, argv);
    }
}

int args_no_leftovers(UsageFn *usage, int argc, char **argv) {
    if (optind < argc) return args_error(usage, "unknown argument '%s'", argv[optind]);
    return ARGS_OK;
}

int parse_int_in(const char *s, long lo, long hi, int *out) {
    if (!s || !*s) return -1;
    if (lo < INT_MIN) lo = INT_MIN;
    if (hi > INT_MAX) hi = INT_MAX;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != 0 || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

int is_help_option(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

int args_check_rounds(UsageFn *usage, int argc, char **argv, int rounds, int warmup) {
    if (optind < argc) return args_error(usage, "unknown or incomplete option '%s'", argv[optind]);
    if (rounds <= warmup) return args_error(NULL, "--rounds (%d) must be more than --warmup (%d)", rounds, warmup);
    return ARGS_OK;
}
