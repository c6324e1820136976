// test_docs.c: the code quoted in the docs is still the code.
//
// A docs page quotes source like this (the comment line names the file,
// relative to the project root, and the fenced block right below it is the
// quote):
//
//     <!-- quote: common/nn/norms.c -->
//     ```c
//     ...lines copied from that file...
//     ```
//
// Every line of the block must appear in that file, as consecutive lines,
// exactly (trailing spaces aside). When someone edits the code and not the
// page, this test fails and names the page, the line of the quote and the
// source file, so the docs cannot drift from the code unnoticed.
//
// Any file can be quoted: the pages quote tools/tinydit_ref.py's PyTorch
// beside the C.
//
// Program output is quoted the same way, with the command that printed it
// (run from the project root, by sh):
//
//     <!-- output: step6_ablation/step6_ablation table results/quick -->
//     <!-- mask: ^ *baseline .*( [0-9.]+ ) -->
//     ```
//     ...lines the command prints...
//     ```
//
// The test runs the command and wants the block's lines, consecutive, in its
// standard output, so a quoted table cannot drift from the committed results
// or from the code that prints it. Runs of spaces count as one (column
// widths may move). A mask line (any number of them) is a POSIX extended
// regular expression for what differs from machine to machine, timings
// above all: on every line, in the page and in the output alike, what its
// first group matches (the whole match if it has no group) becomes "#".
// Output that no command re-runs in seconds (a training run, a timing as
// such) is a file of a results folder, whose README records the run, and
// the page quotes that file with a quote marker like any other.
//
// The section "Prose" below says how a fact in prose is proved
// (<!-- fact: CMD -->), and how the commands, the links and the glossary's
// terms of the pages are checked; "Lengths" caps the pages.
//
// Pages scanned: README.md, common/README.md and docs/*.md. The checker is
// tested on made-up pages too: a quote that matches, one that drifted, one of
// a file that is gone, one whose lines are there but not together; an output
// that matches, one that drifted, one masked, a command that fails.
//
// And one rule that common/README.md states: the layering of common/ (nn
// includes nothing above it, io only nn, eval nn and io).
#include "testutil.h"
#include "io/paths.h"
#include "train/trainer.h"
#include <ctype.h>
#include <dirent.h>
#include <regex.h>
#include <stdbool.h>
#include <sys/stat.h>

#define MAX_LINE 1024

// A text file as an array of lines, trailing whitespace (and '\r') removed.
typedef struct { char **line; int n, cap; } Lines;

static void lines_free(Lines *t) {
    for (int i = 0; i < t->n; i++) free(t->line[i]);
    free(t->line);
    memset(t, 0, sizeof *t);
}

static void lines_push(Lines *t, const char *s) {
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->line = realloc(t->line, sizeof(char *) * t->cap);
        ck_assert_ptr_nonnull(t->line);
    }
    char *copy = strdup(s);
    ck_assert_ptr_nonnull(copy);
    size_t len = strlen(copy);
    while (len > 0 && isspace((unsigned char)copy[len - 1])) copy[--len] = '\0';
    t->line[t->n++] = copy;
}

// 0, or -1 if the file cannot be opened. Lines longer than MAX_LINE are
// kept whole (read in pieces).
static int lines_read(Lines *t, const char *path) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char buf[MAX_LINE], *acc = NULL;
    size_t acc_len = 0;
    while (fgets(buf, sizeof buf, f)) {
        size_t k = strlen(buf);
        acc = realloc(acc, acc_len + k + 1);
        ck_assert_ptr_nonnull(acc);
        memcpy(acc + acc_len, buf, k + 1);
        acc_len += k;
        if (k > 0 && buf[k - 1] == '\n') { lines_push(t, acc); acc_len = 0; }
    }
    if (acc_len > 0) lines_push(t, acc);
    free(acc);
    fclose(f);
    return 0;
}

// "<!-- TAG: TEXT -->" (TAG "quote", "output", "mask", "fact" or "run") ->
// TEXT into out; 1 if the line is such a marker.
static int marker(const char *line, const char *tag, char *out, size_t outlen) {
    while (isspace((unsigned char)*line)) line++;
    char open[32];
    snprintf(open, sizeof open, "<!-- %s:", tag);
    if (strncmp(line, open, strlen(open)) != 0) return 0;
    const char *p = line + strlen(open), *end = strstr(p, "-->");
    if (!end) return 0;
    while (p < end && isspace((unsigned char)*p)) p++;
    while (end > p && isspace((unsigned char)end[-1])) end--;
    snprintf(out, outlen, "%.*s", (int)(end - p), p);
    return 1;
}

static int quote_marker(const char *line, char *out, size_t outlen) {
    return marker(line, "quote", out, outlen);
}

// A fence line: optional indent, then ``` or ~~~ (3 or more). Returns the
// fence length (0 if not a fence); *indent gets the indent, *ch the char.
static int fence(const char *line, int *indent, char *ch) {
    int i = 0;
    while (line[i] == ' ') i++;
    if (line[i] != '`' && line[i] != '~') return 0;
    int n = 0;
    while (line[i + n] == line[i]) n++;
    if (n < 3) return 0;
    *indent = i; *ch = line[i];
    return n;
}

// Where block (n lines) starts in src as consecutive lines, or -1. *best
// gets the longest run of the block's first lines found together.
static int find_block(const Lines *src, char *const *block, int n, int *best) {
    *best = 0;
    for (int s = 0; s + n <= src->n; s++) {
        int k = 0;
        while (k < n && strcmp(src->line[s + k], block[k]) == 0) k++;
        if (k == n) return s;
        if (k > *best) *best = k;
    }
    return -1;
}

// Checks one quoted block of a page. `block` are its lines with the fence's
// indent removed. Writes a message and returns 1 on failure, else 0.
static int check_block(const char *root, const char *doc, int line_no, const char *src_rel,
                       char *const *block, int n, FILE *report) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", root, src_rel);
    Lines src;
    if (lines_read(&src, path) != 0) {
        fprintf(report, "%s:%d: quotes %s, which is missing\n", doc, line_no, src_rel);
        return 1;
    }
    int best = 0, at = n > 0 ? find_block(&src, block, n, &best) : 0;
    lines_free(&src);
    if (n == 0) {
        fprintf(report, "%s:%d: the quote of %s is empty\n", doc, line_no, src_rel);
        return 1;
    }
    if (at < 0) {
        fprintf(report, "%s:%d: the quote of %s is no longer in that file: its line %d of %d\n"
                "    \"%s\"\n    does not follow the ones before it there\n",
                doc, line_no, src_rel, best + 1, n, block[best]);
        return 1;
    }
    return 0;
}

// ---------------------------------------------------------------------------
// Quoted output: run the command, compare.

// What was checked, for the summary line.
typedef struct { int quotes, outputs; } Counts;

// Each command runs once per check, however many blocks quote it.
#define MAX_COMMANDS 64
typedef struct { char *cmd; Lines out; int status; } RanCommand;
typedef struct { RanCommand ran[MAX_COMMANDS]; int n; } CommandCache;

static void cache_free(CommandCache *c) {
    for (int i = 0; i < c->n; i++) { free(c->ran[i].cmd); lines_free(&c->ran[i].out); }
    c->n = 0;
}

// The standard output of `sh -c 'cd ROOT && CMD'` (stderr dropped: progress
// bars), and its exit status, from the cache or run now.
static RanCommand *run_command(CommandCache *c, const char *root, const char *cmd) {
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->ran[i].cmd, cmd) == 0) return &c->ran[i];
    ck_assert_int_lt(c->n, MAX_COMMANDS);
    RanCommand *r = &c->ran[c->n++];
    memset(r, 0, sizeof *r);
    r->cmd = strdup(cmd);
    char tmpl[] = "/tmp/tinydit_docs_out_XXXXXX";
    int fd = mkstemp(tmpl);
    ck_assert_int_ge(fd, 0);
    close(fd);
    size_t len = strlen(root) + strlen(cmd) + strlen(tmpl) + 64;
    char *line = malloc(len);
    ck_assert_ptr_nonnull(line);
    snprintf(line, len, "cd '%s' && { %s ; } >'%s' 2>/dev/null", root, cmd, tmpl);
    int st = system(line);
    r->status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
    free(line);
    ck_assert_int_eq(lines_read(&r->out, tmpl), 0);
    unlink(tmpl);
    return r;
}

// A line as the comparison sees it: each mask's matches (its first group,
// or the whole match) replaced by "#", then runs of blanks made one space.
static char *normalise(const char *line, regex_t *masks, int n_masks) {
    size_t cap = strlen(line) + 1;
    char *s = strdup(line);
    ck_assert_ptr_nonnull(s);
    for (int m = 0; m < n_masks; m++) {
        size_t from = 0;
        regmatch_t g[2];
        while (from <= strlen(s) && regexec(&masks[m], s + from, 2, g, from ? REG_NOTBOL : 0) == 0) {
            regmatch_t hit = (masks[m].re_nsub >= 1 && g[1].rm_so >= 0) ? g[1] : g[0];
            size_t a = from + (size_t)hit.rm_so, b = from + (size_t)hit.rm_eo;
            size_t end = from + (size_t)g[0].rm_eo;
            if (b > a) {
                memmove(s + a + 1, s + b, strlen(s + b) + 1);
                s[a] = '#';
                end = end - (b - a) + 1;
            }
            from = end > from ? end : from + 1;   // an empty match moves on by one
        }
    }
    char *out = malloc(cap + 1), *o = out;
    ck_assert_ptr_nonnull(out);
    for (const char *p = s; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            if (o == out || o[-1] != ' ') *o++ = ' ';
        } else *o++ = *p;
    }
    *o = '\0';
    free(s);
    return out;
}

// One output block (n page lines) against its command's output. 1 on
// failure, with a message.
static int check_output(const char *root, CommandCache *cache, const char *doc, int line_no,
                        const char *cmd, char *const *mask_src, int n_masks,
                        char *const *block, int n, FILE *report) {
    regex_t masks[8];
    for (int m = 0; m < n_masks; m++)
        if (regcomp(&masks[m], mask_src[m], REG_EXTENDED) != 0) {
            fprintf(report, "%s:%d: the mask '%s' is not a regular expression\n", doc, line_no, mask_src[m]);
            for (int k = 0; k < m; k++) regfree(&masks[k]);
            return 1;
        }
    RanCommand *r = run_command(cache, root, cmd);
    int failed = 0;
    if (r->status != 0) {
        fprintf(report, "%s:%d: `%s` exited with %d (run it from the project root to see why;\n"
                "    the programs are built by `make all`)\n", doc, line_no, cmd, r->status);
        failed = 1;
    } else if (n == 0) {
        fprintf(report, "%s:%d: the output of `%s` is empty\n", doc, line_no, cmd);
        failed = 1;
    } else {
        char **want = malloc(sizeof(char *) * (size_t)n);
        Lines got = { 0 };
        ck_assert_ptr_nonnull(want);
        for (int k = 0; k < n; k++) want[k] = normalise(block[k], masks, n_masks);
        for (int k = 0; k < r->out.n; k++) {
            char *g = normalise(r->out.line[k], masks, n_masks);
            lines_push(&got, g);
            free(g);
        }
        int best = 0;
        if (find_block(&got, want, n, &best) < 0) {
            fprintf(report, "%s:%d: `%s` no longer prints this: its line %d of %d\n"
                    "    \"%s\"\n    does not follow the ones before it in the output\n",
                    doc, line_no, cmd, best + 1, n, block[best]);
            failed = 1;
        }
        for (int k = 0; k < n; k++) free(want[k]);
        free(want);
        lines_free(&got);
    }
    for (int m = 0; m < n_masks; m++) regfree(&masks[m]);
    return failed;
}

// Scans one page (path relative to root). Counts its quoted blocks into *c;
// returns the number of failures, each reported on `report`.
static int check_page(const char *root, const char *doc, FILE *report, Counts *c, CommandCache *cache) {
    char path[2048], src_rel[512];
    snprintf(path, sizeof path, "%s/%s", root, doc);
    Lines page;
    if (lines_read(&page, path) != 0) {
        fprintf(report, "%s: cannot read it\n", doc);
        return 1;
    }
    int failures = 0;
    for (int i = 0; i < page.n; i++) {
        int indent = 0, len = 0, end_indent;
        char ch = 0, end_ch;
        if ((len = fence(page.line[i], &indent, &ch))) {   // a block that is no quote:
            i++;                                            // skip it (it may show a marker)
            while (i < page.n && !(fence(page.line[i], &end_indent, &end_ch) >= len && end_ch == ch)) i++;
            continue;
        }
        char cmd[1024], mask_text[8][512];
        bool is_output = marker(page.line[i], "output", cmd, sizeof cmd);
        if (!is_output && !quote_marker(page.line[i], src_rel, sizeof src_rel)) continue;
        int at = i, n_masks = 0;       // an output marker may have mask lines below it
        while (is_output && i + 1 < page.n && n_masks < 8 &&
               marker(page.line[i + 1], "mask", mask_text[n_masks], sizeof mask_text[0])) {
            i++;
            n_masks++;
        }
        char *masks[8];
        for (int m = 0; m < n_masks; m++) masks[m] = mask_text[m];
        const char *what = is_output ? cmd : src_rel;
        if (i + 1 >= page.n || !(len = fence(page.line[i + 1], &indent, &ch))) {
            fprintf(report, "%s:%d: a %s marker of %s without a fenced block right below it\n",
                    doc, at + 1, is_output ? "output" : "quote", what);
            failures++;
            continue;
        }
        int first = i + 2, last = first;   // the block is page lines [first, last)
        while (last < page.n && !(fence(page.line[last], &end_indent, &end_ch) >= len && end_ch == ch))
            last++;
        if (last == page.n) {
            fprintf(report, "%s:%d: the %s of %s has no closing fence\n", doc, at + 1,
                    is_output ? "output" : "quote", what);
            failures++;
            break;
        }
        // inside a list the fence is indented: its indent is not part of the code
        for (int k = first; k < last; k++) {
            char *s = page.line[k];
            int drop = 0;
            while (drop < indent && s[drop] == ' ') drop++;
            memmove(s, s + drop, strlen(s + drop) + 1);
        }
        if (is_output) {
            c->outputs++;
            failures += check_output(root, cache, doc, at + 1, cmd, masks, n_masks,
                                     page.line + first, last - first, report);
        } else {
            c->quotes++;
            failures += check_block(root, doc, at + 1, src_rel, page.line + first, last - first, report);
        }
        i = last;
    }
    lines_free(&page);
    return failures;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

// The pages under root, relative to it: README.md, common/README.md if it
// is there, and docs/*.md (sorted).
static void list_pages(const char *root, Lines *docs) {
    memset(docs, 0, sizeof *docs);
    lines_push(docs, "README.md");
    char path[2048];
    snprintf(path, sizeof path, "%s/common/README.md", root);
    if (access(path, R_OK) == 0) lines_push(docs, "common/README.md");
    snprintf(path, sizeof path, "%s/docs", root);
    DIR *d = opendir(path);
    int first_doc = docs->n;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t k = strlen(e->d_name);
            if (k > 3 && strcmp(e->d_name + k - 3, ".md") == 0) {
                snprintf(path, sizeof path, "docs/%s", e->d_name);
                lines_push(docs, path);
            }
        }
        closedir(d);
    }
    qsort(docs->line + first_doc, docs->n - first_doc, sizeof(char *), by_name);
}

// Every page (list_pages); pages that do not exist are skipped, except
// README.md. Returns the number of failures; *c and *pages count what was
// checked.
static int check_all(const char *root, FILE *report, Counts *c, int *pages) {
    Lines docs;
    list_pages(root, &docs);
    int failures = 0;
    memset(c, 0, sizeof *c);
    CommandCache *cache = calloc(1, sizeof *cache);
    ck_assert_ptr_nonnull(cache);
    for (int i = 0; i < docs.n; i++) failures += check_page(root, docs.line[i], report, c, cache);
    *pages = docs.n;
    cache_free(cache);
    free(cache);
    lines_free(&docs);
    return failures;
}


// ---------------------------------------------------------------------------
// Prose: facts, commands, links and the glossary's terms.
//
// Facts. A page states a fact about the code (a count, a default, a bound)
// in prose only below a line
//     <!-- fact: CMD -->
// that computes it: every number in the paragraph under that line (its
// prose: not code spans, link targets or comments) must appear in CMD's
// standard output (CMD is run like an output block's command, from the
// project root). Prose elsewhere is not read for numbers.
//
// Commands. Every line of a ```sh block is a command that must run as
// written. A `cd DIR` moves the lines after it; `VAR=value` prefixes are
// the command's environment. `make ARGS` must pass `make -n ARGS` (the
// target exists, its recipe expands); a program (a path: lab/lab,
// ./step3_qknorm) must exist and answer `PROG [COMMAND] --help` with exit
// 0, and each --option the line gives it must appear in that help; a
// script (.py, .sh) must exist. A block after <!-- run --> is run as
// written instead (it must finish in seconds, exit 0). Inline code spans
// that are a make command (`make plots`) are checked like ```sh lines when
// they hold no placeholder ([...] or a lowercase VAR=value meant to be
// filled in).
//
// Links. Every relative link [text](path#anchor) of a page must name a file
// or folder that exists, and an anchor into a .md page must be one of its
// headings (GitHub's slugs: lowercase, punctuation dropped, spaces to '-').
//
// The glossary (the section "## Glossary" of docs/tinydit.md: one
// "- **term, term** (alias, alias): ..." line each) keeps what the pages
// promise of it: the text of a link to it, [flow matching](tinydit.md#glossary),
// is one of its terms (or "glossary"), and so is each term a sentence
// names after "glossary defines" ("the glossary defines A, B and C").

typedef struct { int numbers, facts, commands, links, terms; } ProseCounts;

static bool is_word(char c) { return isalnum((unsigned char)c) || c == '_'; }

// Removes `code spans`, link targets "](...)" and <!-- comments --> from a
// line of prose (in place); the text of links stays.
static void prose_only(char *s) {
    char *o = s;
    for (char *p = s; *p;) {
        if (*p == '`') {
            int n = 0;
            while (p[n] == '`') n++;
            char *close = p + n;
            for (; *close; close++) {
                int m = 0;
                while (close[m] == '`') m++;
                if (m == n) break;
                if (m) close += m - 1;
            }
            if (*close) { p = close + n; *o++ = ' '; continue; }
        }
        if (p[0] == ']' && p[1] == '(') {
            char *close = strchr(p, ')');
            if (close) { *o++ = ']'; p = close + 1; continue; }
        }
        if (strncmp(p, "<!--", 4) == 0) {
            char *close = strstr(p, "-->");
            if (close) { p = close + 3; continue; }
        }
        *o++ = *p++;
    }
    *o = '\0';
}


static bool word_in(const char *w, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(w, list[i]) == 0) return true;
    return false;
}

// GitHub's anchor for a heading: lowercase, punctuation dropped, spaces '-'.
static void heading_slug(const char *heading, char *out, size_t outlen) {
    while (*heading == '#') heading++;
    while (*heading == ' ') heading++;
    size_t k = 0;
    for (const char *p = heading; *p && k + 1 < outlen; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) || c == '_' || c == '-' || c >= 0x80) out[k++] = (char)tolower(c);
        else if (c == ' ') out[k++] = '-';
    }
    out[k] = '\0';
}

static bool page_has_anchor(const char *path, const char *anchor) {
    Lines t;
    if (lines_read(&t, path) != 0) return false;
    bool found = false, in_block = false;
    for (int i = 0; i < t.n && !found; i++) {
        int ind; char ch;
        if (fence(t.line[i], &ind, &ch)) { in_block = !in_block; continue; }
        if (in_block || t.line[i][0] != '#') continue;
        char slug[512];
        heading_slug(t.line[i], slug, sizeof slug);
        found = strcmp(slug, anchor) == 0;
    }
    lines_free(&t);
    return found;
}

// The relative links of one raw line; 1 per broken one, reported.
static int check_links(const char *root, const char *doc, int line_no, const char *line,
                       ProseCounts *pc, FILE *report) {
    int failures = 0;
    for (const char *p = strstr(line, "]("); p; p = strstr(p + 2, "](")) {
        const char *start = p + 2, *end = strchr(start, ')');
        if (!end) break;
        char target[1024];
        snprintf(target, sizeof target, "%.*s", (int)(end - start), start);
        if (strstr(target, "://") || !strncmp(target, "mailto:", 7) || !*target) continue;
        pc->links++;
        char *hash = strchr(target, '#'), anchor[512] = "";
        if (hash) { snprintf(anchor, sizeof anchor, "%s", hash + 1); *hash = '\0'; }
        char dir[1024], path[3072];
        snprintf(dir, sizeof dir, "%s", doc);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0'; else snprintf(dir, sizeof dir, ".");
        if (*target) snprintf(path, sizeof path, "%s/%s/%s", root, dir, target);
        else snprintf(path, sizeof path, "%s/%s", root, doc);
        struct stat st;
        if (stat(path, &st) != 0) {
            fprintf(report, "%s:%d: a link to %s, which is missing\n", doc, line_no, target);
            failures++;
        } else if (*anchor && strstr(path, ".md") && !page_has_anchor(path, anchor)) {
            fprintf(report, "%s:%d: a link to %s#%s: no heading there has that anchor\n", doc, line_no,
                    *target ? target : doc, anchor);
            failures++;
        }
    }
    return failures;
}

// Splits a command line at &&, ||, ; and | outside quotes into cmds (in
// place); the comment (from an unquoted '#' after a blank) into *comment.
static int split_commands(char *line, char **cmds, int max, char **comment) {
    int n = 0;
    char quote = 0, *start = line;
    *comment = NULL;
    for (char *p = line; *p; p++) {
        if (quote) { if (*p == quote) quote = 0; continue; }
        if (*p == '\'' || *p == '"') { quote = *p; continue; }
        if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) { *comment = p + 1; *p = '\0'; break; }
        if ((p[0] == '&' && p[1] == '&') || (p[0] == '|' && p[1] == '|')) {
            *p = '\0'; p++;
            if (n < max) cmds[n++] = start;
            start = p + 1;
        } else if (*p == ';' || *p == '|') {
            *p = '\0';
            if (n < max) cmds[n++] = start;
            start = p + 1;
        }
    }
    if (n < max) cmds[n++] = start;
    return n;
}

// A shell word list of a simple command (no quoting beyond '...' and "...").
static int shell_words(char *cmd, char **w, int max) {
    int n = 0;
    char *p = cmd;
    while (*p && n < max) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        char *o = p;
        w[n++] = o;
        char quote = 0;
        while (*p && (quote || (*p != ' ' && *p != '\t'))) {
            if (quote) { if (*p == quote) quote = 0; else *o++ = *p; }
            else if (*p == '\'' || *p == '"') quote = *p;
            else if (!(*p == '\\' && p[1] == '\0')) *o++ = *p;
            p++;
        }
        if (*p) p++;
        *o = '\0';
    }
    return n;
}

// The exit status of `sh -c 'cd ROOT/CWD && CMD'`, its stdout into out
// (may be NULL).
static int run_in(const char *root, const char *cwd, const char *cmd, Lines *out) {
    char tmpl[] = "/tmp/tinydit_docs_cmd_XXXXXX";
    int fd = mkstemp(tmpl);
    ck_assert_int_ge(fd, 0);
    close(fd);
    size_t len = strlen(root) + strlen(cwd) + strlen(cmd) + strlen(tmpl) + 96;
    char *line = malloc(len);
    ck_assert_ptr_nonnull(line);
    snprintf(line, len, "cd '%s/%s' && { %s ; } </dev/null >'%s' 2>/dev/null", root, cwd, cmd, tmpl);
    int st = system(line);
    free(line);
    if (out) ck_assert_int_eq(lines_read(out, tmpl), 0);
    unlink(tmpl);
    return (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
}

// Whether every target among args (not an option, not VAR=value) is a
// target make knows in cwd: for a recipe that `make -n` cannot expand
// (a recursive make into a folder that only the real run creates).
static bool make_targets_exist(const char *root, const char *cwd, char **args, int n) {
    Lines db;
    if (run_in(root, cwd, "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -pqn 2>/dev/null; true", &db) != 0) return false;
    bool all = true;
    for (int k = 0; k < n && all; k++) {
        if (args[k][0] == '-' || strchr(args[k], '=')) continue;
        char want[256];
        snprintf(want, sizeof want, "%s:", args[k]);
        bool found = false;
        for (int l = 0; l < db.n && !found; l++) found = strncmp(db.line[l], want, strlen(want)) == 0;
        all = found;
    }
    lines_free(&db);
    return all;
}

// Whether a program's help lists COMMAND: a line that starts with it, or
// that names it after the program ("step0_tour export RUN_CKPT OUT").
static bool help_lists_command(const Lines *help, const char *prog, const char *command) {
    const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
    char named[512];
    snprintf(named, sizeof named, "%s %s ", base, command);
    size_t cl = strlen(command);
    for (int i = 0; i < help->n; i++) {
        const char *l = help->line[i];
        while (*l == ' ') l++;
        if (strncmp(l, command, cl) == 0 && (l[cl] == ' ' || l[cl] == '\0')) return true;
        if (strstr(help->line[i], named)) return true;
    }
    return false;
}

// Checks one simple command (words w[0..n)) as the rule above says; cwd
// relative to root ("." at first) is updated by cd. 1 on failure. *skip
// is set when the rest of the block cannot be checked (a cd into a folder
// that a command before it makes).
static int check_command(const char *root, char *cwd, size_t cwdlen, const char *doc, int line_no,
                         char **w, int n, ProseCounts *pc, bool *skip, FILE *report) {
    int i = 0;
    while (i < n && strchr(w[i], '=') && (isupper((unsigned char)w[i][0]) || w[i][0] == '_')) i++;
    if (i == n) return 0;
    const char *prog = w[i];
    char path[4096];
    if (!strcmp(prog, "cd")) {
        char next[1024];
        snprintf(next, sizeof next, "%s/%s", cwd, i + 1 < n ? w[i + 1] : ".");
        snprintf(path, sizeof path, "%s/%s", root, next);
        struct stat st;
        if (stat(path, &st) != 0) { *skip = true; return 0; }
        snprintf(cwd, cwdlen, "%s", next);
        return 0;
    }
    if (!strcmp(prog, "make")) {
        char cmd[4096] = "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n";
        for (int k = i + 1; k < n; k++) {
            size_t l = strlen(cmd);
            snprintf(cmd + l, sizeof cmd - l, " '%s'", w[k]);
        }
        pc->commands++;
        if (run_in(root, cwd, cmd, NULL) != 0 && !make_targets_exist(root, cwd, w + i + 1, n - i - 1)) {
            fprintf(report, "%s:%d: `%s` fails (in %s): make has no such target, or its recipe does "
                    "not expand\n", doc, line_no, cmd, cwd);
            return 1;
        }
        return 0;
    }
    if (!strcmp(prog, "python3") && i + 1 < n) prog = w[++i];
    if (!strchr(prog, '/')) return 0;          // a system tool (git, grep, $EDITOR): not ours
    snprintf(path, sizeof path, "%s/%s/%s", root, cwd, prog);
    pc->commands++;
    if (access(path, F_OK) != 0) {
        fprintf(report, "%s:%d: runs %s, which is missing (in %s; `make all` builds the programs)\n",
                doc, line_no, prog, cwd);
        return 1;
    }
    size_t pl = strlen(prog);
    if ((pl > 3 && !strcmp(prog + pl - 3, ".py")) || (pl > 3 && !strcmp(prog + pl - 3, ".sh"))) return 0;
    char cmd[2048];
    const char *sub = (i + 1 < n && w[i + 1][0] != '-' && !strchr(w[i + 1], '/') && !strchr(w[i + 1], '.'))
                      ? w[i + 1] : "";
    snprintf(cmd, sizeof cmd, "'%s' %s --help", prog, sub);
    Lines help;
    int st = run_in(root, cwd, cmd, &help);
    int failed = 0;
    if (st != 0 && *sub) {
        // some commands take no --help of their own: the program's help must list them
        lines_free(&help);
        char top[2048];
        snprintf(top, sizeof top, "'%s' --help", prog);
        if (run_in(root, cwd, top, &help) == 0 && help_lists_command(&help, prog, sub)) st = 0;
    }
    if (st != 0) {
        fprintf(report, "%s:%d: `%s` exits with %d: %s%s is not a command of %s\n", doc, line_no, cmd, st,
                sub, *sub ? "" : "(no command)", prog);
        failed = 1;
    }
    for (int k = i + 1; k < n && !failed; k++) {
        if (strncmp(w[k], "--", 2) != 0 || !isalpha((unsigned char)w[k][2])) continue;
        char opt[256];
        snprintf(opt, sizeof opt, "%s", w[k]);
        char *eq = strchr(opt, '=');
        if (eq) *eq = '\0';
        bool found = false;
        for (int h = 0; h < help.n && !found; h++) {
            const char *at = help.line[h];
            while ((at = strstr(at, opt))) {
                char after = at[strlen(opt)];
                if (!isalnum((unsigned char)after) && after != '-' && after != '_') { found = true; break; }
                at++;
            }
        }
        if (!found) {
            fprintf(report, "%s:%d: `%s` does not list %s\n", doc, line_no, cmd, opt);
            failed = 1;
        }
    }
    lines_free(&help);
    return failed;
}

// A command line from a ```sh block or a code span: its comment is prose.
static int check_command_line(const char *root, char *cwd, size_t cwdlen, const char *doc, int line_no,
                              const char *text, ProseCounts *pc, bool *skip, char *comment_out,
                              size_t comment_len, FILE *report) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", text);
    char *cmds[16], *comment;
    int n = split_commands(buf, cmds, 16, &comment);
    snprintf(comment_out, comment_len, "%s", comment ? comment : "");
    int failures = 0;
    for (int c = 0; c < n && !*skip; c++) {
        char *w[64];
        int nw = shell_words(cmds[c], w, 64);
        if (nw > 0) failures += check_command(root, cwd, cwdlen, doc, line_no, w, nw, pc, skip, report);
    }
    return failures;
}

// The numbers of a line of prose (already prose_only): digits, with
// thousands' commas and a decimal part, not part of a word, path or option.
static int prose_numbers(const char *s, char found[][48], int max) {
    int n = 0;
    for (size_t i = 0; s[i] && n < max; i++) {
        if (!isdigit((unsigned char)s[i])) continue;
        if (i > 0 && (is_word(s[i - 1]) || strchr("./#=-", s[i - 1]))) {
            while (isalnum((unsigned char)s[i + 1]) || s[i + 1] == '.') i++;   // a name, a path, a setting
            continue;
        }
        size_t b = i;
        while (isdigit((unsigned char)s[b]) || ((s[b] == ',' || s[b] == '.') && isdigit((unsigned char)s[b + 1]))) b++;
        if (is_word(s[b])) { i = b; continue; }                                // 4x4, 2e-3, 1st
        snprintf(found[n++], 48, "%.*s", (int)(b - i), s + i);
        i = b;
    }
    return n;
}

// One number of a fact paragraph, against the fact command's output.
static int judge_number(const char *doc, int line_no, const char *line, const char *num,
                        const RanCommand *fact, const char *fact_cmd, ProseCounts *pc, FILE *report) {
    char bare[48];
    size_t k = 0;
    for (const char *p = num; *p && k + 1 < sizeof bare; p++) if (*p != ',') bare[k++] = *p;
    bare[k] = '\0';
    for (int i = 0; i < fact->out.n; i++)
        if (strstr(fact->out.line[i], num) || strstr(fact->out.line[i], bare)) { pc->facts++; return 0; }
    fprintf(report, "%s:%d: %s is not in the output of `%s`, the fact line above it\n    %s\n",
            doc, line_no, num, fact_cmd, line);
    return 1;
}

// The glossary's terms, lowercased: read by check_all_prose.
static Lines g_terms;

// "- **a, b** (c, d): ..." -> a, b, c, d into terms.
static void glossary_terms(const char *root, Lines *terms) {
    memset(terms, 0, sizeof *terms);
    char path[2048];
    snprintf(path, sizeof path, "%s/docs/tinydit.md", root);
    Lines t;
    if (lines_read(&t, path) != 0) return;
    bool in = false;
    for (int i = 0; i < t.n; i++) {
        if (t.line[i][0] == '#') { in = !strcmp(t.line[i], "## Glossary"); continue; }
        if (!in || strncmp(t.line[i], "- **", 4) != 0) continue;
        char buf[512];
        const char *a = t.line[i] + 4, *b = strstr(a, "**");
        if (!b) continue;
        snprintf(buf, sizeof buf, "%.*s", (int)(b - a), a);
        if (b[2] == ' ' && b[3] == '(' && strchr(b + 3, ')')) {        // the aliases in brackets
            size_t l = strlen(buf);
            snprintf(buf + l, sizeof buf - l, ", %.*s", (int)(strchr(b + 3, ')') - b - 4), b + 4);
        }
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            while (*tok == ' ') tok++;
            for (char *c = tok; *c; c++) *c = (char)tolower((unsigned char)*c);
            if (*tok) lines_push(terms, tok);
        }
    }
    lines_free(&t);
}

static bool is_term(const char *name) {
    char w[256];
    size_t k = 0;
    while (*name == ' ' || *name == '*' || *name == '_') name++;
    for (; *name && k + 1 < sizeof w; name++) w[k++] = (char)tolower((unsigned char)*name);
    while (k > 0 && strchr(" *_.", w[k - 1])) k--;
    w[k] = '\0';
    if (!strncmp(w, "the ", 4)) memmove(w, w + 4, k - 3);
    if (!strcmp(w, "glossary")) return true;
    for (int i = 0; i < g_terms.n; i++)
        if (!strcmp(g_terms.line[i], w)) return true;
    return false;
}

// What one line promises of the glossary: 1 per term it does not have.
static int check_glossary_promises(const char *doc, int line_no, const char *raw, ProseCounts *pc,
                                   FILE *report) {
    int failures = 0;
    char name[512];
    for (const char *p = strchr(raw, '['); p; p = strchr(p + 1, '[')) {    // [term](...#glossary)
        const char *close = strstr(p, "](");
        if (!close || !strchr(close, ')')) break;
        const char *target = close + 2, *end = strchr(target, ')');
        if (!(end - target >= 9 && !strncmp(end - 9, "#glossary", 9))) continue;
        snprintf(name, sizeof name, "%.*s", (int)(close - p - 1), p + 1);
        pc->terms++;
        if (!is_term(name)) {
            fprintf(report, "%s:%d: a link to the glossary as \"%s\", a term it does not define\n", doc, line_no, name);
            failures++;
        }
    }
    const char *d = strcasestr(raw, "glossary defines ");
    if (d) {                                                               // A, B and C.
        char list[1024];
        snprintf(list, sizeof list, "%s", d + strlen("glossary defines "));
        list[strcspn(list, ".;:")] = '\0';
        for (char *a = strstr(list, " and "); a; a = strstr(a, " and ")) memcpy(a, ",   ", 4);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            while (*tok == ' ') tok++;
            pc->terms++;
            if (!is_term(tok)) {
                fprintf(report, "%s:%d: says the glossary defines \"%s\"; it does not\n", doc, line_no, tok);
                failures++;
            }
        }
    }
    return failures;
}

// One line of prose: its links and glossary promises, and below a fact
// line, its numbers.
static int check_prose_line(const char *root, const char *doc, int line_no, const char *raw,
                            const RanCommand *fact, const char *fact_cmd, ProseCounts *pc, FILE *report) {
    int failures = check_links(root, doc, line_no, raw, pc, report);
    failures += check_glossary_promises(doc, line_no, raw, pc, report);
    if (!fact) return failures;
    char text[4096], found[32][48];
    snprintf(text, sizeof text, "%s", raw);
    prose_only(text);
    int n = prose_numbers(text, found, 32);
    pc->numbers += n;
    for (int k = 0; k < n; k++) failures += judge_number(doc, line_no, raw, found[k], fact, fact_cmd, pc, report);
    return failures;
}

// The make commands in a line's code spans.
static int check_inline_commands(const char *root, const char *doc, int line_no, const char *raw,
                                 ProseCounts *pc, FILE *report) {
    static regex_t placeholder;
    static bool made = false;
    if (!made) {
        ck_assert_int_eq(regcomp(&placeholder, "\\[|\\.\\.\\.|…|=[a-z]+( |$)|[<>]|(^|[^A-Z])N( |$)", REG_EXTENDED), 0);
        made = true;
    }
    int failures = 0;
    for (const char *p = strstr(raw, "`make "); p; p = strstr(p + 1, "`make ")) {
        if (p > raw && p[-1] == '`') continue;
        const char *end = strchr(p + 1, '`');
        if (!end) break;
        char span[1024];
        snprintf(span, sizeof span, "%.*s", (int)(end - p - 1), p + 1);
        if (regexec(&placeholder, span, 0, NULL, 0) == 0) continue;
        char cwd[1024] = ".", comment[512];
        bool skip = false;
        failures += check_command_line(root, cwd, sizeof cwd, doc, line_no, span, pc, &skip, comment,
                                       sizeof comment, report);
        p = end;
    }
    return failures;
}

static bool code_language(const char *info) {
    static const char *const CODE[] = { "c", "h", "python", "py", "make", "makefile", "dot", "json", "diff", "md" };
    return word_in(info, CODE, sizeof CODE / sizeof *CODE);
}

// One page's prose, commands and links. Returns the failures.
static int check_page_prose(const char *root, const char *doc, FILE *report, ProseCounts *pc,
                            CommandCache *cache) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", root, doc);
    Lines page;
    if (lines_read(&page, path) != 0) return 0;
    int failures = 0;
    const RanCommand *fact = NULL;
    char fact_cmd[1024] = "", text[1024];
    bool generated_next = false, run_next = false;
    for (int i = 0; i < page.n; i++) {
        const char *line = page.line[i];
        if (!*line) { fact = NULL; continue; }
        if (marker(line, "output", text, sizeof text) || marker(line, "quote", text, sizeof text)) {
            generated_next = true;
            continue;
        }
        if (marker(line, "fact", fact_cmd, sizeof fact_cmd)) {
            RanCommand *r = run_command(cache, root, fact_cmd);
            if (r->status != 0) {
                fprintf(report, "%s:%d: the fact command `%s` exited with %d\n", doc, i + 1, fact_cmd, r->status);
                failures++;
            }
            fact = r;
            continue;
        }
        if (marker(line, "run", text, sizeof text) || strstr(line, "<!-- run -->")) { run_next = true; continue; }
        if (marker(line, "mask", text, sizeof text)) continue;
        int indent, len, end_indent;
        char ch, end_ch;
        if ((len = fence(line, &indent, &ch))) {
            const char *info = line + indent + len;
            while (*info == ' ') info++;
            bool generated = generated_next, shell = !strcmp(info, "sh") || !strcmp(info, "bash"),
                 code = code_language(info), run = run_next;
            generated_next = run_next = false;
            char cwd[1024] = ".";
            bool skip = false;
            int j = i + 1;
            char acc[4096] = "", script[16384] = "set -e\n";
            int acc_line = 0;
            for (; j < page.n && !(fence(page.line[j], &end_indent, &end_ch) >= len && end_ch == ch); j++) {
                if (generated || code) continue;
                const char *l = page.line[j];
                if (!shell) {
                    failures += check_prose_line(root, doc, j + 1, l, fact, fact_cmd, pc, report);
                    continue;
                }
                size_t al = strlen(acc), ll = strlen(l);
                if (!al) acc_line = j + 1;
                snprintf(acc + al, sizeof acc - al, "%s", l);
                if (ll > 0 && l[ll - 1] == '\\') { acc[strlen(acc) - 1] = ' '; continue; }
                char comment[1024];
                if (run) {                  // the whole block runs as one script, below
                    char *cmds[1], *cm;
                    char line_copy[4200];
                    snprintf(line_copy, sizeof line_copy, "%s", acc);
                    split_commands(line_copy, cmds, 1, &cm);
                    snprintf(comment, sizeof comment, "%s", cm ? cm : "");
                    size_t sl = strlen(script);
                    snprintf(script + sl, sizeof script - sl, "%s\n", acc);
                } else {
                    failures += check_command_line(root, cwd, sizeof cwd, doc, acc_line, acc, pc, &skip,
                                                   comment, sizeof comment, report);
                }
                if (*comment) failures += check_prose_line(root, doc, acc_line, comment, fact, fact_cmd, pc, report);
                acc[0] = '\0';
            }
            // A block that builds a program with the project's plain flags
            // cannot link a sanitized library: make sanitize sets
            // TINYDIT_DOCS_NO_RUN, and such blocks are checked by make check.
            if (run && getenv("TINYDIT_DOCS_NO_RUN")) {
                printf("%s:%d: the block below <!-- run --> not run (TINYDIT_DOCS_NO_RUN)\n", doc, i + 1);
                run = false;
            }
            if (run) {
                pc->commands++;
                size_t sl = strlen(script);
                snprintf(script + sl, sizeof script - sl, "true");
                if (run_in(root, ".", script, NULL) != 0) {
                    fprintf(report, "%s:%d: the block below <!-- run --> fails when run as written\n", doc, i + 1);
                    failures++;
                }
            }
            i = j;
            continue;
        }
        generated_next = run_next = false;
        failures += check_prose_line(root, doc, i + 1, line, fact, fact_cmd, pc, report);
        failures += check_inline_commands(root, doc, i + 1, line, pc, report);
    }
    lines_free(&page);
    return failures;
}

static int check_all_prose(const char *root, FILE *report, ProseCounts *pc) {
    Lines docs;
    list_pages(root, &docs);
    memset(pc, 0, sizeof *pc);
    glossary_terms(root, &g_terms);
    CommandCache *cache = calloc(1, sizeof *cache);
    ck_assert_ptr_nonnull(cache);
    int failures = 0;
    for (int i = 0; i < docs.n; i++) failures += check_page_prose(root, docs.line[i], report, pc, cache);
    lines_free(&g_terms);
    cache_free(cache);
    free(cache);
    lines_free(&docs);
    return failures;
}

// ---------------------------------------------------------------------------
// The project's own pages.

START_TEST(test_repository_docs) {
    const char *root = project_root();
    Counts c;
    int pages = 0;
    int failures = check_all(root, stderr, &c, &pages);
    printf("docs quotes: %d quoted blocks of code and %d of program output in %d pages checked; "
           "%d drifted\n", c.quotes, c.outputs, pages, failures);
    fflush(stdout);
    ck_assert_msg(failures == 0, "%d quoted block(s) no longer match their source (listed above)",
                  failures);
}
END_TEST

// The layering that common/README.md states: each folder of common/
// includes only the folders before it (nn, io, eval, train).
START_TEST(test_repository_prose) {
    ProseCounts pc;
    int failures = check_all_prose(project_root(), stderr, &pc);
    printf("docs prose: %d numbers of fact paragraphs (%d in their command's output), %d commands, "
           "%d links, %d glossary terms checked; %d failures\n", pc.numbers, pc.facts, pc.commands, pc.links,
           pc.terms, failures);
    fflush(stdout);
    ck_assert_int_gt(pc.commands, 10);
    ck_assert_int_gt(pc.terms, 2);
    ck_assert_msg(failures == 0, "%d facts not in their command's output, failing commands, broken links "
                  "or glossary terms missing (listed above)", failures);
}
END_TEST

// Lengths: a lesson, not a log. The pages that grew by accretion have a
// ceiling each, and docs/ as a whole has one, so that a page cut here
// cannot grow back there. The whole: the pages' length with each fact said
// once; a new page an issue asks for raises it by that page's lines (4 for
// the cluster's make settings and adaLN-Zero's row in step 6).
#define DOCS_MOST_LINES 3582

typedef struct { const char *page; int lines; } PageLength;

static int longer_first(const void *a, const void *b) {
    return ((const PageLength *)b)->lines - ((const PageLength *)a)->lines;
}

START_TEST(test_page_lengths) {
    static const struct { const char *page; int most; } limits[] = {
        { "README.md", 150 }, { "docs/performance.md", 300 }, { "docs/step6_ablation.md", 300 },
    };
    const char *root = project_root();
    Lines docs;
    list_pages(root, &docs);
    PageLength *pages = calloc((size_t)docs.n + 1, sizeof *pages);
    ck_assert_ptr_nonnull(pages);
    int total = 0, over = 0, n_pages = 0;
    for (int i = 0; i < docs.n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", root, docs.line[i]);
        Lines t;
        ck_assert_int_eq(lines_read(&t, path), 0);
        if (!strncmp(docs.line[i], "docs/", 5)) {
            total += t.n;
            pages[n_pages++] = (PageLength){ docs.line[i], t.n };
        }
        for (size_t k = 0; k < sizeof limits / sizeof *limits; k++)
            if (!strcmp(docs.line[i], limits[k].page) && t.n > limits[k].most) {
                fprintf(stderr, "%s: %d lines, more than its %d\n", docs.line[i], t.n, limits[k].most);
                over++;
            }
        lines_free(&t);
    }
    printf("docs lengths: docs/ holds %d lines (at most %d)\n", total, DOCS_MOST_LINES);
    if (total > DOCS_MOST_LINES) {
        qsort(pages, (size_t)n_pages, sizeof *pages, longer_first);
        for (int i = 0; i < n_pages; i++) fprintf(stderr, "  %5d  %s\n", pages[i].lines, pages[i].page);
    }
    free(pages);
    lines_free(&docs);
    ck_assert_msg(over == 0, "%d page(s) longer than their ceiling (listed above)", over);
    ck_assert_msg(total <= DOCS_MOST_LINES, "docs/ holds %d lines, %d more than its %d (the pages listed above, "
                  "longest first): cut as many where a fact is restated rather than quoted or printed, or "
                  "explained on two pages (say it once, link to it)", total, total - DOCS_MOST_LINES,
                  DOCS_MOST_LINES);
}
END_TEST

START_TEST(test_layering) {
    static const struct { const char *folder, *forbidden[3]; } rules[] = {
        { "nn",   { "io/", "eval/", "train/" } },
        { "io",   { "eval/", "train/", NULL } },
        { "eval", { "train/", NULL, NULL } },
    };
    const char *root = project_root();
    int bad = 0, files = 0;
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        char dir[2048];
        snprintf(dir, sizeof dir, "%s/common/%s", root, rules[r].folder);
        DIR *d = opendir(dir);
        ck_assert_msg(d != NULL, "cannot list %s", dir);
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t k = strlen(e->d_name);
            if (k < 3 || (strcmp(e->d_name + k - 2, ".c") && strcmp(e->d_name + k - 2, ".h"))) continue;
            char path[2400];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            Lines src;
            ck_assert_int_eq(lines_read(&src, path), 0);
            files++;
            for (int i = 0; i < src.n; i++)
                for (int f = 0; f < 3 && rules[r].forbidden[f]; f++) {
                    char inc[32];
                    snprintf(inc, sizeof inc, "#include \"%s", rules[r].forbidden[f]);
                    if (strstr(src.line[i], inc)) {
                        fprintf(stderr, "common/%s/%s:%d: %s reaches above its layer\n",
                                rules[r].folder, e->d_name, i + 1, src.line[i]);
                        bad++;
                    }
                }
            lines_free(&src);
        }
        closedir(d);
    }
    ck_assert_int_gt(files, 20);
    ck_assert_msg(bad == 0, "%d include(s) break the layering of common/ (listed above)", bad);
}
END_TEST

// ---------------------------------------------------------------------------
// The checker itself, on made-up pages in a temp folder.

static char g_dir[256];

static void write_text(const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, rel);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static const char *SOURCE =
    "// norms.c\n"
    "void f(float *y, const float *x, int n) {\n"
    "    for (int i = 0; i < n; i++)\n"
    "        y[i] = 2.0f * x[i];   \n"           // trailing spaces: ignored
    "}\n";

// Runs the checker on the made-up tree: it must report want_failures
// failures in want_blocks quoted or rerun blocks (-1: any number). Returns
// the report, in a buffer the next call reuses.
static const char *check_fake(int want_failures, int want_blocks) {
    static char report[4096];
    memset(report, 0, sizeof report);
    FILE *r = fmemopen(report, sizeof report, "w");
    ck_assert_ptr_nonnull(r);
    int pages = 0;
    Counts c;
    int failures = check_all(g_dir, r, &c, &pages);
    fclose(r);
    ck_assert_int_eq(pages, 2);   // README.md and docs/page.md
    ck_assert_msg(failures == want_failures, "%d failures, want %d:\n%s", failures, want_failures, report);
    if (want_blocks >= 0) ck_assert_int_eq(c.quotes + c.outputs, want_blocks);
    return report;
}

static void fake_setup(void) {
    tmpdir_make(g_dir, sizeof g_dir, "docs");
    char sub[300];
    snprintf(sub, sizeof sub, "%s/docs", g_dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof sub, "%s/src", g_dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    write_text("src/norms.c", SOURCE);
    write_text("README.md", "# a project\nno quotes here\n");
}

static void fake_teardown(void) { tmpdir_remove(g_dir); }

START_TEST(test_checker_accepts_a_true_quote) {
    write_text("docs/page.md",
               "From src/norms.c:\n\n"
               "<!-- quote: src/norms.c -->\n"
               "```c\n"
               "    for (int i = 0; i < n; i++)\n"
               "        y[i] = 2.0f * x[i];\n"
               "```\n"
               "How to quote (an example, not a quote):\n"
               "````md\n"
               "<!-- quote: src/gone.c -->\n"
               "```c\n"
               "```\n"
               "````\n"
               "- in a list, indented:\n"
               "  <!-- quote: src/norms.c -->\n"
               "  ```c\n"
               "  }\n"
               "  ```\n");
    const char *report = check_fake(0, 2);
    ck_assert_str_eq(report, "");
}
END_TEST

START_TEST(test_checker_finds_drift) {
    write_text("docs/page.md",
               "intro\n"
               "<!-- quote: src/norms.c -->\n"
               "```c\n"
               "    for (int i = 0; i < n; i++)\n"
               "        y[i] = 3.0f * x[i];\n"           // the code says 2.0f
               "```\n");
    const char *report = check_fake(1, 1);
    // the page, the line of the marker, the source file, the line that drifted
    ck_assert_msg(strstr(report, "docs/page.md:2: the quote of src/norms.c") != NULL, "%s", report);
    ck_assert_msg(strstr(report, "its line 2 of 2") != NULL, "%s", report);
    ck_assert_msg(strstr(report, "3.0f") != NULL, "%s", report);
}
END_TEST

START_TEST(test_checker_finds_a_missing_file) {
    write_text("docs/page.md",
               "<!-- quote: src/gone.c -->\n"
               "```c\n"
               "}\n"
               "```\n");
    const char *report = check_fake(1, -1);
    ck_assert_msg(strstr(report, "docs/page.md:1: quotes src/gone.c, which is missing") != NULL,
                  "%s", report);
}
END_TEST

START_TEST(test_checker_wants_consecutive_lines) {
    // both lines are in the file, but not one after the other
    write_text("docs/page.md",
               "<!-- quote: src/norms.c -->\n"
               "```c\n"
               "void f(float *y, const float *x, int n) {\n"
               "        y[i] = 2.0f * x[i];\n"
               "```\n");
    const char *report = check_fake(1, -1);
    ck_assert_msg(strstr(report, "its line 2 of 2") != NULL, "%s", report);
}
END_TEST

START_TEST(test_checker_wants_a_fence) {
    write_text("docs/page.md",
               "<!-- quote: src/norms.c -->\n"
               "just prose, no block\n"
               "<!-- quote: src/norms.c -->\n"
               "```c\n"
               "}\n");                                    // never closed
    const char *report = check_fake(2, -1);
    ck_assert_msg(strstr(report, "docs/page.md:1: a quote marker of src/norms.c without a fenced block")
                  != NULL, "%s", report);
    ck_assert_msg(strstr(report, "docs/page.md:3: the quote of src/norms.c has no closing fence")
                  != NULL, "%s", report);
}
END_TEST

// The PyTorch lines the pages set beside the C are checked the same way:
// any file can be quoted, tools/tinydit_ref.py as well as a .c file.
START_TEST(test_checker_reads_python) {
    write_text("src/ref.py", "def rms_norm(x, gain=None):\n"
                             "    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)\n");
    write_text("docs/page.md",
               "<!-- quote: src/ref.py -->\n"
               "```python\n"
               "def rms_norm(x, gain=None):\n"
               "    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)\n"
               "```\n"
               "<!-- quote: src/ref.py -->\n"
               "```python\n"
               "    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True))\n"   // eps dropped
               "```\n");
    const char *report = check_fake(1, 2);
    ck_assert_msg(strstr(report, "docs/page.md:6: the quote of src/ref.py") != NULL, "%s", report);
}
END_TEST

// A made-up program for the output blocks: src/prog prints a table with a
// timing in it; `sh src/prog fail` prints and exits 3.
static const char *PROG =
    "if [ \"$1\" = fail ]; then echo half; exit 3; fi\n"
    "echo 'run       val MSE  ms/step'\n"
    "echo 'base       0.2812    905.1'\n"
    "echo 'rope       0.2546   2476.5'\n"
    "echo 'probe accuracy 61.3%'\n"
    "echo progress >&2\n";

START_TEST(test_checker_reruns_outputs) {
    write_text("src/prog", PROG);
    write_text("docs/page.md",
               "<!-- output: sh src/prog -->\n"
               "```\n"
               "base 0.2812 905.1\n"                  // spaces need not line up
               "rope       0.2546   2476.5\n"
               "```\n"
               "part of it again, the timings masked (they differ from machine to machine):\n"
               "<!-- output: sh src/prog -->\n"
               "<!-- mask: [0-9]+\\.[0-9] *$ -->\n"
               "<!-- mask: (0\\.[0-9]+) -->\n"
               "```\n"
               "base       0.9999   1.0\n"
               "rope       0.1   9999.9\n"
               "```\n"
               );
    const char *report = check_fake(0, 2);
    ck_assert_str_eq(report, "");
}
END_TEST

START_TEST(test_checker_finds_output_drift) {
    write_text("src/prog", PROG);
    write_text("docs/page.md",
               "<!-- output: sh src/prog -->\n"
               "```\n"
               "base       0.2812    905.1\n"
               "rope       0.2606   2476.5\n"          // the program prints 0.2546
               "```\n"
               "masked timings, but the val MSE drifted:\n"
               "<!-- output: sh src/prog -->\n"
               "<!-- mask: [0-9]+\\.[0-9] *$ -->\n"
               "```\n"
               "base       0.2813   1.0\n"
               "```\n"
               "<!-- output: sh src/prog fail -->\n"
               "```\n"
               "half\n"
               "```\n"
               "<!-- output: sh src/prog -->\n"
               "<!-- mask: ([0-9 -->\n"
               "```\n"
               "base\n"
               "```\n");
    const char *report = check_fake(4, -1);
    ck_assert_msg(strstr(report, "docs/page.md:1: `sh src/prog` no longer prints this: its line 2 of 2")
                  && strstr(report, "0.2606"), "%s", report);
    ck_assert_msg(strstr(report, "docs/page.md:7: `sh src/prog` no longer prints this: its line 1 of 1"),
                  "%s", report);
    ck_assert_msg(strstr(report, "docs/page.md:12: `sh src/prog fail` exited with 3"), "%s", report);
    ck_assert_msg(strstr(report, "docs/page.md:16: the mask '([0-9' is not a regular expression"),
                  "%s", report);
}
END_TEST

// The prose checks on a made-up page: what they flag, with file:line, and
// what they let through.
START_TEST(test_prose_checker) {
    write_text("src/prog", PROG);
    char path[512];
    snprintf(path, sizeof path, "%s/src/prog", g_dir);
    ck_assert_int_eq(chmod(path, 0700), 0);
    write_text("Makefile", "hello:\n\t@echo hello\n");
    write_text("docs/tinydit.md", "# Model\n\n## Glossary\n\n"
                                  "- **flow matching**: a path.\n"
                                  "- **MLP** (feed-forward network, FFN): a layer.\n"
                                  "- **patch, patchify**: a square.\n");
    write_text("docs/page.md",
               "# A page\n\n"
               "The run took 33.2 min and its val MSE is 0.2812 (prose: not read).\n"   // 3: fine
               "[gone](missing.md) and [no anchor](tinydit.md#nowhere).\n"              // 4: two links
               "<!-- fact: sh src/prog -->\n"
               "The baseline's 0.2812 and rope's 2476.5 are derived, at lr 2e-3, in `0.5`.\n"   // 6: fine
               "\n"
               "<!-- fact: sh src/prog -->\n"
               "But 0.3333 is not in its output.\n"                                     // 9: not in output
               "\n"
               "[Flow matching](tinydit.md#glossary), [FFN](tinydit.md#glossary), the [glossary](tinydit.md#glossary).\n"
               "[loss spikes](tinydit.md#glossary) are not there.\n"                     // 12: no such term
               "The glossary defines patchify, the MLP and the seed's standard error.\n"   // 13: one missing
               "<!-- output: sh src/prog -->\n"
               "```\n"
               "base       0.2812    905.1\n"
               "```\n"
               "```sh\n"
               "make hello                 # fine\n"
               "make nosuch                # 20: no such target\n"
               "src/prog --rounds 3        # 21: not in its help\n"
               "src/gone                   # 22: missing\n"
               "```\n");
    char report[8192] = "";
    FILE *r = fmemopen(report, sizeof report, "w");
    ck_assert_ptr_nonnull(r);
    ProseCounts pc;
    int failures = check_all_prose(g_dir, r, &pc);
    fclose(r);
    static const char *const want[] = {
        "docs/page.md:4: a link to missing.md, which is missing",
        "docs/page.md:4: a link to tinydit.md#nowhere: no heading there has that anchor",
        "docs/page.md:9: 0.3333 is not in the output of `sh src/prog`",
        "docs/page.md:12: a link to the glossary as \"loss spikes\", a term it does not define",
        "docs/page.md:13: says the glossary defines \"the seed's standard error\"; it does not",
        "docs/page.md:20: `env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n 'nosuch'` fails",
        "docs/page.md:21: `'src/prog'  --help` does not list --rounds",
        "docs/page.md:22: runs src/gone, which is missing",
    };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++)
        ck_assert_msg(strstr(report, want[k]) != NULL, "missing \"%s\" in:\n%s", want[k], report);
    ck_assert_msg(failures == (int)(sizeof want / sizeof *want), "%d failures:\n%s", failures, report);
    ck_assert_int_eq(pc.facts, 2);
    ck_assert_int_eq(pc.terms, 7);
}
END_TEST

static Suite *docs_suite(void) {
    Suite *s = suite_create("docs");
    // the docs' commands run: step 4's timings take seconds
    add_tests(s, "repository", 600, TESTS(test_repository_docs, test_layering, test_repository_prose, test_page_lengths));
    TCase *checker = add_tests(s, "checker", 0, TESTS(test_checker_accepts_a_true_quote, test_checker_finds_drift,
                                                      test_checker_finds_a_missing_file,
                                                      test_checker_wants_consecutive_lines,
                                                      test_checker_wants_a_fence, test_checker_reads_python,
                                                      test_checker_reruns_outputs, test_checker_finds_output_drift,
                                                      test_prose_checker));
    tcase_add_checked_fixture(checker, fake_setup, fake_teardown);
    return s;
}

int main(void) { return run_suite(docs_suite()); }
