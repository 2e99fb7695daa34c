// Pliant: position-based simulation (PBD, XPBD, small-step XPBD). Include this for the whole API a
// user links with pliant::pliant: the core (model, state, solver, constraints, colliders,
// diagnostics), file I/O (scenes, meshes, frames, checkpoints, probes), the reference implicit solver
// and runs into an output folder. The benchmark harness (pliant/bench/benchmark.h, pliant::bench)
// and the viewer (pliant/viewer/viewer.h, pliant::viewer) are included on their own.
#pragma once

// Core
#include "pliant/bodies.h"
#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/constraints.h"
#include "pliant/diagnostics.h"
#include "pliant/error.h"
#include "pliant/geometry.h"
#include "pliant/math.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/signed_distance_grid.h"
#include "pliant/solver.h"
#include "pliant/state.h"
// I/O
#include "pliant/io/checkpoint.h"
#include "pliant/io/mesh_io.h"
#include "pliant/io/output.h"
#include "pliant/io/probes.h"
#include "pliant/io/scenes.h"
// Reference implicit solver
#include "pliant/reference/reference_solver.h"
// Runs
#include "pliant/run/run.h"
