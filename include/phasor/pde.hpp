// phasor/pde.hpp - umbrella header of phasor::pde: periodic grids and spectral operators, random
// fields and the Darcy data solver.
#pragma once
#include "phasor/pde/fields.hpp"
#include "phasor/pde/grid.hpp"
