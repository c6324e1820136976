// spikes.h: the scorecard's "loss spikes": steps whose training
// loss exceeds 1.5 × the median of the previous 100 steps.
//
// The rule, precisely (window W = 100, factor F = 1.5, steps counted from 0):
//   - step i is judged only once it has a full window: i >= W. The first W
//     steps are never spikes, however large, because the loss at the start
//     of training falls fast and a short window would have no stable
//     baseline to compare with. (A run of W steps or fewer has 0 spikes.)
//   - step i >= W is a spike when loss[i] > F · median(loss[i−W] … loss[i−1]).
//     The median of an even count is the mean of the two middle values, as
//     numpy.median computes it. The window is the raw losses, spikes included.
//   - a loss that is not finite (NaN or ±inf) at a judged step is a spike: a
//     blown-up run must not score 0. Inside a window, NaN and +inf rank above
//     every finite value (so a few of them barely move the median).
// The median rather than the mean makes the baseline immune to the spikes
// it is looking for.
#pragma once

#define SPIKE_WINDOW 100
#define SPIKE_FACTOR 1.5f

// The spikes in loss (n) by the rule above; -1 when out of memory.
int count_loss_spikes(const float *loss, int n);
