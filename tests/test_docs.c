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
// A page can quote a program's output the same way:
//
//     <!-- output: build/tools/tinydit_tour -->
//     ```
//     ...what it printed...
//     ```
//
// The command is run again from the project root (by /bin/sh, so it must be
// built first: `make check` builds everything) and must exit 0 and print the
// block line for line. Numbers with a decimal point may differ by up to two
// units of the last digit the page shows (another CPU's BLAS rounds a sum
// differently); whole numbers and all the other text must be the same. Only
// programs that need no data and read no clock belong in such a block; the
// others' output is marked on the page as a measurement.
//
// Pages scanned: README.md, common/README.md and docs/*.md. The checker is
// tested on made-up pages too: a quote that matches, one that drifted, one of
// a file that is gone, one whose lines are there but not together, an output
// that holds and one that drifted.
//
// And one rule that common/README.md states: the layering of common/ (nn
// includes nothing above it, io only nn, eval nn and io).
#include "testutil.h"
#include "io/paths.h"
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

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

// "<!-- quote: PATH -->" -> PATH into out: 1 if the line is such a marker,
// 2 if it is "<!-- output: COMMAND -->" (COMMAND into out), else 0.
static int quote_marker(const char *line, char *out, size_t outlen) {
    while (isspace((unsigned char)*line)) line++;
    const char *open = "<!-- quote:";
    int kind = 1;
    if (strncmp(line, "<!-- output:", 12) == 0) { open = "<!-- output:"; kind = 2; }
    if (strncmp(line, open, strlen(open)) != 0) return 0;
    const char *p = line + strlen(open), *end = strstr(p, "-->");
    if (!end) return 0;
    while (p < end && isspace((unsigned char)*p)) p++;
    while (end > p && isspace((unsigned char)end[-1])) end--;
    snprintf(out, outlen, "%.*s", (int)(end - p), p);
    return kind;
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

// A number starts here: a digit, or a minus sign before one.
static int number_starts(const char *s) {
    return isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]));
}

// Reads the number at *s (sign, digits, a point and digits), moves *s past
// it; *decimals gets how many digits follow the point (-1: no point).
static double read_number(const char **s, int *decimals) {
    const char *p = *s;
    double sign = 1, v = 0;
    if (*p == '-') { sign = -1; p++; }
    while (isdigit((unsigned char)*p)) v = 10 * v + (*p++ - '0');
    *decimals = -1;
    if (*p == '.' && isdigit((unsigned char)p[1])) {
        double unit = 1;
        *decimals = 0;
        for (p++; isdigit((unsigned char)*p); p++, (*decimals)++) v += (*p - '0') * (unit /= 10);
    }
    *s = p;
    return sign * v;
}

// 1 if the program's line says what the page's line says: the same text,
// whole numbers equal, decimals within two units of the page's last digit.
static int output_line_matches(const char *page, const char *program) {
    const char *a = page, *b = program;
    while (*a && *b) {
        if (number_starts(a) && number_starts(b)) {
            int da, db;
            double x = read_number(&a, &da), y = read_number(&b, &db);
            if (da < 0 || db < 0) { if (da != db || x != y) return 0; }
            else if (fabs(x - y) > 2.0 * pow(10.0, -da) + 1e-12) return 0;
        } else if (*a++ != *b++) return 0;
    }
    return *a == *b;
}

// Runs one output block's command from root and compares. Writes a message
// and returns 1 on failure, else 0.
static int check_output(const char *root, const char *doc, int line_no, const char *command,
                        char *const *block, int n, FILE *report) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s 2>/dev/null", root, command);
    FILE *p = popen(cmd, "r");
    if (!p) {
        fprintf(report, "%s:%d: cannot run %s\n", doc, line_no, command);
        return 1;
    }
    Lines out = { 0 };
    char buf[MAX_LINE * 4];
    while (fgets(buf, sizeof buf, p)) lines_push(&out, buf);
    int st = pclose(p), failed = 0;
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(report, "%s:%d: %s did not exit 0 (is it built? make check builds it)\n",
                doc, line_no, command);
        failed = 1;
    }
    for (int k = 0; !failed && k < n && k < out.n; k++)
        if (!output_line_matches(block[k], out.line[k])) {
            fprintf(report, "%s:%d: the output of %s has drifted: its line %d\n"
                    "    page:    \"%s\"\n    printed: \"%s\"\n",
                    doc, line_no, command, k + 1, block[k], out.line[k]);
            failed = 1;
        }
    if (!failed && out.n != n) {
        fprintf(report, "%s:%d: %s printed %d lines, the page shows %d\n", doc, line_no, command, out.n, n);
        failed = 1;
    }
    lines_free(&out);
    return failed;
}

// Scans one page (path relative to root). Adds its quoted blocks to
// *blocks; returns the number of failures, each reported on `report`.
static int check_page(const char *root, const char *doc, FILE *report, int *blocks) {
    char path[2048], src_rel[1024];
    snprintf(path, sizeof path, "%s/%s", root, doc);
    Lines page;
    if (lines_read(&page, path) != 0) {
        fprintf(report, "%s: cannot read it\n", doc);
        return 1;
    }
    int failures = 0, kind;
    for (int i = 0; i < page.n; i++) {
        int indent = 0, len = 0, end_indent;
        char ch = 0, end_ch;
        if ((len = fence(page.line[i], &indent, &ch))) {   // a block that is no quote:
            i++;                                            // skip it (it may show a marker)
            while (i < page.n && !(fence(page.line[i], &end_indent, &end_ch) >= len && end_ch == ch)) i++;
            continue;
        }
        if (!(kind = quote_marker(page.line[i], src_rel, sizeof src_rel))) continue;
        if (i + 1 >= page.n || !(len = fence(page.line[i + 1], &indent, &ch))) {
            fprintf(report, "%s:%d: a quote marker of %s without a fenced block right below it\n",
                    doc, i + 1, src_rel);
            failures++;
            continue;
        }
        int first = i + 2, last = first;   // the block is page lines [first, last)
        while (last < page.n && !(fence(page.line[last], &end_indent, &end_ch) >= len && end_ch == ch))
            last++;
        if (last == page.n) {
            fprintf(report, "%s:%d: the quote of %s has no closing fence\n", doc, i + 1, src_rel);
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
        (*blocks)++;
        if (kind == 2) failures += check_output(root, doc, i + 1, src_rel, page.line + first, last - first, report);
        else failures += check_block(root, doc, i + 1, src_rel, page.line + first, last - first, report);
        i = last;
    }
    lines_free(&page);
    return failures;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

// Every page under root: README.md, common/README.md, docs/*.md (sorted).
// Pages that do not exist are skipped, except README.md. Returns the
// number of failures; *blocks and *pages count what was checked.
static int check_all(const char *root, FILE *report, int *blocks, int *pages) {
    Lines docs = { 0 };
    lines_push(&docs, "README.md");
    char path[2048];
    snprintf(path, sizeof path, "%s/common/README.md", root);
    if (access(path, R_OK) == 0) lines_push(&docs, "common/README.md");
    snprintf(path, sizeof path, "%s/docs", root);
    DIR *d = opendir(path);
    int first_doc = docs.n;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t k = strlen(e->d_name);
            if (k > 3 && strcmp(e->d_name + k - 3, ".md") == 0) {
                snprintf(path, sizeof path, "docs/%s", e->d_name);
                lines_push(&docs, path);
            }
        }
        closedir(d);
    }
    qsort(docs.line + first_doc, docs.n - first_doc, sizeof(char *), by_name);
    int failures = 0;
    *blocks = 0;
    for (int i = 0; i < docs.n; i++) failures += check_page(root, docs.line[i], report, blocks);
    *pages = docs.n;
    lines_free(&docs);
    return failures;
}

// ---------------------------------------------------------------------------
// The project's own pages.

START_TEST(test_repository_docs) {
    const char *root = project_root();
    int blocks = 0, pages = 0;
    int failures = check_all(root, stderr, &blocks, &pages);
    printf("docs quotes: %d quoted blocks (code and program output) in %d pages checked, %d drifted\n",
           blocks, pages, failures);
    fflush(stdout);
    ck_assert_msg(failures == 0, "%d quoted block(s) no longer match their source (listed above)",
                  failures);
}
END_TEST

// The layering that common/README.md states: each folder of common/
// includes only the folders before it (nn, io, eval, train).
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

// Runs the checker on the made-up tree; the report goes into `report`.
static int check_fake(int *blocks, char *report, size_t len) {
    FILE *r = fmemopen(report, len, "w");
    ck_assert_ptr_nonnull(r);
    int pages = 0;
    int failures = check_all(g_dir, r, blocks, &pages);
    fclose(r);
    ck_assert_int_eq(pages, 2);   // README.md and docs/page.md
    return failures;
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
    char report[2048] = "";
    int blocks = 0;
    ck_assert_int_eq(check_fake(&blocks, report, sizeof report), 0);
    ck_assert_int_eq(blocks, 2);
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
    char report[2048] = "";
    int blocks = 0;
    ck_assert_int_eq(check_fake(&blocks, report, sizeof report), 1);
    ck_assert_int_eq(blocks, 1);
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
    char report[2048] = "";
    int blocks = 0;
    ck_assert_int_eq(check_fake(&blocks, report, sizeof report), 1);
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
    char report[2048] = "";
    int blocks = 0;
    ck_assert_int_eq(check_fake(&blocks, report, sizeof report), 1);
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
    char report[2048] = "";
    int blocks = 0;
    ck_assert_int_eq(check_fake(&blocks, report, sizeof report), 2);
    ck_assert_msg(strstr(report, "docs/page.md:1: a quote marker of src/norms.c without a fenced block")
                  != NULL, "%s", report);
    ck_assert_msg(strstr(report, "docs/page.md:3: the quote of src/norms.c has no closing fence")
                  != NULL, "%s", report);
}
END_TEST

// An output block: the command run again, numbers within two units of the
// page's last digit, everything else exact.
static const char *SAY = "printf 'rms 0.352, all finite: yes\\nshape (1, 64, 48)\\n'";

START_TEST(test_checker_reruns_an_output) {
    char page[1024];
    snprintf(page, sizeof page,
             "<!-- output: %s -->\n"
             "```\n"
             "rms 0.354, all finite: yes\n"                // 0.352 printed: within 2 units
             "shape (1, 64, 48)\n"
             "```\n", SAY);
    write_text("docs/page.md", page);
    char report[2048] = "";
    int blocks = 0;
    ck_assert_int_eq(check_fake(&blocks, report, sizeof report), 0);
    ck_assert_int_eq(blocks, 1);
    ck_assert_str_eq(report, "");
}
END_TEST

START_TEST(test_checker_finds_a_drifted_output) {
    static const char *const pages[4][2] = {
        { "rms 0.355, all finite: yes\nshape (1, 64, 48)\n", "its line 1" },   // 3 units off
        { "rms 0.352, all finite: yes\nshape (1, 65, 48)\n", "its line 2" },   // whole numbers exact
        { "rms 0.352, all finite: no\nshape (1, 64, 48)\n", "its line 1" },
        { "rms 0.352, all finite: yes\n", "printed 2 lines, the page shows 1" },
    };
    for (int i = 0; i < 4; i++) {
        char page[1024];
        snprintf(page, sizeof page, "<!-- output: %s -->\n```\n%s```\n", SAY, pages[i][0]);
        write_text("docs/page.md", page);
        char report[2048] = "";
        int blocks = 0;
        ck_assert_int_eq(check_fake(&blocks, report, sizeof report), 1);
        ck_assert_msg(strstr(report, pages[i][1]) != NULL, "page %d: %s", i, report);
    }
    write_text("docs/page.md", "<!-- output: false -->\n```\n```\n");
    char report[2048] = "";
    int blocks = 0;
    ck_assert_int_eq(check_fake(&blocks, report, sizeof report), 1);
    ck_assert_msg(strstr(report, "false did not exit 0") != NULL, "%s", report);
}
END_TEST

static Suite *docs_suite(void) {
    Suite *s = suite_create("docs");
    TCase *own = tcase_create("repository");
    tcase_set_timeout(own, 120);   // the output blocks run their programs (the tour: seconds)
    tcase_add_test(own, test_repository_docs);
    tcase_add_test(own, test_layering);
    suite_add_tcase(s, own);
    TCase *fake = tcase_create("checker");
    tcase_add_checked_fixture(fake, fake_setup, fake_teardown);
    tcase_add_test(fake, test_checker_accepts_a_true_quote);
    tcase_add_test(fake, test_checker_finds_drift);
    tcase_add_test(fake, test_checker_finds_a_missing_file);
    tcase_add_test(fake, test_checker_wants_consecutive_lines);
    tcase_add_test(fake, test_checker_wants_a_fence);
    tcase_add_test(fake, test_checker_reruns_an_output);
    tcase_add_test(fake, test_checker_finds_a_drifted_output);
    suite_add_tcase(s, fake);
    return s;
}

int main(void) { return run_suite(docs_suite()); }
