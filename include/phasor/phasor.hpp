// phasor/phasor.hpp - umbrella header: everything public.
#pragma once
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/device.hpp"
#include "phasor/dispatch.hpp"
#include "phasor/dtype.hpp"
#include "phasor/error.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"
#include "phasor/random.hpp"
#include "phasor/scalar.hpp"
#include "phasor/tensor.hpp"
#include "phasor/version.hpp"
