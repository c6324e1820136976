// tables.h: what step 5's sections measure beside their lesson (tables.c).
#pragma once
#include "step5.h"
#include "nn/model.h"

enum { NBASES = 2 };   // section 3's bases: the model's and the usual 10,000

// Section 2: a rotation keeps lengths: q turned to every one of the grid's
// slots keeps |q| (printed).
void rotation_keeps_lengths(const Step5 *s);

// Section 3: the turn (radians) of each row pair across the grid for both
// bases, as a table in degrees; counts in slow[b] the pairs that turn less
// than 10 degrees.
void turn_table(const Step5 *s, const float *bases, double turn[][64], int *slow);

// Section 4: the tables with n_prefix tokens first. The largest |cos - 1| and
// |sin| of the prefix rows, how far rope_forward moves q as the prefix token
// and at the grid slot (tok_row, tok_col), and the largest difference of the
// grid's rows to the tables without prefix.
typedef struct { double cos_off, sin_off, prefix_moved, slot_moved, grid_diff; } PrefixCheck;
PrefixCheck prefix_check(const Step5 *s, int n_prefix);

// Section 5: the model's parameters with learned positions (learned, built
// from cfg) and with rope (pos=rope2d): which tensors hold the positions.
void position_params_table(const ModelConfig *cfg, const ModelConfig *rope, const Model *learned);
