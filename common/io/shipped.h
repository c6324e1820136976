// shipped.h: the models committed in models/ (each beside its .sha256), by
// their paths from the project root (paths.h: project_path), and what the
// steps do with them that the lab's estimate counts too.
#pragma once

#define SHIPPED_MODEL "models/tinydit_rope_tutorial.safetensors"   // the tutorial's model: steps 0 and 8
#define SHIPPED_C10 "models/tinydit_c10_recipe.safetensors"        // class-conditional: step 7

// Step 7's grid of SHIPPED_C10's samples: a column per guidance scale.
#define GRID_W_COUNT 5
#define GRID_STEPS 20              // Euler steps of the grid's samples, as the scorecard's
