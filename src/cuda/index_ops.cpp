// src/cuda/index_ops.cpp - builds the operands of the along-dim kernels (cuda/index.cu) from tensors
// as the CPU's for_each_line does (views whose indexed dim has size 1, coalesced by the CPU engine's
// loop builder), and launches them and the random fills on the current stream.
#include "cuda/index_ops.hpp"

#include <algorithm>
#include <utility>

#include "core/tensor_impl.hpp"
#include "cuda/backend.hpp"
#include "phasor/creation.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/graph.hpp"
#include "cuda/index.hpp"
#include "cuda/launch.hpp"
#endif

namespace phasor::cuda::detail {

using ::phasor::detail::ScatterKind;

#if PHASOR_WITH_CUDA
namespace {

/// t viewed with `shape`'s sizes (dim d set to 1) and its own strides.
Tensor line_view(const Tensor& t, Shape shape, std::int64_t d) {
  shape[static_cast<std::size_t>(d)] = 1;
  return ::phasor::detail::make_view(t, shape, t.strides(), t.storage_offset());
}

/// Runs `op` over the positions of `shape` (all dims but d) for out, data and (gather/scatter) index.
void run(AlongOp op, const char* name, const Tensor& out, const Tensor& data, const Tensor* index, std::int64_t d,
         const Shape& shape, std::int64_t steps, const Tensor* index_values, std::int64_t wrap,
         const std::uint64_t* checks, ScatterKind kind = ScatterKind::Sum) {
  const Tensor ov = line_view(out, shape, d), dv = line_view(data, shape, d);
  AlongDim a;
  if (index) {
    const Tensor iv = line_view(*index, shape, d);
    a.pos = operands({&ov, &dv, &iv}, name);
  } else {
    a.pos = operands({&ov, &dv}, name);
  }
  a.steps = steps;
  a.checks = checks;
  a.kind = kind;
  a.positions = Divisor(std::max<std::int64_t>(a.pos.numel, 1), fits_fast_div(a.pos.numel * steps));
  const auto ds = static_cast<std::size_t>(d);
  a.step[0] = out.strides()[ds] * static_cast<std::int64_t>(itemsize(out.dtype()));
  a.step[1] = data.strides()[ds] * static_cast<std::int64_t>(itemsize(data.dtype()));
  if (index) a.step[2] = index->strides()[ds] * static_cast<std::int64_t>(sizeof(std::int64_t));
  if (index_values) {
    ::phasor::detail::check_same_device(out, *index_values, name);
    a.index = static_cast<const std::int64_t*>(index_values->data_ptr());
    a.wrap = wrap;
  }
  // a replacement over few long lines: zeroed slots for its parallel passes (Note [parallel replacement] in
  // index.cu), from the stream's pool like the index
  Tensor winners;
  const std::int64_t targets = out.size(d);
  if (kind == ScatterKind::Replace && op != AlongOp::select && op != AlongOp::gather && parallel_steps(a.pos.numel, steps) &&
      a.pos.numel * targets <= kMaxWinners && steps < 0xffffffffLL) {
    winners = zeros({(a.pos.numel * targets + 1) / 2}, Dtype::Int64, out.device());  // 4-byte slots
    a.winners = static_cast<unsigned*>(winners.data_ptr());
    a.targets = targets;
  }
  Launch l(out);
  if (!along_dim(op, out.dtype(), a, l.stream)) no_kernel(name, out.dtype());
}

}  // namespace

// The index tensor may be a temporary of the caller: freed after the launch, its memory goes back to the
// stream's pool and is reused only by later work on that stream.
void index_select(const Tensor& out, const Tensor& x, std::int64_t d, const Tensor& index, std::int64_t wrap,
                  const std::uint64_t* checks) {
  if (out.numel() == 0) return;
  run(AlongOp::select, "index_select", out, x, nullptr, d, out.shape(), index.numel(), &index, wrap, checks);
}

void index_add(const Tensor& out, const Tensor& src, std::int64_t d, const Tensor& index, std::int64_t wrap,
               const std::uint64_t* checks, ScatterKind kind) {
  if (src.numel() == 0) return;
  run(AlongOp::add, "index_add", out, src, nullptr, d, src.shape(), index.numel(), &index, wrap, checks, kind);
}

void gather(const Tensor& out, const Tensor& x, std::int64_t d, const Tensor& index, const std::uint64_t* checks) {
  if (out.numel() == 0) return;
  run(AlongOp::gather, "gather", out, x, &index, d, index.shape(), index.size(d), nullptr, 0, checks);
}

void scatter_add(const Tensor& out, const Tensor& src, std::int64_t d, const Tensor& index,
                 const std::uint64_t* checks, ScatterKind kind) {
  if (index.numel() == 0) return;
  run(AlongOp::scatter_add, "scatter_add", out, src, &index, d, index.shape(), index.size(d), nullptr, 0, checks, kind);
}

void sort_lines(const Tensor& rows, const Tensor& out, std::int64_t n, bool descending) {
  check_device(out.device(), "sort");
  std::int64_t p = 1;
  while (p < n) p *= 2;
  const std::int64_t lines = rows.numel() / n;
  // scratch from the stream's pool: freed after the launches, reused only by later work on that stream
  const Tensor keys = ::phasor::detail::make_tensor({lines, p}, rows.dtype(), out.device());
  const Tensor pos = ::phasor::detail::make_tensor({lines, p}, Dtype::Int64, out.device());
  Launch l(out);
  if (!cuda::sort_lines(rows.dtype(), rows.data_ptr(), keys.data_ptr(), static_cast<std::int64_t*>(pos.data_ptr()),
                        static_cast<std::int64_t*>(out.data_ptr()), lines, n, p, descending, l.stream))
    no_kernel("sort", rows.dtype());
}

void search_sorted(const Tensor& seq, const Tensor& values, const Tensor& out, std::int64_t m, std::int64_t k,
                   bool right) {
  check_device(out.device(), "searchsorted");
  Launch l(out);
  if (!cuda::search_sorted(seq.dtype(), seq.data_ptr(), values.data_ptr(), static_cast<std::int64_t*>(out.data_ptr()),
                           out.numel(), m, k, right, l.stream))
    no_kernel("searchsorted", seq.dtype());
}

const std::uint64_t* check_index_on_device(const Tensor& index, std::int64_t lo, std::int64_t hi, const char* op,
                                           std::string prefix, std::string suffix) {
  if (!index.device().is_cuda() || index.numel() == 0) return nullptr;
  std::uint64_t id = 0;
  CheckReport report = [prefix = std::move(prefix), suffix = std::move(suffix)](std::uint64_t, std::uint64_t value) {
    return prefix + std::to_string(static_cast<std::int64_t>(value)) + suffix;
  };
  std::uint64_t* words = device_check(index.device(), op, std::move(report), id);
  if (!words) return nullptr;  // checked on the host
  const Operands o = operands({&index}, op);
  Launch l(index);
  check_index_range(o, lo, hi, id, words, l.stream);
  return words;
}

bool check_flag_on_device(const Tensor& bad, const Tensor& a, const Tensor& b, const char* op, CheckReport report) {
  if (!bad.device().is_cuda()) return false;
  std::uint64_t id = 0;
  std::uint64_t* words = device_check(bad.device(), op, std::move(report), id);
  if (!words) return false;  // checked on the host
  const auto bits = [](const Tensor& t) {
    return t.defined() ? static_cast<const std::uint64_t*>(t.data_ptr()) : nullptr;
  };
  Launch l(bad);
  queue_flag_check(static_cast<const bool*>(bad.data_ptr()), bits(a), bits(b), id, words, l.stream);
  return true;
}

void random_fill(RandomKind kind, const Tensor& t, std::int64_t n, const Counters& c, double scale, std::int64_t low,
                 std::uint64_t range) {
  check_device(t.device(), "random");
  Launch l(t);
  cuda::random_fill(kind, to_real(t.dtype()), t.data_ptr(), n, c, scale, low, range, l.stream);
}

#else  // CPU-only build

void index_select(const Tensor& out, const Tensor&, std::int64_t, const Tensor&, std::int64_t, const std::uint64_t*) {
  no_cuda_backend("index_select", out.device());
}
void index_add(const Tensor& out, const Tensor&, std::int64_t, const Tensor&, std::int64_t, const std::uint64_t*,
               ScatterKind) {
  no_cuda_backend("index_add", out.device());
}
void gather(const Tensor& out, const Tensor&, std::int64_t, const Tensor&, const std::uint64_t*) {
  no_cuda_backend("gather", out.device());
}
void scatter_add(const Tensor& out, const Tensor&, std::int64_t, const Tensor&, const std::uint64_t*, ScatterKind) {
  no_cuda_backend("scatter_add", out.device());
}
const std::uint64_t* check_index_on_device(const Tensor&, std::int64_t, std::int64_t, const char*, std::string,
                                           std::string) {
  return nullptr;
}
void sort_lines(const Tensor&, const Tensor& out, std::int64_t, bool) { no_cuda_backend("sort", out.device()); }
void search_sorted(const Tensor&, const Tensor&, const Tensor& out, std::int64_t, std::int64_t, bool) {
  no_cuda_backend("searchsorted", out.device());
}
bool check_flag_on_device(const Tensor&, const Tensor&, const Tensor&, const char*, CheckReport) { return false; }
void random_fill(RandomKind, const Tensor& t, std::int64_t, const Counters&, double, std::int64_t, std::uint64_t) {
  no_cuda_backend("random", t.device());
}

#endif

}  // namespace phasor::cuda::detail
