// args.h: the command lines of every program, read one way.
//
// Every program (and every command of step6_ablation) reads its options with
// getopt_long from glibc, in one function of this shape:
//
//     int parse_options(int argc, char **argv, Options *o);
//
// It returns one of three answers, and main exits with args_exit_code(rc):
//   ARGS_OK    go on
//   ARGS_HELP  --help (or -h) printed the usage on stdout: exit 0
//   ARGS_BAD   bad input, already reported on stderr with what to do
//              instead (args_error): exit 2
// A parser never calls exit(), so a test can call it and look at the answer.
// A program whose options are plain values declares them as data instead,
// an ArgOption table (below), which gives both the parse and the usage.
#pragma once
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

enum { ARGS_OK = 0, ARGS_HELP = -1, ARGS_BAD = 2 };

// The exit code of a parser's answer: 0 after --help, else the answer.
static inline int args_exit_code(int rc) { return rc == ARGS_HELP ? 0 : rc; }

// "error: MESSAGE" (printf-style), then a blank line and usage(stderr)
// (usage may be NULL), on stderr. Returns ARGS_BAD.
typedef void UsageFn(FILE *f);
__attribute__((format(printf, 2, 3)))
int args_error(UsageFn *usage, const char *fmt, ...);

// Reports what getopt_long's '?' means: an unknown option, or one whose
// value is missing. Returns ARGS_BAD.
int args_unknown(UsageFn *usage, char **argv);

// A timing command's rounds (lab speed) must outnumber its warm-up ones.
int args_check_rounds(int rounds, int warmup);

// s as a whole decimal number in [lo, hi], nothing after it: 0 with the
// value in *out, or -1 (and *out untouched).
int parse_int_in(const char *s, long lo, long hi, int *out);

// Whether a is --help or -h (for a command name in argv[1], before getopt).
int is_help_option(const char *a);

// ---------------------------------------------------------------------------
// Options as data. A program lists each option once, with where its value
// goes and one line of help, and gets the parse and the usage from the list:
//
//     ArgOption opts[] = {
//         ARG_INT("rounds", "N", &o->rounds, 1, 1000, "timed rounds per call"),
//         ARG_FIGURES(&o->figures_dir),
//         ARG_END,
//     };
//     ArgSpec spec = { "step2_rmsnorm", "LayerNorm against RMSNorm ...", opts };
//     return args_parse(&spec, argc, argv);
//
// --help and -h are every program's. A bad option or word is reported on
// stderr, then the usage. Defaults are what the targets hold when
// args_parse starts; the usage shows them.
typedef enum {
    ARG_KIND_INT,      // int in [lo, hi]
    ARG_KIND_STRING,   // const char * (argv's own string)
    ARG_KIND_FOLDER,   // const char *, not empty
    ARG_KIND_SET,      // a switch: int target = lo
    ARG_KIND_BOOL,     // a switch: bool target = lo
    ARG_KIND_CLEAR,    // a switch: const char * target = NULL
    ARG_KIND_CALL,     // call(value, target): ARGS_OK, ARGS_HELP, or ARGS_BAD after a message
} ArgKind;

typedef int ArgCallFn(const char *value, void *target);

typedef struct {
    const char *name;      // the long option, without "--"
    const char *value;     // what it takes, as the usage names it ("N", "DIR"); NULL for a switch
    ArgKind kind;
    void *target;
    long lo, hi;           // ARG_KIND_INT: the range; ARG_KIND_SET: the value set
    ArgCallFn *call;       // ARG_KIND_CALL; value is NULL for an option that takes none
    const char *help;      // may hold '\n' for more lines
    int hide_default;      // 1: the usage shows no "(default ...)"
    bool *seen;            // set to true when the option is given; may be NULL
} ArgOption;

#define ARG_INT(name, value, ptr, lo, hi, help) { name, value, ARG_KIND_INT, ptr, lo, hi, NULL, help, 0, NULL }
#define ARG_STRING(name, value, ptr, help)      { name, value, ARG_KIND_STRING, ptr, 0, 0, NULL, help, 0, NULL }
#define ARG_FOLDER(name, value, ptr, help)      { name, value, ARG_KIND_FOLDER, ptr, 0, 0, NULL, help, 0, NULL }
#define ARG_SWITCH(name, ptr, v, help)          { name, NULL, ARG_KIND_SET, ptr, v, 0, NULL, help, 1, NULL }
#define ARG_FLAG(name, ptr, v, help)            { name, NULL, ARG_KIND_BOOL, ptr, v, 0, NULL, help, 1, NULL }
#define ARG_CALL(name, value, fn, ptr, help)    { name, value, ARG_KIND_CALL, ptr, 0, 0, fn, help, 1, NULL }
#define ARG_END                                 { NULL, NULL, 0, NULL, 0, 0, NULL, NULL, 0, NULL }

// The two options of every program that draws figures: --figures DIR (where
// they go; the usage shows the default) and --no-figures (*ptr = NULL).
#define ARG_FIGURES(ptr)                                                              \
    ARG_FOLDER("figures", "DIR", ptr, "where the figures go"),                        \
    { "no-figures", NULL, ARG_KIND_CLEAR, ptr, 0, 0, NULL, "draw none", 1, NULL }

typedef struct {
    const char *program;        // "step2_rmsnorm", or "lab sweep" for a command
    const char *about;          // what the program does, a paragraph (may be NULL)
    const ArgOption *options;   // ended by ARG_END
    const char *words;          // the words it takes besides options ("RUN_DIR..."); NULL: none
    char ***word_v;             // where those words go (inside argv), and how many
    int *word_n;
    void (*more)(FILE *f);      // printed after the options (e.g. the presets); may be NULL
} ArgSpec;

// Reads argv[1..] by spec, once.
int args_parse(const ArgSpec *spec, int argc, char **argv);

// The usage line, the paragraph, each option with its help and default,
// then spec->more.
void args_usage(const ArgSpec *spec, FILE *f);

// An option that may be given many times, its values kept in their order
// (--set key=value ...): ARG_CALL(name, value, args_take_list, &list, help).
#define ARGS_LIST_MAX 64
typedef struct { const char *v[ARGS_LIST_MAX]; int n; } ArgList;
ArgCallFn args_take_list;

// A step program's options: its own (ended by ARG_END), then ARG_FIGURES
// for *figures_dir.
int args_parse_step(const char *program, const char *about, const ArgOption *own, const char **figures_dir,
                    int argc, char **argv);

// The line every step ends with, "try it: step6_ablation train --name mine
// --preset quick SETS", then note below it.
void args_print_try_it(const char *sets, const char *note);
