// phasor/io.hpp - tensors to and from files: NumPy .npy/.npz, safetensors, training checkpoints.
//
// Every writer is atomic: it writes a temporary file in the target's directory, flushes and fsyncs
// it, renames it over the target and fsyncs the directory, so a crash or an error mid-write leaves
// the previous file intact and no temporary file behind. Every reader validates the whole file
// (magic, header, sizes, offsets, CRCs) and throws phasor::Error naming the op, the path and the
// problem for missing, truncated, corrupt or unsupported files; it never reads out of bounds.
#pragma once
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "phasor/state_dict.hpp"
#include "phasor/tensor.hpp"

namespace phasor::io {

/// String key -> string value metadata stored in a safetensors header ("__metadata__").
using Metadata = std::map<std::string, std::string>;
/// An ordered list of (name, tensor) pairs; names must be unique and non-empty.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// ---- NumPy ----------------------------------------------------------------------------------------
/// Writes `t` as a NumPy .npy file (format 1.0, or 2.0 for huge headers; little-endian, C order).
/// Any layout is accepted (non-contiguous tensors are written in row-major order); autograd is ignored.
void save_npy(const std::string& path, const Tensor& t);
/// Reads a .npy file (format 1.0/2.0/3.0, C or Fortran order) into a new contiguous CPU tensor.
/// bool/int64/float32/float64/complex64/complex128 load as such; other integer types (int8..int32,
/// uint8..uint32, uint64 when every value fits) load as int64, float16 as float32; big-endian is swapped.
Tensor load_npy(const std::string& path);
/// Writes named tensors as a NumPy .npz archive (entries "<name>.npy"), deflated when `compressed`.
void save_npz(const std::string& path, const NamedTensors& tensors, bool compressed = false);
/// Writes a StateDict as a NumPy .npz archive (entries in name order), deflated when `compressed`.
void save_npz(const std::string& path, const StateDict& tensors, bool compressed = false);
/// Writes `{{"x", x}, {"y", y}}` as a .npz archive in the order given (resolves the brace-list ambiguity).
inline void save_npz(const std::string& path, std::initializer_list<std::pair<std::string, Tensor>> tensors,
                     bool compressed = false) {
  save_npz(path, NamedTensors(tensors.begin(), tensors.end()), compressed);
}
/// Reads a .npz archive (stored or deflated entries, zip64 too); keys are entry names without ".npy".
StateDict load_npz(const std::string& path);

// ---- safetensors ----------------------------------------------------------------------------------
/// Writes a safetensors file: little-endian u64 header length, JSON header, row-major tensor bytes.
/// Complex tensors are stored as their real view (trailing dim 2, F32/F64) and listed in the metadata
/// key "phasor.complex" (reserved), so load_safetensors restores them and PyTorch reads them too.
void save_safetensors(const std::string& path, const StateDict& tensors, const Metadata& metadata = {});
/// Reads a safetensors file (BOOL, I64, F32, F64 as such; U8/I8/I16/U16/I32/U32 and U64 that fits as
/// int64; F16/BF16 as float32); `metadata`, if given, receives "__metadata__" minus phasor's own keys.
StateDict load_safetensors(const std::string& path, Metadata* metadata = nullptr);

// ---- checkpoints ----------------------------------------------------------------------------------
/// The contents of a training checkpoint.
struct Checkpoint {
  StateDict model;      ///< Module::state_dict() entries (without the "model." prefix)
  StateDict optimizer;  ///< Optimizer::state_dict() entries (without the "optimizer." prefix)
  Metadata metadata;    ///< user metadata (epoch, notes, ...)
};
/// Writes model and optimizer state into one safetensors file, keys prefixed "model." and
/// "optimizer.", atomically (a crash mid-write keeps the previous checkpoint).
void save_checkpoint(const std::string& path, const StateDict& model_state, const StateDict& optimizer_state,
                     const Metadata& metadata = {});
/// Reads a checkpoint written by save_checkpoint (any other top-level key is an error).
Checkpoint load_checkpoint(const std::string& path);

}  // namespace phasor::io
