// summary.c: model_print_summary, the model as a tree in the style of
// PyTorch's print(model), with each module's parameter count in a right-hand
// column, e.g.
//
//   TinyDiT(
//     (pos_row, pos_col): 2 x (8, 128)                                          2,048
//     (patch_embed): Linear(in_features=48, out_features=128, bias=True)        6,272
//     ...
//     (blocks): 4 x Block(                                                  1,055,232
//       (norm1, norm2): 2 x LayerNorm((128,), eps=1e-06, elementwise_affine=False)  0
//       (attn): Attention(                                                     66,048
//         heads=4, head_dim=32
//         (qkv): Linear(in_features=128, out_features=384, bias=True)          49,536
//       ...
//     )                                                          each block   263,808
//     ...
//   )
//   params: 1152176
//
// Module names follow the PyTorch reference (tools/tinydit_ref.py), so a
// line of the summary names the tensors of the state_dict it counts. Every
// parameter line, its name, shape and count, is read from the model's tensor
// table (build_table in model.c), in the table's order; this file names only
// the modules that hold no parameters of their own (blocks, attn, mlp) and
// the norms without any. The summary shows what was built, and its counts
// add up to the total by construction. The top-level counts (two-space indent) sum to
// `params`; the block's children are per block. The last line is
// "params: N", a plain integer that scripts and tests can read.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "model.h"

#define MAX_LINES 64
#define LINE_LEN 192

typedef struct {
    char text[LINE_LEN];
    char count[32];   // empty: no count on this line
    int per_block;    // the count is one block's (the blocks' closing line)
} Line;

typedef struct {
    Line lines[MAX_LINES];
    int n;
} Lines;

// 1152176 -> "1,152,176"
static void group_thousands(char *out, size_t outlen, unsigned long long v) {
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%llu", v);
    size_t j = 0;
    for (int i = 0; i < nd && j + 1 < outlen; i++) {
        if (i > 0 && (nd - i) % 3 == 0 && j + 2 < outlen) out[j++] = ',';
        out[j++] = digits[i];
    }
    out[j] = '\0';
}

// Appends a line; count < 0 means none. Further lines are dropped (the tree
// has a fixed shape of under 40 lines: blocks are printed once).
__attribute__((format(printf, 3, 4)))
static Line *add_line(Lines *ls, long long count, const char *fmt, ...) {
    static Line dropped;
    if (ls->n >= MAX_LINES) return &dropped;
    Line *l = &ls->lines[ls->n++];
    memset(l, 0, sizeof *l);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text, sizeof l->text, fmt, ap);
    va_end(ap);
    if (count >= 0) group_thousands(l->count, sizeof l->count, (unsigned long long)count);
    return l;
}

// Parameters of a module: every tensor whose name is `prefix` or starts with
// "prefix." (so "blocks.1" does not catch "blocks.10").
static size_t count_prefix(const Model *m, const char *prefix) {
    size_t n = 0, pl = strlen(prefix);
    for (int i = 0; i < m->n_tensors; i++) {
        const char *name = m->tensors[i].name;
        if (strncmp(name, prefix, pl) == 0 && (name[pl] == '\0' || name[pl] == '.'))
            n += m->tensors[i].size;
    }
    return n;
}

// The name of tensor t inside module `parent` ("" for the model itself), if
// it belongs to a parameter of the module itself and not of a submodule:
// "blocks.0.attn" holds "qkv.weight" and "q_norm.weight", the model holds
// "pos_row" and "head.bias", "blocks.0" holds "ada.weight" but not
// "attn.qkv.weight". NULL otherwise.
static const char *local_name(const ParamTensor *t, const char *parent) {
    size_t pl = strlen(parent);
    const char *rest = t->name;
    if (pl) {
        if (strncmp(rest, parent, pl) != 0 || rest[pl] != '.') return NULL;
        rest += pl + 1;
    }
    const char *dot = strchr(rest, '.');
    if (!dot) return rest;
    if (strchr(dot + 1, '.') || (strcmp(dot + 1, "weight") != 0 && strcmp(dot + 1, "bias") != 0))
        return NULL;
    return rest;
}

// "qkv.weight" -> "qkv"
static void module_label(char *out, size_t outlen, const char *local) {
    size_t n = strcspn(local, ".");
    snprintf(out, outlen, "%.*s", (int)n, local);
}

// The parameters that module `parent` holds itself, among tensors [from, to),
// one line each in table order: a Linear as "(qkv): Linear(in_features=...)"
// with its weight and bias counted together, a run of gains or position
// tables of one shape as "(pos_row, pos_col): 2 x (8, 128)". A gain is an
// RMSNorm's (QK-norm's: the block norms have none).
static void add_params_in(Lines *ls, const Model *m, const char *indent, const char *parent,
                          int from, int to) {
    for (int i = from; i < to; i++) {
        const ParamTensor *t = &m->tensors[i];
        const char *local = local_name(t, parent);
        if (!local || t->kind == PARAM_LINEAR_BIAS) continue;   // a bias counts with its weight
        char label[PARAM_NAME_LEN];
        module_label(label, sizeof label, local);
        if (t->kind == PARAM_LINEAR) {
            const ParamTensor *bias = i + 1 < to && m->tensors[i + 1].kind == PARAM_LINEAR_BIAS ?
                                      &m->tensors[i + 1] : NULL;
            add_line(ls, (long long)(t->size + (bias ? bias->size : 0)),
                     "%s(%s): Linear(in_features=%d, out_features=%d, bias=%s)", indent, label,
                     t->shape[1], t->shape[0], bias ? "True" : "False");
            continue;
        }
        // a run of tensors of this kind and shape: one line
        char labels[128];
        snprintf(labels, sizeof labels, "%s", label);
        size_t count = t->size;
        int n = 1;
        while (i + 1 < to && m->tensors[i + 1].kind == t->kind &&
               m->tensors[i + 1].shape[0] == t->shape[0] && m->tensors[i + 1].shape[1] == t->shape[1] &&
               local_name(&m->tensors[i + 1], parent)) {
            i++;
            module_label(label, sizeof label, local_name(&m->tensors[i], parent));
            size_t used = strlen(labels);
            snprintf(labels + used, sizeof labels - used, ", %s", label);
            count += m->tensors[i].size;
            n++;
        }
        char times[16] = "";
        if (n > 1) snprintf(times, sizeof times, "%d x ", n);
        if (t->kind == PARAM_GAIN)
            add_line(ls, (long long)count, "%s(%s): %sRMSNorm((%d,), eps=%g, elementwise_affine=True)",
                     indent, labels, times, t->shape[0], NORM_EPS);
        else if (t->kind == PARAM_EMBEDDING)   // the class labels' rows, the null label's last
            add_line(ls, (long long)count, "%s(%s): %sEmbedding(%d, %d)", indent, labels, times,
                     t->shape[0], t->shape[1]);
        else
            add_line(ls, (long long)count, "%s(%s): %s(%d, %d)", indent, labels, times,
                     t->shape[0], t->shape[1]);
    }
}

// The block norm (and norm_f): no affine parameters, adaLN does the scaling.
static const char *norm_name(const ModelConfig *c) {
    return c->norm == NORM_RMSNORM ? "RMSNorm" : "LayerNorm";
}

// Block 0 stands for all of them: its modules, with the block's own
// parameters (its ada Linear) last.
static void add_block(Lines *ls, const Model *m) {
    const ModelConfig *c = &m->cfg;
    int n = m->n_tensors;
    add_line(ls, (long long)count_prefix(m, "blocks"), "  (blocks): %d x Block(", c->depth);
    add_line(ls, 0, "    (norm1, norm2): 2 x %s((%d,), eps=%g, elementwise_affine=False)",
             norm_name(c), c->dim, NORM_EPS);
    // like PyTorch, a module's settings (extra_repr) open its body
    add_line(ls, (long long)count_prefix(m, "blocks.0.attn"), "    (attn): Attention(");
    add_line(ls, -1, "      heads=%d, head_dim=%d%s", c->heads, cfg_head_dim(c),
             c->pos == POS_ROPE2D ? ", rope2d" : "");
    add_params_in(ls, m, "      ", "blocks.0.attn", 0, n);
    add_line(ls, -1, "    )");
    add_line(ls, (long long)count_prefix(m, "blocks.0.mlp"), "    (mlp): MLP(");
    add_line(ls, -1, "      %s, hidden=%d", c->mlp == MLP_SWIGLU ?
             "SwiGLU: w3(silu(w1(x)) * w2(x))" : "GELU: fc2(gelu(fc1(x)))", cfg_mlp_hidden(c));
    add_params_in(ls, m, "      ", "blocks.0.mlp", 0, n);
    add_line(ls, -1, "    )");
    add_params_in(ls, m, "    ", "blocks.0", 0, n);
    // the blocks' closing line carries the count of one block
    add_line(ls, (long long)count_prefix(m, "blocks.0"), "  )")->per_block = 1;
}

void model_print_summary(const Model *m, FILE *f) {
    const ModelConfig *c = &m->cfg;
    Lines ls;          // ~14 KB of text, laid out once every line is known
    ls.n = 0;
    // the model's own parameters come before the blocks' tensors in the table
    // and after them: [0, blocks_from) and [blocks_to, n_tensors)
    int blocks_from = 0, blocks_to = 0;
    while (blocks_from < m->n_tensors && m->tensors[blocks_from].block < 0) blocks_from++;
    for (blocks_to = blocks_from; blocks_to < m->n_tensors && m->tensors[blocks_to].block >= 0; blocks_to++) {}

    add_line(&ls, -1, "TinyDiT(");
    if (c->pos == POS_ROPE2D)   // tables computed at build time, not parameters
        add_line(&ls, 0, "  (rope_cos, rope_sin): 2 x buffer (%d, %d), RoPE2d(grid=%d, base=%g)",
                 cfg_tokens(c), cfg_head_dim(c), cfg_grid(c), c->rope_base);
    add_params_in(&ls, m, "  ", "", 0, blocks_from);
    if (c->depth > 0) add_block(&ls, m);
    add_line(&ls, 0, "  (norm_f): %s((%d,), eps=%g, elementwise_affine=False)",
             norm_name(c), c->dim, NORM_EPS);
    add_params_in(&ls, m, "  ", "", blocks_to, m->n_tensors);
    add_line(&ls, -1, ")");

    // Lay out: text padded to the widest line, counts right-aligned after it;
    // the blocks' closing line says its count is per block.
    size_t tw = 0, cw = 0;
    for (int i = 0; i < ls.n; i++) {
        size_t t = strlen(ls.lines[i].text), k = strlen(ls.lines[i].count);
        if (t > tw) tw = t;
        if (k > cw) cw = k;
    }
    for (int i = 0; i < ls.n; i++) {
        const Line *l = &ls.lines[i];
        if (!l->count[0]) { fprintf(f, "%s\n", l->text); continue; }
        fprintf(f, "%-*s  %s%*s\n", (int)tw, l->text, l->per_block ? "each block " : "           ",
                (int)cw, l->count);
    }
    fprintf(f, "params: %zu\n", m->n_params);
}
