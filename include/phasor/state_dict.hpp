// phasor/state_dict.hpp - the flat name -> tensor map that modules, optimizers and checkpoints share.
#pragma once
#include <map>
#include <string>

#include "phasor/tensor.hpp"

namespace phasor {

/// Named tensors (dotted names such as "layers.0.weight"), as produced by Module::state_dict,
/// Optimizer::state_dict and read/written by the io functions. Sorted by name.
using StateDict = std::map<std::string, Tensor>;

}  // namespace phasor
