// attention_maps.h: where trained models look (attention_maps.c), the
// `attention-maps` command of step6_ablation, which draws the page's
// step6_attention_*.png.
#pragma once
#include "nn/model.h"

// argv[0] is the command's name: 0 done, 2 a bad command line, 1 otherwise.
int cmd_attention_maps(int argc, char **argv);

#define ATT_MAX_LAYERS 16
#define ATT_MAX_GRID 16
#define ATT_MAX_OFFSETS ((2 * ATT_MAX_GRID - 1) * (2 * ATT_MAX_GRID - 1))

// The mean attention of one model's layers over a batch, in units of the even
// share 1/L (1 = no preference).
typedef struct {
    int depth, grid;
    // offsets[l][(dy + g - 1) * (2g - 1) + (dx + g - 1)]: the attention of a
    // query to the key dy rows and dx columns away, averaged over the queries
    // that have one, the images and the heads
    float offsets[ATT_MAX_LAYERS][ATT_MAX_OFFSETS];
    // centre[l][row * g + col]: the attention of the centre patch (g/2, g/2)
    float centre[ATT_MAX_LAYERS][ATT_MAX_GRID * ATT_MAX_GRID];
    double self[ATT_MAX_LAYERS];      // mean attention of a query to itself (a probability)
    double distance[ATT_MAX_LAYERS];  // mean attention-weighted distance to the keys, in patches
    double uniform_distance;          // the same with even attention
} AttentionMaps;

// From the softmax probabilities that model_forward left in a->att[l].att
// (N, H, L, L) for every layer l.
void attention_maps_compute(const Model *m, const Activations *a, AttentionMaps *out);
