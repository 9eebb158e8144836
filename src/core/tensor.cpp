// src/core/tensor.cpp - Tensor metadata accessors, from_blob, and layout helpers.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "core/tensor_impl.hpp"
#include "phasor/creation.hpp"
#include "cuda/backend.hpp"

namespace phasor {

namespace detail {

Shape contiguous_strides(const Shape& shape) {
  Shape st(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    st[i] = s;
    s *= std::max<std::int64_t>(shape[i], 1);
  }
  return st;
}

std::int64_t shape_numel(const std::int64_t* sizes, std::size_t ndim) {
  std::int64_t n = 1;
  for (std::size_t i = 0; i < ndim; ++i) n *= sizes[i];
  return n;
}

std::int64_t shape_numel(const Shape& shape) { return shape_numel(shape.data(), shape.size()); }

std::vector<std::int64_t> element_offsets(const Shape& sizes, const Shape& strides) {
  const std::size_t nd = sizes.size();
  std::vector<std::int64_t> off(static_cast<std::size_t>(shape_numel(sizes)));
  Shape idx(nd, 0);
  std::int64_t cur = 0;
  for (auto& o : off) {
    o = cur;
    for (std::size_t d = nd; d-- > 0;) {  // odometer: bump the last dim, carry leftwards
      ++idx[d];
      cur += strides[d];
      if (idx[d] < sizes[d]) break;
      cur -= idx[d] * strides[d];
      idx[d] = 0;
    }
  }
  return off;
}

std::string shape_str(const std::int64_t* sizes, std::size_t ndim) {
  std::ostringstream os;
  os << "(";
  for (std::size_t i = 0; i < ndim; ++i) os << (i ? ", " : "") << sizes[i];
  if (ndim == 1) os << ",";
  os << ")";
  return os.str();
}

std::string shape_str(const Shape& s) { return shape_str(s.data(), s.size()); }

namespace {
/// The element count of sizes[0..ndim) when the shape is valid for `item`-byte elements (see check_shape);
/// -1 otherwise. One pass with overflow-checked products: make_tensor's hot path.
std::int64_t valid_numel(const std::int64_t* sizes, std::size_t ndim, std::size_t item) {
  std::int64_t span = 1;  // the product with zeros counted as 1: the largest contiguous stride
  bool bad = false, zero = false;
  for (std::size_t i = 0; i < ndim; ++i) {
    const std::int64_t s = sizes[i];
    bad |= s < 0 || __builtin_mul_overflow(span, s > 1 ? s : 1, &span);
    zero |= s == 0;
  }
  std::int64_t bytes = 0;
  if (bad || __builtin_mul_overflow(zero ? 0 : span, static_cast<std::int64_t>(item), &bytes)) return -1;
  return zero ? 0 : span;
}
}  // namespace

void check_shape(const Shape& shape, const char* op, std::size_t item) {
  if (valid_numel(shape.data(), shape.size(), item) >= 0) return;
  for (auto s : shape)
    if (s < 0) throw Error(op, "negative size in shape " + shape_str(shape));
  const bool zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  std::int64_t n = 1;
  for (auto s : shape)
    if (__builtin_mul_overflow(n, s > 1 ? s : 1, &n))
      throw Error(op, "shape " + shape_str(shape) + " is too large: " +
                          (zero ? "the product of its nonzero sizes (a stride)" : "its element count") +
                          " overflows int64");
  throw Error(op, "shape " + shape_str(shape) + " is too large: its " + std::to_string(n) + " elements of " +
                      std::to_string(item) + " bytes overflow int64 in bytes");
}

Tensor make_tensor(const std::int64_t* sizes, std::size_t ndim, Dtype dtype, Device device, const char* op) {
  const std::int64_t n = valid_numel(sizes, ndim, itemsize(dtype));
  if (n < 0) check_shape(Shape(sizes, sizes + ndim), op, itemsize(dtype));
  Tensor t = new_impl_with_storage(static_cast<std::size_t>(n) * itemsize(dtype), device);
  TensorImpl* impl = t.impl();
  // A recycled impl keeps its shape/stride buffers (usually of this very rank): no allocation here.
  impl->shape.resize(ndim);
  impl->strides.resize(ndim);
  std::int64_t* shape = impl->shape.data();
  std::int64_t* strides = impl->strides.data();
  std::int64_t st = 1;
  for (std::size_t i = ndim; i-- > 0;) {
    shape[i] = sizes[i];
    strides[i] = st;
    st *= sizes[i] > 1 ? sizes[i] : 1;
  }
  impl->dtype = dtype;
  return t;
}

Tensor make_tensor(const Shape& shape, Dtype dtype, Device device, const char* op) {
  return make_tensor(shape.data(), shape.size(), dtype, device, op);
}

Tensor make_view(const Tensor& base, const Shape& shape, const Shape& strides, std::int64_t offset,
                 std::optional<Dtype> dtype) {
  Tensor t = new_impl();
  TensorImpl* impl = t.impl();
  impl->storage = base.impl()->storage;
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = dtype.value_or(base.dtype());
  return t;
}

std::int64_t wrap_dim(std::int64_t d, std::int64_t ndim, const char* op) {
  const std::int64_t n = std::max<std::int64_t>(ndim, 1);  // 0-d tensors accept dim 0 and -1
  if (d < -n || d >= n)
    throw Error(op, "dim " + std::to_string(d) + " out of range for a tensor of " + std::to_string(ndim) + " dims");
  return d < 0 ? d + n : d;
}

std::vector<std::int64_t> wrap_dims(const Shape& dims, std::int64_t ndim, const char* op, bool empty_is_all) {
  std::vector<std::int64_t> out;
  if (dims.empty() && empty_is_all) {
    for (std::int64_t i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(ndim, 1)), false);
  for (auto d : dims) {
    auto w = wrap_dim(d, ndim, op);
    if (seen[static_cast<std::size_t>(w)]) throw Error(op, "dim " + std::to_string(d) + " appears more than once");
    seen[static_cast<std::size_t>(w)] = true;
    if (ndim > 0) out.push_back(w);
  }
  return out;
}

void check_cpu(const Tensor& t, const char* op) {
  if (t.device().is_cpu()) return;
  cuda::detail::check_device(t.device(), op);  // "device cuda:3 does not exist (...)" first
  throw Error(op, "no CUDA kernel yet (tensor on " + t.device().str() + "); move it with .to(Device::cpu())");
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.defined() && b.defined() && a.device() != b.device())
    throw Error(op, "expected all tensors on one device, got " + a.device().str() + " and " + b.device().str());
}

void check_not_complex(const Tensor& x, const char* op) {
  if (x.is_complex()) throw Error(op, std::string("not supported for complex tensors (got ") + dtype_name(x.dtype()) + ")");
}

void check_same_device(TensorList ts, const char* op) {
  for (std::size_t i = 1; i < ts.size(); ++i) check_same_device(ts[0], ts[i], op);
}

namespace {
/// A 0-d tensor on the host CPU that needs no gradient (Note [host scalars]).
bool host_scalar(const Tensor& t) { return t.dim() == 0 && t.device() == Device::cpu() && !t.requires_grad(); }
/// Whether t may join an elementwise op on device d.
bool joins(const Tensor& t, Device d) { return t.device() == d || (d.is_cuda() && host_scalar(t)); }
/// The mixed-devices error of an elementwise op on device d ("got <first> and <second>"); t, the operand
/// that may not join, gets a hint when it is a host scalar but for its gradient.
[[noreturn]] void throw_mixed(Device d, Device first, Device second, const Tensor& t, const char* op) {
  const bool needs_grad = d.is_cuda() && t.dim() == 0 && t.device() == Device::cpu();
  throw Error(op, "expected all tensors on one device, got " + first.str() + " and " + second.str() +
                      (needs_grad ? " (a 0-d CPU tensor joins a CUDA op only when it needs no gradient)" : ""));
}
}  // namespace

Device elementwise_device(const Tensor& a, const Tensor& b, const char* op) {
  const Device da = a.device(), db = b.device();
  if (da == db) return da;
  const Device d = db.is_cuda() ? db : da;
  if (!joins(a, d)) throw_mixed(d, da, db, a, op);
  if (!joins(b, d)) throw_mixed(d, da, db, b, op);
  return d;
}

Device elementwise_device(TensorList ts, const char* op) {
  Device d = ts[0].device();
  for (const Tensor& t : ts)
    if (t.device().is_cuda()) {
      d = t.device();
      break;
    }
  for (const Tensor& t : ts)
    if (!joins(t, d)) throw_mixed(d, d, t.device(), t, op);
  return d;
}

[[noreturn]] void throw_data_dtype_mismatch(Dtype want, Dtype have) {
  throw Error("data", std::string("requested ") + dtype_name(want) + " pointer from a tensor of dtype " +
                          dtype_name(have));
}

}  // namespace detail

namespace {
const TensorImpl& checked(const TensorImpl* p) {
  if (!p) throw Error("tensor", "use of an undefined tensor");
  return *p;
}
}  // namespace

const Shape& Tensor::shape() const { return checked(impl_).shape; }
std::int64_t Tensor::size(std::int64_t d) const { return shape()[static_cast<std::size_t>(detail::wrap_dim(d, dim(), "size"))]; }
const Shape& Tensor::strides() const { return checked(impl_).strides; }
std::int64_t Tensor::stride(std::int64_t d) const {
  return strides()[static_cast<std::size_t>(detail::wrap_dim(d, dim(), "stride"))];
}
std::int64_t Tensor::storage_offset() const { return checked(impl_).offset; }
std::int64_t Tensor::dim() const { return static_cast<std::int64_t>(checked(impl_).shape.size()); }
std::int64_t Tensor::numel() const { return checked(impl_).numel(); }
Dtype Tensor::dtype() const { return checked(impl_).dtype; }
Device Tensor::device() const { return checked(impl_).storage->device; }
void* Tensor::data_ptr() const { return checked(impl_).data(); }

bool Tensor::is_contiguous() const {
  const auto& im = checked(impl_);
  std::int64_t expect = 1;
  for (std::size_t i = im.shape.size(); i-- > 0;) {
    if (im.shape[i] == 1) continue;
    if (im.shape[i] == 0) return true;
    if (im.strides[i] != expect) return false;
    expect *= im.shape[i];
  }
  return true;
}

Scalar Tensor::item() const {
  if (numel() != 1)
    throw Error("item", "expected a tensor with one element, got shape " + detail::shape_str(shape()));
  // off the host CPU: copies the one element (as torch does); a virtual CPU device takes the same path, so
  // that it shows (to an op observer) the device-to-host copy a GPU makes
  if (device() != Device::cpu()) return detach().to(Device::cpu()).item();
  const char* p = impl_->data();
  switch (dtype()) {
    case Dtype::Bool: return Scalar(*reinterpret_cast<const bool*>(p));
    case Dtype::Int64: return Scalar(*reinterpret_cast<const std::int64_t*>(p));
    case Dtype::Float32: return Scalar(static_cast<double>(*reinterpret_cast<const float*>(p)));
    case Dtype::Float64: return Scalar(*reinterpret_cast<const double*>(p));
    case Dtype::Complex64: {
      auto c = *reinterpret_cast<const std::complex<float>*>(p);
      return Scalar(std::complex<double>(c.real(), c.imag()));
    }
    case Dtype::Complex128: return Scalar(*reinterpret_cast<const std::complex<double>*>(p));
  }
  return Scalar();
}

Tensor Tensor::from_blob(void* data, const Shape& shape, Dtype dtype, BlobDeleter deleter, Device device) {
  detail::check_shape(shape, "from_blob", phasor::itemsize(dtype));  // before the strides are computed
  return from_blob(data, shape, detail::contiguous_strides(shape), dtype, std::move(deleter), device);
}

Tensor Tensor::from_blob(void* data, const Shape& shape, const Shape& strides, Dtype dtype, BlobDeleter deleter,
                         Device device) {
  if (shape.size() != strides.size())
    throw Error("from_blob", "shape " + detail::shape_str(shape) + " and strides " + detail::shape_str(strides) +
                                 " differ in length");
  detail::check_shape(shape, "from_blob", phasor::itemsize(dtype));
  if (!data && detail::shape_numel(shape) != 0) throw Error("from_blob", "null data pointer");
  // GPU kernels load an element as one access of its full size (16 bytes for complex128): a misaligned
  // pointer would fault, and the fault is sticky (every later CUDA call fails)
  const auto item = static_cast<std::uintptr_t>(phasor::itemsize(dtype));
  if (device.is_cuda() && reinterpret_cast<std::uintptr_t>(data) % item != 0)
  {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", data);
    throw Error("from_blob", std::string("data pointer ") + addr + " is not aligned to " + std::to_string(item) +
                                 " bytes, as " + dtype_name(dtype) + " elements on " + device.str() + " need");
  }
  std::int64_t span = 1, reach = 0, bytes = 0;  // span: elements from the first to one past the last
  bool overflow = false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (strides[i] < 0) throw Error("from_blob", "negative stride in " + detail::shape_str(strides));
    if (shape[i] > 0)
      overflow |= __builtin_mul_overflow(shape[i] - 1, strides[i], &reach) || __builtin_add_overflow(span, reach, &span);
  }
  if (overflow || __builtin_mul_overflow(span, static_cast<std::int64_t>(item), &bytes))
    throw Error("from_blob", "shape " + detail::shape_str(shape) + " with strides " + detail::shape_str(strides) +
                                 " spans more bytes than an int64 can count");
  auto st = std::allocate_shared<Storage>(detail::SmallBlockAllocator<Storage>());
  st->data = data;
  st->nbytes = static_cast<std::size_t>(span) * phasor::itemsize(dtype);
  st->device = device;
  st->deleter = deleter ? std::move(deleter) : BlobDeleter([](void*) {});
  Tensor t = detail::new_impl();
  TensorImpl* impl = t.impl();
  impl->storage = std::move(st);
  impl->shape = shape;
  impl->strides = strides;
  impl->dtype = dtype;
  return t;
}

TensorIndex::TensorIndex(const Tensor& t) : v_(std::make_shared<Tensor>(t)) {}
TensorIndex::TensorIndex(bool b) : v_(std::make_shared<Tensor>(full({}, b, Dtype::Bool))) {}

}  // namespace phasor
