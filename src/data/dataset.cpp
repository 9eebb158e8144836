// src/data/dataset.cpp - TensorDataset (row gathers by memcpy), Subset, random_split.
#include <cmath>
#include <cstring>

#include "core/index_ops.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/creation.hpp"
#include "phasor/data/dataset.hpp"
#include "phasor/ops.hpp"
#include "phasor/random.hpp"

namespace phasor::data {

namespace {
std::string list_str(const std::vector<std::int64_t>& v) { return phasor::detail::shape_str(v); }

void check_index(std::int64_t i, std::int64_t n, const char* op) {
  if (i < 0 || i >= n)
    throw Error(op, "index " + std::to_string(i) + " out of range for a dataset of " + std::to_string(n) + " samples");
}
}  // namespace

std::vector<Tensor> Dataset::get_batch(const std::vector<std::int64_t>& indices) const {
  if (indices.empty()) throw Error("Dataset::get_batch", "empty list of indices");
  std::vector<std::vector<Tensor>> fields;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    std::vector<Tensor> s = get(indices[k]);
    if (k == 0) fields.resize(s.size());
    if (s.size() != fields.size())
      throw Error("Dataset::get_batch", "sample " + std::to_string(indices[k]) + " has " + std::to_string(s.size()) +
                                            " fields, sample " + std::to_string(indices[0]) + " has " +
                                            std::to_string(fields.size()));
    for (std::size_t f = 0; f < s.size(); ++f) fields[f].push_back(std::move(s[f]));
  }
  std::vector<Tensor> out;
  for (auto& f : fields) out.push_back(stack(f, 0));
  return out;
}

// ---- TensorDataset --------------------------------------------------------------------------------------

TensorDataset::TensorDataset(std::vector<Tensor> tensors) {
  const char* op = "TensorDataset";
  if (tensors.empty()) throw Error(op, "needs at least one tensor");
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    if (!t.defined()) throw Error(op, "tensor " + std::to_string(k) + " is undefined");
    if (t.dim() == 0) throw Error(op, "tensor " + std::to_string(k) + " is 0-d; samples are rows along dim 0");
    if (t.size(0) != tensors[0].size(0)) {
      std::string shapes;
      for (const auto& u : tensors) shapes += (shapes.empty() ? "" : ", ") + phasor::detail::shape_str(u.shape());
      throw Error(op, "tensors differ in size along dim 0: " + shapes);
    }
  }
  size_ = tensors[0].size(0);
  for (auto& t : tensors) tensors_.push_back(t.detach().contiguous());
}

std::vector<Tensor> TensorDataset::get(std::int64_t i) const {
  check_index(i, size_, "TensorDataset::get");
  std::vector<Tensor> out;
  for (const auto& t : tensors_) out.push_back(t.select(0, i));
  return out;
}

std::vector<Tensor> TensorDataset::get_batch(const std::vector<std::int64_t>& indices) const {
  const char* op = "TensorDataset::get_batch";
  if (indices.empty()) throw Error(op, "empty list of indices");
  for (auto i : indices) check_index(i, size_, op);
  const auto b = static_cast<std::int64_t>(indices.size());
  std::vector<Tensor> out;
  Tensor on_device;  // the indices, uploaded once per device; checked above, so the GPU's select does not wait
  for (const auto& t : tensors_) {
    if (!t.device().is_cpu()) {
      if (!on_device.defined() || on_device.device() != t.device()) on_device = from_vector(indices).to(t.device());
      out.push_back(::phasor::detail::index_select_trusted(t, 0, on_device));
      continue;
    }
    Shape shape = t.shape();
    shape[0] = b;
    Tensor o = empty(shape, t.dtype(), t.device());  // any CPU device (set_cpu_device_count)
    const std::size_t row = size_ ? t.nbytes() / static_cast<std::size_t>(size_) : 0;
    if (row > 0) {
      const char* src = static_cast<const char*>(t.data_ptr());
      char* dst = static_cast<char*>(o.data_ptr());
      // One memcpy per run of consecutive rows.
      for (std::int64_t k = 0; k < b;) {
        std::int64_t r = 1;
        while (k + r < b && indices[k + r] == indices[k] + r) ++r;
        std::memcpy(dst + k * row, src + indices[k] * row, static_cast<std::size_t>(r) * row);
        k += r;
      }
    }
    out.push_back(o);
  }
  return out;
}

// ---- Subset ---------------------------------------------------------------------------------------------

Subset::Subset(std::shared_ptr<const Dataset> base, std::vector<std::int64_t> indices)
    : base_(std::move(base)), indices_(std::move(indices)) {
  if (!base_) throw Error("Subset", "null dataset");
  const std::int64_t n = base_->size();
  for (auto i : indices_) check_index(i, n, "Subset");
}

std::vector<Tensor> Subset::get(std::int64_t i) const {
  check_index(i, size(), "Subset::get");
  return base_->get(indices_[static_cast<std::size_t>(i)]);
}

std::vector<Tensor> Subset::get_batch(const std::vector<std::int64_t>& indices) const {
  std::vector<std::int64_t> mapped;
  mapped.reserve(indices.size());
  for (auto i : indices) {
    check_index(i, size(), "Subset::get_batch");
    mapped.push_back(indices_[static_cast<std::size_t>(i)]);
  }
  return base_->get_batch(mapped);
}

// ---- random_split ---------------------------------------------------------------------------------------

std::vector<Subset> random_split(std::shared_ptr<const Dataset> dataset, const std::vector<std::int64_t>& lengths,
                                 std::uint64_t seed) {
  const char* op = "random_split";
  if (!dataset) throw Error(op, "null dataset");
  const std::int64_t n = dataset->size();
  std::int64_t total = 0;
  for (auto l : lengths) {
    if (l < 0) throw Error(op, "negative length in " + list_str(lengths));
    total += l;
  }
  if (total != n)
    throw Error(op, "lengths " + list_str(lengths) + " sum to " + std::to_string(total) + " but the dataset has " +
                        std::to_string(n) + " samples");
  Generator gen(seed);
  const std::vector<std::int64_t> perm = to_vector<std::int64_t>(randperm(n, int64, Device::cpu(), &gen));
  std::vector<Subset> out;
  std::int64_t at = 0;
  for (auto l : lengths) {
    out.emplace_back(dataset, std::vector<std::int64_t>(perm.begin() + at, perm.begin() + at + l));
    at += l;
  }
  return out;
}

std::vector<Subset> random_split_fractions(std::shared_ptr<const Dataset> dataset, const std::vector<double>& fractions,
                                           std::uint64_t seed) {
  const char* op = "random_split_fractions";
  if (!dataset) throw Error(op, "null dataset");
  double sum = 0;
  std::string text;
  for (double f : fractions) text += (text.empty() ? "" : ", ") + std::to_string(f);
  for (double f : fractions) {
    if (!(f >= 0 && f <= 1)) throw Error(op, "fractions must lie in [0, 1], got (" + text + ")");
    sum += f;
  }
  if (std::abs(sum - 1.0) > 1e-6) throw Error(op, "fractions (" + text + ") sum to " + std::to_string(sum) + ", not 1");
  const std::int64_t n = dataset->size();
  std::vector<std::int64_t> lengths;
  std::int64_t total = 0;
  for (double f : fractions) {
    lengths.push_back(static_cast<std::int64_t>(std::floor(f * static_cast<double>(n))));
    total += lengths.back();
  }
  for (std::size_t k = 0; total < n && !lengths.empty(); k = (k + 1) % lengths.size(), ++total) ++lengths[k];
  return random_split(std::move(dataset), lengths, seed);
}

}  // namespace phasor::data
