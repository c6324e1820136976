// grid.h: step 7's grid of samples, its model and its size; here apart
// from step7.h because lab estimate counts the grid's time too.
#pragma once

#define SHIPPED_C10 "models/tinydit_c10_recipe.safetensors"
#define GRID_W_COUNT 5
#define GRID_STEPS 20              // Euler steps of the grid's samples, as the scorecard's
