#pragma once
// The plot writer moved to the runtime library: ingot/PngPlot.h.
#include "ingot/PngPlot.h"
