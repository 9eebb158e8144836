// phasor/pde.hpp - umbrella header of phasor::pde: periodic grids and spectral operators, random
// fields, the Darcy data solver, time steppers and equations.
#pragma once
#include "phasor/pde/fields.hpp"
#include "phasor/pde/grid.hpp"
#include "phasor/pde/solve.hpp"
