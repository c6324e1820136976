// args.c: see args.h.
#include "args.h"
#include "paths.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

// "error: MESSAGE" on stderr, then, with a usage, a blank line and it.
static int report(const ArgSpec *spec, UsageFn *usage, const char *fmt, va_list ap) {
    fprintf(stderr, "error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    if (spec || usage) fprintf(stderr, "\n");
    if (spec) args_usage(spec, stderr);
    else if (usage) usage(stderr);
    return ARGS_BAD;
}

int args_error(UsageFn *usage, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = report(NULL, usage, fmt, ap);
    va_end(ap);
    return rc;
}

// Reports a problem with the command line: the message, then the usage.
__attribute__((format(printf, 2, 3)))
static int bad_input(const ArgSpec *spec, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = report(spec, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

// What getopt_long's '?' means: the word just read is a long option getopt
// does not know, or one whose value is missing. A short one it does not know
// may sit inside a cluster such as -xv, so that one is named by its letter,
// optopt.
static int unknown_option(const ArgSpec *spec, UsageFn *usage, char **argv) {
    const char *word = argv[optind - 1];
    char letter[3] = { '-', (char)optopt, 0 };
    if (strncmp(word, "--", 2) != 0 && optopt > 0 && optopt < 128) word = letter;
    return spec ? bad_input(spec, "unknown or incomplete option '%s'", word)
                : args_error(usage, "unknown or incomplete option '%s'", word);
}

int args_unknown(UsageFn *usage, char **argv) { return unknown_option(NULL, usage, argv); }

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

int args_check_rounds(int rounds, int warmup) {
    if (rounds <= warmup) return args_error(NULL, "--rounds (%d) must be more than --warmup (%d)", rounds, warmup);
    return ARGS_OK;
}

// ---------------------------------------------------------------------------
// Options as data.

enum { ARGS_MAX_OPTIONS = 64, ARGS_DEFAULT_LEN = 512 };

static int option_count(const ArgSpec *spec) {
    int n = 0;
    while (spec->options[n].name) n++;
    return n;
}

// What a target holds, as the usage shows it as a default; "" for nothing
// worth showing (a switch, NULL, an empty string).
static void default_text(const ArgOption *o, char *out, size_t n) {
    out[0] = 0;
    if (o->hide_default || !o->target) return;
    if (o->kind == ARG_KIND_INT) snprintf(out, n, "%d", *(const int *)o->target);
    else if ((o->kind == ARG_KIND_STRING || o->kind == ARG_KIND_FOLDER) && *(const char *const *)o->target)
        snprintf(out, n, "%s", *(const char *const *)o->target);
}

// The defaults as they were when args_parse began: --help shows them even
// after other options have changed the targets.
static const ArgSpec *defaults_of;
static char defaults[ARGS_MAX_OPTIONS][ARGS_DEFAULT_LEN];

static void remember_defaults(const ArgSpec *spec) {
    int n = option_count(spec);
    for (int i = 0; i < n && i < ARGS_MAX_OPTIONS; i++) default_text(&spec->options[i], defaults[i], ARGS_DEFAULT_LEN);
    defaults_of = spec;
}

// One synopsis item, "[--name VALUE]", or "[--figures DIR | --no-figures]"
// for an option and the switch that clears it.
static int synopsis_item(const ArgOption *o, const ArgOption *next, char *out, size_t n) {
    if (o->kind == ARG_KIND_CLEAR) return 0;   // written with the option it clears
    int len = snprintf(out, n, "[--%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
    if (next && next->name && next->kind == ARG_KIND_CLEAR && next->target == o->target)
        len += snprintf(out + len, n - (size_t)len, " | --%s", next->name);
    snprintf(out + len, n - (size_t)len, "]");
    return 1;
}

static void print_synopsis(const ArgSpec *spec, FILE *f) {
    int indent = fprintf(f, "usage: %s", spec->program), col = indent;
    char item[256];
    for (int i = 0; spec->options[i].name; i++) {
        if (!synopsis_item(&spec->options[i], &spec->options[i + 1], item, sizeof item)) continue;
        int w = (int)strlen(item) + 1;
        if (col + w > 88) { fprintf(f, "\n%*s", indent, ""); col = indent; }
        col += fprintf(f, " %s", item);
    }
    if (col + 9 > 88) { fprintf(f, "\n%*s", indent, ""); }
    fprintf(f, " [--help]%s%s\n", spec->words ? " " : "", spec->words ? spec->words : "");
}

void args_usage(const ArgSpec *spec, FILE *f) {
    print_synopsis(spec, f);
    if (spec->about) fprintf(f, "\n%s\n", spec->about);
    int n = option_count(spec), width = 8;
    for (int i = 0; i < n; i++) {
        const ArgOption *o = &spec->options[i];
        int w = 2 + (int)strlen(o->name) + (o->value ? 1 + (int)strlen(o->value) : 0);
        if (w > width) width = w;
    }
    fprintf(f, "\noptions:\n");
    for (int i = 0; i < n; i++) {
        const ArgOption *o = &spec->options[i];
        char head[128], def[ARGS_DEFAULT_LEN];
        snprintf(head, sizeof head, "--%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
        if (defaults_of == spec && i < ARGS_MAX_OPTIONS) snprintf(def, sizeof def, "%s", defaults[i]);
        else default_text(o, def, sizeof def);
        fprintf(f, "  %-*s  ", width, head);
        // the help's lines, each under the first
        for (const char *h = o->help ? o->help : ""; *h;) {
            const char *nl = strchr(h, '\n');
            int len = nl ? (int)(nl - h) : (int)strlen(h);
            fprintf(f, "%.*s", len, h);
            h += len;
            if (*h) { h++; fprintf(f, "\n  %-*s  ", width, ""); }
        }
        fprintf(f, def[0] ? " (default %s)\n" : "\n", def);
    }
    fprintf(f, "  %-*s  this text\n", width, "--help");
    if (spec->more) {
        fprintf(f, "\n");
        spec->more(f);
    }
}

// One option's value into its target. ARGS_OK, or ARGS_BAD reported.
static int take_value(const ArgSpec *spec, const ArgOption *o, const char *value) {
    if (o->seen) *o->seen = true;
    switch (o->kind) {
    case ARG_KIND_INT:
        if (parse_int_in(value, o->lo, o->hi, (int *)o->target) != 0)
            return bad_input(spec, "--%s wants a whole number from %ld to %ld, not '%s'", o->name, o->lo, o->hi, value);
        return ARGS_OK;
    case ARG_KIND_FOLDER:
        // an empty name would only fail later, at the first write, after the work
        if (!*value) return bad_input(spec, "--%s wants a folder", o->name);
        /* fall through */
    case ARG_KIND_STRING: *(const char **)o->target = value; return ARGS_OK;
    case ARG_KIND_SET: *(int *)o->target = (int)o->lo; return ARGS_OK;
    case ARG_KIND_BOOL: *(bool *)o->target = o->lo != 0; return ARGS_OK;
    case ARG_KIND_CLEAR: *(const char **)o->target = NULL; return ARGS_OK;
    case ARG_KIND_CALL: {
        int rc = o->call(value, o->target);
        if (rc == ARGS_BAD) {   // it said what is wrong; the usage says what is right
            fprintf(stderr, "\n");
            args_usage(spec, stderr);
        }
        return rc;
    }
    }
    return ARGS_BAD;
}

int args_parse(const ArgSpec *spec, int argc, char **argv) {
    int n = option_count(spec);
    if (n >= ARGS_MAX_OPTIONS) return args_error(NULL, "%s has more options than args_parse takes", spec->program);
    struct option table[ARGS_MAX_OPTIONS + 1];
    for (int i = 0; i < n; i++) {
        const ArgOption *o = &spec->options[i];
        table[i] = (struct option){ o->name, o->value ? required_argument : no_argument, 0, 1000 + i };
    }
    table[n] = (struct option){ "help", no_argument, 0, 'h' };
    table[n + 1] = (struct option){ 0, 0, 0, 0 };
    remember_defaults(spec);
    optind = 0;    // glibc starts afresh (a test may parse twice)
    opterr = 0;    // our messages, not getopt's
    for (int c; (c = getopt_long(argc, argv, "h", table, NULL)) != -1;) {
        if (c == 'h') { args_usage(spec, stdout); return ARGS_HELP; }
        if (c < 1000 || c >= 1000 + n) return unknown_option(spec, NULL, argv);
        int rc = take_value(spec, &spec->options[c - 1000], optarg);
        if (rc != ARGS_OK) return rc;
    }
    // getopt_long moved every other word to argv[optind ..]
    if (spec->words) {
        if (spec->word_v) *spec->word_v = argv + optind;
        if (spec->word_n) *spec->word_n = argc - optind;
        return ARGS_OK;
    }
    return optind < argc ? bad_input(spec, "unknown argument '%s'", argv[optind]) : ARGS_OK;
}

int args_take_list(const char *value, void *list) {
    ArgList *l = list;
    if (l->n == ARGS_LIST_MAX) return args_error(NULL, "more than %d values for one option", ARGS_LIST_MAX);
    l->v[l->n++] = value ? value : "";
    return ARGS_OK;
}

int args_parse_step(const char *program, const char *about, const ArgOption *own, const char **figures_dir,
                    int argc, char **argv) {
    ArgOption opts[ARGS_MAX_OPTIONS];
    int n = 0;
    while (own[n].name && n < ARGS_MAX_OPTIONS - 3) { opts[n] = own[n]; n++; }
    const ArgOption figures[] = { ARG_FIGURES(figures_dir), ARG_END };
    memcpy(opts + n, figures, sizeof figures);
    const ArgSpec spec = { .program = program, .about = about, .options = opts };
    return args_parse(&spec, argc, argv);
}

void args_print_try_it(const char *sets, const char *note) {
    char s6[4096];
    project_command(s6, sizeof s6, "step6_ablation/step6_ablation");
    printf("try it: %s train --name mine --preset quick %s\n        %s\n", s6, sets, note);
}
