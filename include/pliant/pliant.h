// Pliant: position-based simulation (PBD, XPBD, small-step XPBD). Include this for the whole API.
#pragma once

#include "pliant/benchmark.h"
#include "pliant/builders.h"
#include "pliant/constraints.h"
#include "pliant/diagnostics.h"
#include "pliant/error.h"
#include "pliant/geometry.h"
#include "pliant/math.h"
#include "pliant/model.h"
#include "pliant/reference_solver.h"
#include "pliant/scenes.h"
#include "pliant/solver.h"
#include "pliant/state.h"
