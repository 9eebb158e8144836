// src/cuda/elementwise_ops.cuh - the elementwise engine's device side (Note [cuda elementwise] in
// elementwise.hpp): per-op device arithmetic, dtype conversion on load and store, a flat kernel for
// same-dtype contiguous (or single broadcast element) operands and a general strided one, and the op
// tables by the CPU op's name. Included only by the elementwise*.cu files, which instantiate the tables
// for their share of the compute dtypes (Note [elementwise translation units]).
//
// Note [elementwise translation units]
// Every op x compute dtype is a flat and a strided kernel, about 480 in all: in one file they took about
// 90 s in nvcc and 100 s in g++ with sanitizers (the emulation build), the longest compile of either
// build and, in the emulation build, nearly all of its critical path. Three files instantiate the tables
// for a share each, so they compile in parallel: elementwise.cu unary ops on bool, int64 and real
// dtypes (and fill, ramp); elementwise_binary.cu binary ops on those and where on all; and
// elementwise_complex.cu unary and binary ops on complex dtypes. The public unary() and binary() pick
// the file by the compute dtype. Everything here is internal to each including file (an anonymous
// namespace): each file's kernels are its own.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cuda/std/limits>
#include <cstring>
#include <string>
#include <type_traits>

#include "core/bitwise_rules.hpp"
#include "core/complex_math.hpp"
#include "core/polynomial_rules.hpp"
#include "core/pow_rules.hpp"
#include "core/real_binary_rules.hpp"
#include "core/special_rules.hpp"
#include "cuda/device_types.cuh"
#include "cuda/elementwise.hpp"
#include "cuda/launch.cuh"
#include "nn/activation_rules.hpp"
#include "phasor/error.hpp"

namespace phasor::cuda {

namespace detail {
/// unary() and binary() for complex compute dtypes (elementwise_complex.cu).
bool unary_complex(const char* op, Dtype compute, const Operands& o, double p0, double p1, void* stream);
bool binary_complex(const char* op, Dtype compute, const Operands& o, double alpha, void* stream);
}  // namespace detail

namespace {

using ::phasor::detail::cdiv;
using ::phasor::detail::convert;
using ::phasor::detail::wrap_add;
using ::phasor::detail::wrap_mul;
using ::phasor::detail::wrap_neg;
using ::phasor::detail::wrap_sub;
template <class T> inline constexpr bool is_cplx_v = ::phasor::detail::is_complex_v<T>;
template <class T> using real_t = ::phasor::detail::real_t<T>;
template <class T> inline constexpr bool is_float_v = ::phasor::detail::is_real_float_v<T>;

/// The element at p (of dtype t) converted to C (on the host too: an input given by value).
template <class C>
__host__ __device__ __forceinline__ C load(const char* p, Dtype t) {
  switch (t) {
    case Dtype::Bool: return convert<C>(*reinterpret_cast<const bool*>(p));
    case Dtype::Int64: return convert<C>(*reinterpret_cast<const std::int64_t*>(p));
    case Dtype::Float32: return convert<C>(*reinterpret_cast<const float*>(p));
    case Dtype::Float64: return convert<C>(*reinterpret_cast<const double*>(p));
    case Dtype::Complex64: return convert<C>(*reinterpret_cast<const c64*>(p));
    case Dtype::Complex128: break;
  }
  return convert<C>(*reinterpret_cast<const c128*>(p));
}

/// Stores v (of type V) at p as dtype t.
template <class V>
__device__ __forceinline__ void store(char* p, Dtype t, const V& v) {
  switch (t) {
    case Dtype::Bool: *reinterpret_cast<bool*>(p) = convert<bool>(v); return;
    case Dtype::Int64: *reinterpret_cast<std::int64_t*>(p) = convert<std::int64_t>(v); return;
    case Dtype::Float32: *reinterpret_cast<float*>(p) = convert<float>(v); return;
    case Dtype::Float64: *reinterpret_cast<double*>(p) = convert<double>(v); return;
    case Dtype::Complex64: *reinterpret_cast<c64*>(p) = convert<c64>(v); return;
    case Dtype::Complex128: *reinterpret_cast<c128*>(p) = convert<c128>(v); return;
  }
}

// ---- kernels ----------------------------------------------------------------------------------------------
/// Elements each thread of the flat kernel loads before it computes (its grid has a quarter of the threads).
constexpr int kFlatUnroll = 4;

/// f applied to the first N of (x, y, z).
template <int N, class F, class T>
__device__ __forceinline__ auto apply(const F& f, const T& x, const T& y, const T& z) {
  if constexpr (N == 1) return f(x);
  else if constexpr (N == 2) return f(x, y);
  else return f(x, y, z);
}

/// The inputs of one element, loaded before it is computed (stride_fold's unit).
template <class T>
struct Loaded {
  T x, y, z;
};

/// Loads input k of the flat kernel: p[j * step].
template <class T>
struct FromPointer {
  const T* p;
  std::int64_t step;
  __device__ __forceinline__ T operator()(std::int64_t j) const { return p[j * step]; }
};
/// An input of the flat kernel given by value (a host scalar, Note [cuda elementwise]).
template <class T>
struct FromValue {
  T v;
  __device__ __forceinline__ T operator()(std::int64_t) const { return v; }
};

/// out[j] = f(la(j), lb(j), lc(j)) over the grid, kFlatUnroll elements' inputs loaded before any is computed.
template <int N, class T, class Out, class F, class LA, class LB, class LC>
__device__ __forceinline__ void flat_loop(Out* out, std::int64_t n, const F& f, const LA& la, const LB& lb, const LC& lc) {
  stride_fold<kFlatUnroll>(
      grid_start(), n, grid_step(),
      [&](std::int64_t j) {
        Loaded<T> v{};
        v.x = la(j);
        if constexpr (N >= 2) v.y = lb(j);
        if constexpr (N >= 3) v.z = lc(j);
        return v;
      },
      [&](const Loaded<T>& v, std::int64_t j) { out[j] = apply<N>(f, v.x, v.y, v.z); });
}

/// Same-dtype contiguous operands: out[i] = f(a[i * sa], b[i * sb], c[i * sc]), T everywhere; an input's
/// step is 1, or 0 for a single element broadcast to all (a 0-d operand); a null input is the value in
/// `val` (x, y, z for a, b, c: a host scalar, Note [cuda elementwise]), at most one of them. Each case is
/// a loop of its own, so the loop over pointers is the plain one (testing the pointers per element took
/// flat add from 32 to 56 registers). Each thread loads the inputs of kFlatUnroll elements (a grid step
/// apart, so every load stays coalesced across the warp) before it computes and stores any (Note [loads in
/// flight]). In-place use with an input that is the output itself (x.add_(y), x.mul_(x)) is fine: a thread
/// reads each of its elements before writing it; partial overlaps are refused before any launch.
template <int N, class T, class Out, class F>
__global__ void flat_kernel(Out* out, const T* a, const T* b, const T* c, std::int64_t sa, std::int64_t sb,
                            std::int64_t sc, std::int64_t n, Loaded<T> val, F f) {
  const FromPointer<T> pa{a, sa}, pb{b, sb}, pc{c, sc};
  if (N >= 2 && !a) flat_loop<N, T>(out, n, f, FromValue<T>{val.x}, pb, pc);
  else if (N >= 2 && !b) flat_loop<N, T>(out, n, f, pa, FromValue<T>{val.y}, pc);
  else if (N >= 3 && !c) flat_loop<N, T>(out, n, f, pa, pb, FromValue<T>{val.z});
  else flat_loop<N, T>(out, n, f, pa, pb, pc);
}

/// Loads an input of C's real type for the mixed flat kernel: p[j * step] widened to C.
template <class C>
struct FromReal {
  const real_t<C>* p;
  std::int64_t step;
  __device__ __forceinline__ C operator()(std::int64_t j) const { return C(p[j * step]); }
};

/// flat_kernel for a complex C whose inputs mix C and its real type (Note [mixed flat kernel]): bit k - 1 of
/// `real` says input k (a, b, c) holds the real type; every input is contiguous (step 1) or one element
/// broadcast (step 0). Each mask is a loop of its own, as flat_kernel's cases are.
template <int N, class C, class F>
__global__ void flat_mixed_kernel(C* out, const void* a, const void* b, const void* c, std::int64_t sa,
                                  std::int64_t sb, std::int64_t sc, std::int64_t n, unsigned real, F f) {
  using R = real_t<C>;
  const FromPointer<C> ca{static_cast<const C*>(a), sa}, cb{static_cast<const C*>(b), sb};
  const FromReal<C> ra{static_cast<const R*>(a), sa}, rb{static_cast<const R*>(b), sb};
  if constexpr (N == 2) {
    if (real == 1) flat_loop<N, C>(out, n, f, ra, cb, cb);
    else if (real == 2) flat_loop<N, C>(out, n, f, ca, rb, rb);
    else flat_loop<N, C>(out, n, f, ra, rb, rb);
  } else {
    const FromPointer<C> cc{static_cast<const C*>(c), sc};
    const FromReal<C> rc{static_cast<const R*>(c), sc};
    switch (real) {
      case 1: flat_loop<N, C>(out, n, f, ra, cb, cc); break;
      case 2: flat_loop<N, C>(out, n, f, ca, rb, cc); break;
      case 3: flat_loop<N, C>(out, n, f, ra, rb, cc); break;
      case 4: flat_loop<N, C>(out, n, f, ca, cb, rc); break;
      case 5: flat_loop<N, C>(out, n, f, ra, cb, rc); break;
      case 6: flat_loop<N, C>(out, n, f, ca, rb, rc); break;
      default: flat_loop<N, C>(out, n, f, ra, rb, rc); break;
    }
  }
}

// Note [mixed flat kernel]
// A real operand next to complex ones of its precision is common in spectral code: a real multiplier (a
// Laplacian's symbol, ETDRK4's coefficients, a window) times a complex spectrum, as mul or addcmul. With one
// dtype per flat kernel such an op took the strided kernel (offsets from the linear index, every load
// converted through a dtype switch: for addcmul in complex128, 96 registers). The arithmetic ops that take
// such operands (mixed_flat: add, sub, mul, div, addcmul, addcdiv, lerp) have a second flat kernel,
// flat_mixed_kernel, with a loop for each mask of real inputs (one loader per input: a loader that tested a
// per-input flag per element took addcmul's to 138 registers). It takes inputs in device memory only: a host
// value next to a real input, or other mixes (a float32 operand next to complex128, an int64 one) still
// take the strided kernel.
template <class F>
struct mixed_flat : std::false_type {};

/// Any layout and dtypes: offsets from the linear index, inputs converted to C, the result stored as the
/// output's dtype; kFlatUnroll elements' inputs loaded before any is computed, as in flat_kernel. An input
/// with a null pointer is its value in `val`, tested per element here (a loop per case, as in flat_kernel,
/// took the float64 kernels from 64 to 70 registers, the test to 66).
template <int N, class C, class F>
__global__ void strided_kernel(Operands o, Loaded<C> val, F f) {
  struct Element {
    std::int64_t out;  // the output's byte offset
    C x, y, z;
  };
  stride_fold<kFlatUnroll>(
      grid_start(), o.numel, grid_step(),
      [&](std::int64_t i) {
        std::int64_t off[N + 1];
        operand_offsets<N>(o, i, off);
        Element e{off[0], val.x, val.y, val.z};
        if (N == 1 || o.data[1]) e.x = load<C>(o.data[1] + off[1], o.dtype[1]);  // unary ops take no values
        if constexpr (N >= 2) if (o.data[2]) e.y = load<C>(o.data[2] + off[2], o.dtype[2]);
        if constexpr (N >= 3) if (o.data[3]) e.z = load<C>(o.data[3] + off[3], o.dtype[3]);
        return e;
      },
      [&](const Element& e, std::int64_t) { store(o.data[0] + e.out, o.dtype[0], apply<N>(f, e.x, e.y, e.z)); });
}

/// The element step of operand k for the flat kernel when it has dtype t: 1 when contiguous (one coalesced
/// dim of unit element stride, no dims, or a single element whatever its strides), 0 when one element is
/// broadcast to all (stride 0) or the input is a value (converted on the host), else -1.
std::int64_t flat_step(const Operands& o, int k, Dtype t) {
  if (!o.data[k]) return 0;
  if (o.dtype[k] != t) return -1;
  if (o.ndim == 0 || o.numel == 1) return 1;
  if (o.ndim > 1) return -1;
  if (o.strides[k][0] == static_cast<std::int64_t>(itemsize(t))) return 1;
  return o.strides[k][0] == 0 ? 0 : -1;
}

/// Runs f over the operands (N inputs) computing in C; the output's element type Out is what f returns
/// for the flat kernel (only taken when the output has that dtype).
template <int N, class C, class F>
void launch(const Operands& o, F f, const char* what, void* stream_v) {
  if (o.numel == 0) return;
  auto stream = static_cast<cudaStream_t>(stream_v);
  using Out = typename F::template Out<C>;
  constexpr Dtype kC = std::is_same_v<C, bool> ? Dtype::Bool
                       : std::is_same_v<C, std::int64_t> ? Dtype::Int64
                       : std::is_same_v<C, float> ? Dtype::Float32
                       : std::is_same_v<C, double> ? Dtype::Float64
                       : std::is_same_v<C, c64> ? Dtype::Complex64 : Dtype::Complex128;
  constexpr Dtype kOut = std::is_same_v<Out, bool> ? Dtype::Bool
                         : std::is_same_v<Out, std::int64_t> ? Dtype::Int64
                         : std::is_same_v<Out, float> ? Dtype::Float32
                         : std::is_same_v<Out, double> ? Dtype::Float64
                         : std::is_same_v<Out, c64> ? Dtype::Complex64 : Dtype::Complex128;
  // the flat kernel: a contiguous output of dtype Out, inputs of dtype C each contiguous or one broadcast
  // element (the output, whose type may be narrower than C - bool for comparisons - is checked on its own)
  bool flat = flat_step(o, 0, kOut) == 1;
  std::int64_t st[3] = {1, 1, 1};
  for (int k = 1; k <= N && flat; ++k) flat = (st[k - 1] = flat_step(o, k, kC)) >= 0;
  Loaded<C> val{};  // the inputs given by value, converted to C here
  C* vals[3] = {&val.x, &val.y, &val.z};
  for (int k = 1; k <= N; ++k)
    if (!o.data[k]) *vals[k - 1] = load<C>(reinterpret_cast<const char*>(o.value[k]), o.dtype[k]);
  if constexpr (is_cplx_v<C> && N >= 2 && mixed_flat<F>::value) {
    // Note [mixed flat kernel]: inputs in device memory of C or its real type, each contiguous or broadcast
    constexpr Dtype kR = kC == Dtype::Complex64 ? Dtype::Float32 : Dtype::Float64;
    bool mixed = !flat && flat_step(o, 0, kC) == 1;
    unsigned real = 0;
    for (int k = 1; k <= N && mixed; ++k) {
      const bool r = o.dtype[k] == kR;
      real |= r ? 1u << (k - 1) : 0u;
      mixed = o.data[k] && (st[k - 1] = flat_step(o, k, r ? kR : kC)) >= 0;
    }
    if (mixed) {
      launch_kernel(flat_mixed_kernel<N, C, F>, blocks_for((o.numel + kFlatUnroll - 1) / kFlatUnroll), kThreads,
                    stream, reinterpret_cast<C*>(o.data[0]), o.data[1], o.data[2], N >= 3 ? o.data[3] : nullptr,
                    st[0], st[1], st[2], o.numel, real, f);
      check_launch(what);
      return;
    }
  }
  if (flat) {
    const C* a = reinterpret_cast<const C*>(o.data[1]);
    const C* b = N >= 2 ? reinterpret_cast<const C*>(o.data[2]) : nullptr;
    const C* c = N >= 3 ? reinterpret_cast<const C*>(o.data[3]) : nullptr;
    const unsigned blocks = blocks_for((o.numel + kFlatUnroll - 1) / kFlatUnroll);
    launch_kernel(flat_kernel<N, C, Out, F>, blocks, kThreads, stream, reinterpret_cast<Out*>(o.data[0]), a, b, c,
                  st[0], st[1], st[2], o.numel, val, f);
  } else {
    launch_kernel(strided_kernel<N, C, F>, blocks_for((o.numel + kFlatUnroll - 1) / kFlatUnroll), kThreads, stream, o,
                  val, f);
  }
  check_launch(what);
}

// ---- device arithmetic --------------------------------------------------------------------------------
// Complex exp, log, sqrt and the trigonometric and hyperbolic functions are phasor's own: libcu++'s formulas
// lose digits or overflow early there (Note [complex elementary functions], core/complex_math.hpp).
template <class T> __device__ __forceinline__ T d_exp(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::cexp(v); else return ::exp(v); }
template <class T> __device__ __forceinline__ T d_log(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::clog(v); else return ::log(v); }
template <class T> __device__ __forceinline__ T d_sqrt(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::csqrt(v); else return ::sqrt(v); }
template <class T> __device__ __forceinline__ T d_sin(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::csin(v); else return ::sin(v); }
template <class T> __device__ __forceinline__ T d_cos(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::ccos(v); else return ::cos(v); }
template <class T> __device__ __forceinline__ T d_tan(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::ctan(v); else return ::tan(v); }
template <class T> __device__ __forceinline__ T d_sinh(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::csinh(v); else return ::sinh(v); }
template <class T> __device__ __forceinline__ T d_cosh(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::ccosh(v); else return ::cosh(v); }
template <class T> __device__ __forceinline__ T d_tanh(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::ctanh(v); else return ::tanh(v); }
template <class T> __device__ __forceinline__ T d_asin(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::casin(v); else return ::asin(v); }
template <class T> __device__ __forceinline__ T d_acos(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::cacos(v); else return ::acos(v); }
template <class T> __device__ __forceinline__ T d_atan(T v) { if constexpr (is_cplx_v<T>) return ::phasor::detail::catan(v); else return ::atan(v); }
template <class T> __device__ __forceinline__ T d_pow(T a, T b) {
  if constexpr (is_cplx_v<T>) return ::phasor::detail::cpow(a, b);  // core/pow_rules.hpp, as on the CPU
  else if constexpr (std::is_same_v<T, std::int64_t>) return ::phasor::detail::ipow(a, b);
  else return ::pow(a, b);
}
/// 1 / (1 + e^-x) for real x without overflow for large |x| (the CPU's sigmoid_real).
template <class T> __device__ __forceinline__ T d_sigmoid_real(T x) {
  if (x >= T(0)) return T(1) / (T(1) + ::exp(-x));
  const T e = ::exp(x);
  return e / (T(1) + e);
}

// Ops by the CPU op's name: a functor type per name, instantiated for the compute dtypes it supports.
// OUT: the result type for compute type T (T itself, bool for predicates, real for |z| and arg z).
#define PHASOR_UNARY(NAME, OUT, ...)                      \
  struct NAME {                                            \
    double p0 = 0, p1 = 0;                                 \
    template <class T>                                     \
    using Out = OUT;                                       \
    template <class T>                                     \
    __device__ __forceinline__ Out<T> operator()(T v) const { \
      __VA_ARGS__                                          \
    }                                                      \
  };

PHASOR_UNARY(Copy, T, return v;)
PHASOR_UNARY(Neg, T, if constexpr (std::is_same_v<T, bool>) return v; else return wrap_neg(v);)
PHASOR_UNARY(Abs, real_t<T>, if constexpr (is_cplx_v<T>) return ::cuda::std::abs(v); else if constexpr (std::is_same_v<T, bool>) return v; else if constexpr (is_float_v<T>) return ::fabs(v); else return v < T(0) ? wrap_neg(v) : v;)
PHASOR_UNARY(Sign, T, if constexpr (is_cplx_v<T>) { const auto a = ::cuda::std::abs(v); return a == 0 ? T(0) : v / a; } else if constexpr (std::is_same_v<T, bool>) return v; else if constexpr (is_float_v<T>) return d_isnan(v) ? v : T((v > T(0)) - (v < T(0))); else return T((v > T(0)) - (v < T(0)));)
PHASOR_UNARY(Exp, T, return d_exp(v);)
// complex expm1/log1p: the CPU's own definitions (core/complex_math.hpp)
PHASOR_UNARY(Expm1, T, if constexpr (is_cplx_v<T>) return ::phasor::detail::cexpm1(v); else return ::expm1(v);)
PHASOR_UNARY(Log, T, return d_log(v);)
PHASOR_UNARY(Log1p, T, if constexpr (is_cplx_v<T>) return ::phasor::detail::clog1p(v); else return ::log1p(v);)
PHASOR_UNARY(Sqrt, T, return d_sqrt(v);)
PHASOR_UNARY(Rsqrt, T, if constexpr (is_cplx_v<T>) return cdiv(T(1), d_sqrt(v)); else return ::rsqrt(v);)
PHASOR_UNARY(Square, T, return wrap_mul(v, v);)
PHASOR_UNARY(Sin, T, return d_sin(v);)
PHASOR_UNARY(Cos, T, return d_cos(v);)
PHASOR_UNARY(Tan, T, return d_tan(v);)
PHASOR_UNARY(Sinh, T, return d_sinh(v);)
PHASOR_UNARY(Cosh, T, return d_cosh(v);)
PHASOR_UNARY(Tanh, T, return d_tanh(v);)
PHASOR_UNARY(Asin, T, return d_asin(v);)
PHASOR_UNARY(Acos, T, return d_acos(v);)
PHASOR_UNARY(Atan, T, return d_atan(v);)
PHASOR_UNARY(Erf, T, return ::erf(v);)
PHASOR_UNARY(Erfc, T, return ::erfc(v);)
// the special functions (core/special_rules.hpp, Note [special functions] in core/special.cpp); polygamma's p0 is n
PHASOR_UNARY(Lgamma, T, return ::phasor::detail::lgamma_of(v);)
PHASOR_UNARY(Digamma, T, return ::phasor::detail::digamma_of(v);)
PHASOR_UNARY(Polygamma, T, return ::phasor::detail::polygamma_of(static_cast<int>(p0), v);)
PHASOR_UNARY(Erfinv, T, return ::phasor::detail::erfinv_of(v);)
PHASOR_UNARY(Erfcx, T, return ::phasor::detail::erfcx_of(v);)
PHASOR_UNARY(I0, T, return ::phasor::detail::i0_of(v);)
PHASOR_UNARY(I0e, T, return ::phasor::detail::i0e_of(v);)
PHASOR_UNARY(I1, T, return ::phasor::detail::i1_of(v);)
PHASOR_UNARY(I1e, T, return ::phasor::detail::i1e_of(v);)
PHASOR_UNARY(Ndtr, T, return ::phasor::detail::ndtr_of(v);)
PHASOR_UNARY(Ndtri, T, return ::phasor::detail::ndtri_of(v);)
PHASOR_UNARY(LogNdtr, T, return ::phasor::detail::log_ndtr_of(v);)
PHASOR_UNARY(Entr, T, return ::phasor::detail::entr_of(v);)
PHASOR_UNARY(BesselJ0, T, return ::phasor::detail::bessel_j_of(v, 0);)
PHASOR_UNARY(BesselJ1, T, return ::phasor::detail::bessel_j_of(v, 1);)
PHASOR_UNARY(BesselY0, T, return ::phasor::detail::bessel_y_of(v, 0);)
PHASOR_UNARY(BesselY1, T, return ::phasor::detail::bessel_y_of(v, 1);)
PHASOR_UNARY(BesselK0, T, return ::phasor::detail::bessel_k_of(v, 0, false);)
PHASOR_UNARY(BesselK1, T, return ::phasor::detail::bessel_k_of(v, 1, false);)
PHASOR_UNARY(BesselK0e, T, return ::phasor::detail::bessel_k_of(v, 0, true);)
PHASOR_UNARY(BesselK1e, T, return ::phasor::detail::bessel_k_of(v, 1, true);)
PHASOR_UNARY(SphericalBesselJ0, T, return ::phasor::detail::spherical_bessel_j0_of(v);)
PHASOR_UNARY(SphericalBesselJ1, T, return ::phasor::detail::spherical_bessel_j1_of(v);)
PHASOR_UNARY(AiryAi, T, return ::phasor::detail::airy_of(v, false);)
PHASOR_UNARY(AiryAiPrime, T, return ::phasor::detail::airy_of(v, true);)
// the CPU's forms (core/unary.cpp): complex exp2 = e^(z ln 2), log2 / log10 = log z / ln(base); complex
// asinh / acosh from casin / cacos (core/complex_math.hpp)
PHASOR_UNARY(Exp2, T, if constexpr (is_cplx_v<T>) return d_exp(v * real_t<T>(0.69314718055994530942)); else return ::exp2(v);)
PHASOR_UNARY(Log2, T, if constexpr (is_cplx_v<T>) return d_log(v) * real_t<T>(1 / 0.69314718055994530942); else return ::log2(v);)
PHASOR_UNARY(Log10, T, if constexpr (is_cplx_v<T>) return d_log(v) * real_t<T>(1 / 2.30258509299404568402); else return ::log10(v);)
PHASOR_UNARY(Reciprocal, T, if constexpr (is_cplx_v<T>) return cdiv(T(1), v); else return T(1) / v;)
PHASOR_UNARY(Asinh, T, if constexpr (is_cplx_v<T>) return ::phasor::detail::casinh(v); else return ::asinh(v);)
PHASOR_UNARY(Acosh, T, if constexpr (is_cplx_v<T>) return ::phasor::detail::cacosh(v); else return ::acosh(v);)
PHASOR_UNARY(Atanh, T, if constexpr (is_cplx_v<T>) return ::phasor::detail::catanh(v); else return ::atanh(v);)
// sigmoid, silu and gelu in the CPU's forms (src/core/unary_nn.cpp): no overflow or cancellation for
// large negative x; relu keeps NaN as the CPU's does
PHASOR_UNARY(Sigmoid, T, if constexpr (is_cplx_v<T>) return cdiv(T(1), T(1) + d_exp(-v)); else return d_sigmoid_real(v);)
PHASOR_UNARY(Relu, T, return v < T(0) ? T(0) : v;)
PHASOR_UNARY(Silu, T, if constexpr (is_cplx_v<T>) return cdiv(v, T(1) + d_exp(-v)); else return v * d_sigmoid_real(v);)
PHASOR_UNARY(Gelu, T, if (p0 != 0) { const T k2 = T(2 * 0.79788456080286535587989211986876), c = T(0.044715); return v * d_sigmoid_real(k2 * (v + c * v * v * v)); } else { return T(0.5) * v * ::erfc(-v * T(0.70710678118654752440)); })
PHASOR_UNARY(Softplus, T, const T b = T(p0); const T bx = b * v; return bx > T(p1) ? v : ::log1p(::exp(bx)) / b;)
PHASOR_UNARY(Floor, T, if constexpr (is_float_v<T>) return ::floor(v); else return v;)
PHASOR_UNARY(Ceil, T, if constexpr (is_float_v<T>) return ::ceil(v); else return v;)
PHASOR_UNARY(Round, T, if constexpr (is_float_v<T>) return ::rint(v); else return v;)
PHASOR_UNARY(Trunc, T, if constexpr (is_float_v<T>) return ::trunc(v); else return v;)
PHASOR_UNARY(Conj, T, if constexpr (is_cplx_v<T>) return ::cuda::std::conj(v); else return v;)
PHASOR_UNARY(Angle, real_t<T>, if constexpr (is_cplx_v<T>) return ::cuda::std::arg(v); else return d_isnan(v) ? v : (v < T(0) ? T(3.14159265358979323846) : T(0));)
PHASOR_UNARY(Isfinite, bool, if constexpr (is_cplx_v<T>) return ::isfinite(v.real()) && ::isfinite(v.imag()); else if constexpr (is_float_v<T>) return bool(::isfinite(v)); else return true;)
PHASOR_UNARY(Isnan, bool, return d_isnan(v);)
PHASOR_UNARY(Isinf, bool, if constexpr (is_cplx_v<T>) return ::isinf(v.real()) || ::isinf(v.imag()); else if constexpr (is_float_v<T>) return bool(::isinf(v)); else return false;)
PHASOR_UNARY(LogicalNot, bool, return !convert<bool>(v);)
PHASOR_UNARY(BitwiseNot, T, return ::phasor::detail::bitwise_not_of(v);)  // core/bitwise_rules.hpp, as on the CPU
// clamp's bounds arrive as doubles (p0 = min, p1 = max, infinite when absent); NaN stays NaN, min > max gives max
PHASOR_UNARY(Clamp, T, if (double(v) < p0) v = T(p0); if (double(v) > p1) v = T(p1); return v;)
// the activations of phasor/nn/activation.hpp in their CPU forms (nn/activation_rules.hpp); parameters as the
// CPU op passes them: elu / selu (p0 = alpha, p1 = scale), celu (p0 = alpha), leaky_relu (p0 = slope), hardtanh
// (p0 = min, p1 = max), softshrink / hardshrink (p0 = lambd), threshold (p0 = threshold, p1 = value)
PHASOR_UNARY(Elu, T, return ::phasor::detail::activation_rules::elu_of(v, T(p0), T(p1), T(1));)
PHASOR_UNARY(Celu, T, return ::phasor::detail::activation_rules::elu_of(v, T(p0), T(1), T(1) / T(p0));)
PHASOR_UNARY(LeakyRelu, T, return ::phasor::detail::activation_rules::leaky_relu_of(v, T(p0));)
PHASOR_UNARY(Hardtanh, T, return ::phasor::detail::activation_rules::hardtanh_of(v, T(p0), T(p1));)
PHASOR_UNARY(Hardsigmoid, T, return ::phasor::detail::activation_rules::hardsigmoid_of(v);)
PHASOR_UNARY(Hardswish, T, return ::phasor::detail::activation_rules::hardswish_of(v);)
PHASOR_UNARY(Mish, T, return ::phasor::detail::activation_rules::mish_of(v);)
PHASOR_UNARY(Softshrink, T, return ::phasor::detail::activation_rules::softshrink_of(v, T(p0));)
PHASOR_UNARY(Hardshrink, T, return ::phasor::detail::activation_rules::hardshrink_of(v, T(p0));)
PHASOR_UNARY(Logsigmoid, T, return ::phasor::detail::activation_rules::logsigmoid_of(v);)
PHASOR_UNARY(Softsign, T, return ::phasor::detail::activation_rules::softsign_of(v);)
PHASOR_UNARY(Threshold, T, return ::phasor::detail::activation_rules::threshold_of(v, T(p0), T(p1));)
#undef PHASOR_UNARY

struct Add {
  double alpha = 1;
  template <class T>
  using Out = T;
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    // int64 wraps, as on the CPU; the plain sum and product for other types (element_traits.hpp)
    else return alpha == 1 ? wrap_add(a, b) : wrap_add(a, wrap_mul(convert<T>(alpha), b));
  }
};
struct Sub {
  double alpha = 1;
  template <class T>
  using Out = T;
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return alpha == 1 ? wrap_sub(a, b) : wrap_sub(a, wrap_mul(convert<T>(alpha), b));
  }
};
#define PHASOR_BINARY(NAME, OUT, ...)                               \
  struct NAME {                                                      \
    double alpha = 1;                                                \
    template <class T>                                               \
    using Out = OUT;                                                 \
    template <class T>                                               \
    __device__ __forceinline__ Out<T> operator()(T a, T b) const {  \
      __VA_ARGS__                                                    \
    }                                                                \
  };
// Complex products as the CPU engine's (textbook formula, Note in src/core/binary.cpp).
PHASOR_BINARY(Mul, T, if constexpr (is_cplx_v<T>) return T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()); else if constexpr (std::is_same_v<T, bool>) return a && b; else return wrap_mul(a, b);)
PHASOR_BINARY(Div, T, if constexpr (is_cplx_v<T>) return cdiv(a, b); else return a / b;)  // Note [complex division]
PHASOR_BINARY(Pow, T, return d_pow(a, b);)
PHASOR_BINARY(Maximum, T, return ::phasor::detail::maximum_of(a, b);)  // the CPU's rule (element_traits)
PHASOR_BINARY(Minimum, T, return ::phasor::detail::minimum_of(a, b);)
PHASOR_BINARY(Atan2, T, return ::atan2(a, b);)
// the division family and the real functions of core/real_binary_rules.hpp, as on the CPU
PHASOR_BINARY(Fmod, T, return ::phasor::detail::fmod_of(a, b);)
PHASOR_BINARY(Remainder, T, return ::phasor::detail::remainder_of(a, b);)
PHASOR_BINARY(FloorDivide, T, return ::phasor::detail::floor_divide_of(a, b);)
PHASOR_BINARY(TruncDivide, T, return ::phasor::detail::trunc_divide_of(a, b);)
PHASOR_BINARY(Hypot, T, return ::phasor::detail::hypot_of(a, b);)
PHASOR_BINARY(Copysign, T, return ::copysign(a, b);)
PHASOR_BINARY(Logaddexp, T, return ::phasor::detail::logaddexp_of(a, b);)
PHASOR_BINARY(Logaddexp2, T, return ::phasor::detail::logaddexp2_of(a, b);)
PHASOR_BINARY(Xlogy, T, return ::phasor::detail::xlogy_of(a, b);)
PHASOR_BINARY(Xlog1py, T, return ::phasor::detail::xlog1py_of(a, b);)
PHASOR_BINARY(Zeta, T, return ::phasor::detail::zeta_of(a, b);)
PHASOR_BINARY(Igamma, T, return ::phasor::detail::gammainc_of(a, b);)
PHASOR_BINARY(Igammac, T, return ::phasor::detail::gammaincc_of(a, b);)
PHASOR_BINARY(Eq, bool, return a == b;)
PHASOR_BINARY(Ne, bool, return a != b;)
PHASOR_BINARY(Lt, bool, return a < b;)
PHASOR_BINARY(Le, bool, return a <= b;)
PHASOR_BINARY(Gt, bool, return a > b;)
PHASOR_BINARY(Ge, bool, return a >= b;)
PHASOR_BINARY(And, bool, return convert<bool>(a) && convert<bool>(b);)
PHASOR_BINARY(Or, bool, return convert<bool>(a) || convert<bool>(b);)
PHASOR_BINARY(Xor, bool, return convert<bool>(a) != convert<bool>(b);)
// the bitwise ops, shifts, gcd and lcm of core/bitwise_rules.hpp, as on the CPU (bool and int64)
PHASOR_BINARY(BitwiseAnd, T, return ::phasor::detail::bitwise_and_of(a, b);)
PHASOR_BINARY(BitwiseOr, T, return ::phasor::detail::bitwise_or_of(a, b);)
PHASOR_BINARY(BitwiseXor, T, return ::phasor::detail::bitwise_xor_of(a, b);)
PHASOR_BINARY(LeftShift, T, return ::phasor::detail::left_shift_of(a, b);)
PHASOR_BINARY(RightShift, T, return ::phasor::detail::right_shift_of(a, b);)
PHASOR_BINARY(Gcd, T, return ::phasor::detail::gcd_of(a, b);)
PHASOR_BINARY(Lcm, T, return ::phasor::detail::lcm_of(a, b);)
PHASOR_BINARY(MakeComplex, ::cuda::std::complex<T>, return ::cuda::std::complex<T>(a, b);)
PHASOR_BINARY(Polar, ::cuda::std::complex<T>, return ::cuda::std::complex<T>(a * ::cos(b), a * ::sin(b));)
// gelu's backward g * (Phi(x) + x phi(x)) for (a, b) = (g, x), in the CPU's form (src/core/unary_nn.cpp)
PHASOR_BINARY(GeluBackward, T, const T cdf = T(0.5) * ::erfc(-b * T(0.70710678118654752440)); const T pdf = ::exp(T(-0.5) * b * b) * T(0.39894228040143267793994605993438); return a * (cdf + b * pdf);)
#undef PHASOR_BINARY

/// d^k/dx^k p_n(x) of an orthogonal polynomial family (core/polynomial_rules.hpp), k the op's parameter.
template <int Family, bool Shifted>
struct Polynomial {
  double order = 0;
  template <class T>
  using Out = T;
  template <class T>
  __device__ __forceinline__ T operator()(T x, T n) const {
    return ::phasor::detail::polynomial_of(Family, Shifted, x, n, static_cast<int>(order));
  }
};
namespace pr = ::phasor::detail::polynomial_rules;
using ChebyshevT = Polynomial<pr::kChebyshevT, false>;
using ChebyshevU = Polynomial<pr::kChebyshevU, false>;
using ChebyshevV = Polynomial<pr::kChebyshevV, false>;
using ChebyshevW = Polynomial<pr::kChebyshevW, false>;
using ShiftedChebyshevT = Polynomial<pr::kChebyshevT, true>;
using ShiftedChebyshevU = Polynomial<pr::kChebyshevU, true>;
using ShiftedChebyshevV = Polynomial<pr::kChebyshevV, true>;
using ShiftedChebyshevW = Polynomial<pr::kChebyshevW, true>;
using HermiteH = Polynomial<pr::kHermiteH, false>;
using HermiteHe = Polynomial<pr::kHermiteHe, false>;
using LaguerreL = Polynomial<pr::kLaguerreL, false>;
using LegendreP = Polynomial<pr::kLegendreP, false>;

/// x + v (a op b), op the product (Mul) or quotient (Div), v = 1 not multiplied: the CPU's AddcF (Note
/// [fused multiply-add] in core/binary.cpp).
template <class Op>
struct Addc {
  double re = 1, im = 0;
  std::int64_t integer = 1;
  template <class T>
  using Out = T;
  template <class T>
  __device__ __forceinline__ T operator()(T x, T a, T b) const {
    if (re == 1 && im == 0 && integer == 1) return Add{}(x, Op{}(a, b));
    T v;
    if constexpr (is_cplx_v<T>) v = T(real_t<T>(re), real_t<T>(im));
    else if constexpr (std::is_same_v<T, std::int64_t>) v = integer;
    else v = T(re);
    return Add{}(x, Mul{}(v, Op{}(a, b)));
  }
};

/// torch.lerp's two forms (x, e, w): x + w (e - x) when |w| < 0.5, else e - (e - x) (1 - w): the CPU's
/// lerp_value (Note [lerp] in core/binary.cpp).
struct Lerp {
  template <class T>
  using Out = T;
  template <class T>
  __device__ __forceinline__ T operator()(T x, T e, T w) const {
    const T d = Sub{}(e, x);
    bool low;
    if constexpr (is_cplx_v<T>) low = w.real() * w.real() + w.imag() * w.imag() < real_t<T>(0.25);
    else low = ::fabs(w) < T(0.5);
    return low ? Add{}(x, Mul{}(w, d)) : Sub{}(e, Mul{}(d, Sub{}(T(1), w)));
  }
};

template <> struct mixed_flat<Add> : std::true_type {};
template <> struct mixed_flat<Sub> : std::true_type {};
template <> struct mixed_flat<Mul> : std::true_type {};
template <> struct mixed_flat<Div> : std::true_type {};
template <class Op> struct mixed_flat<Addc<Op>> : std::true_type {};
template <> struct mixed_flat<Lerp> : std::true_type {};

struct Select {
  template <class T>
  using Out = T;
  template <class T>
  __device__ __forceinline__ T operator()(T c, T a, T b) const { return convert<bool>(c) ? a : b; }
};

template <unsigned Allowed, class Op>
bool run_unary(Dtype compute, const Operands& o, Op op, const char* name, void* stream) {
  return with_type<Allowed>(compute, [&](auto tag) { launch<1, decltype(tag)>(o, op, name, stream); });
}
template <unsigned Allowed, class Op>
bool run_binary(Dtype compute, const Operands& o, Op op, const char* name, void* stream) {
  return with_type<Allowed>(compute, [&](auto tag) { launch<2, decltype(tag)>(o, op, name, stream); });
}

/// Runs unary op `op` (the CPU op's name) computing in `compute` when that dtype is one of the op's and in
/// Mask; false otherwise. Instantiates the kernels of the ops x dtypes in Mask.
template <unsigned Mask>
bool unary_table(const char* op, Dtype compute, const Operands& o, double p0, double p1, void* stream) {
  struct Entry {
    const char* name;
    bool (*run)(Dtype, const Operands&, double, double, void*);
  };
#define E(NAME, TYPE, TYPES)                                               \
  Entry{NAME, [](Dtype c, const Operands& o, double a, double b, void* s) { \
          return run_unary<(TYPES) & Mask>(c, o, TYPE{a, b}, NAME, s);       \
        }}
  static const Entry table[] = {
      E("copy", Copy, kAll),       E("neg", Neg, kNum),         E("abs", Abs, kAll),
      E("sign", Sign, kAll),       E("exp", Exp, kFloat),       E("expm1", Expm1, kFloat),
      E("log", Log, kFloat),       E("log1p", Log1p, kFloat),   E("sqrt", Sqrt, kFloat),
      E("rsqrt", Rsqrt, kFloat),   E("square", Square, kNum),   E("sin", Sin, kFloat),
      E("cos", Cos, kFloat),       E("tan", Tan, kFloat),       E("sinh", Sinh, kFloat),
      E("cosh", Cosh, kFloat),     E("tanh", Tanh, kFloat),     E("asin", Asin, kFloat),
      E("acos", Acos, kFloat),     E("atan", Atan, kFloat),     E("erf", Erf, kReal),
      E("erfc", Erfc, kReal),      E("exp2", Exp2, kFloat),     E("log2", Log2, kFloat),
      E("log10", Log10, kFloat),   E("reciprocal", Reciprocal, kFloat), E("asinh", Asinh, kFloat),
      E("acosh", Acosh, kFloat),   E("atanh", Atanh, kFloat),
      E("sigmoid", Sigmoid, kFloat), E("relu", Relu, kInt | kReal), E("silu", Silu, kFloat),
      E("gelu", Gelu, kReal),      E("softplus", Softplus, kReal), E("floor", Floor, kInt | kReal),
      E("ceil", Ceil, kInt | kReal), E("round", Round, kInt | kReal), E("trunc", Trunc, kInt | kReal),
      E("conj", Conj, kAll),
      E("angle", Angle, kFloat),   E("isfinite", Isfinite, kAll), E("isnan", Isnan, kAll),
      E("isinf", Isinf, kAll),
      E("logical_not", LogicalNot, kAll), E("bitwise_not", BitwiseNot, kBool | kInt),
      E("clamp", Clamp, kInt | kReal),
      E("lgamma", Lgamma, kReal),  E("digamma", Digamma, kReal), E("polygamma", Polygamma, kReal),
      E("erfinv", Erfinv, kReal),  E("erfcx", Erfcx, kReal),    E("i0", I0, kReal),
      E("i0e", I0e, kReal),        E("i1", I1, kReal),          E("i1e", I1e, kReal),
      E("ndtr", Ndtr, kReal),      E("ndtri", Ndtri, kReal),    E("log_ndtr", LogNdtr, kReal),
      E("entr", Entr, kReal),
      E("bessel_j0", BesselJ0, kReal), E("bessel_j1", BesselJ1, kReal), E("bessel_y0", BesselY0, kReal),
      E("bessel_y1", BesselY1, kReal), E("modified_bessel_k0", BesselK0, kReal),
      E("modified_bessel_k1", BesselK1, kReal), E("scaled_modified_bessel_k0", BesselK0e, kReal),
      E("scaled_modified_bessel_k1", BesselK1e, kReal), E("spherical_bessel_j0", SphericalBesselJ0, kReal),
      E("spherical_bessel_j1", SphericalBesselJ1, kReal), E("airy_ai", AiryAi, kReal),
      E("airy_ai_prime", AiryAiPrime, kReal),
      E("elu", Elu, kReal),        E("selu", Elu, kReal),       E("celu", Celu, kReal),
      E("leaky_relu", LeakyRelu, kReal), E("hardtanh", Hardtanh, kInt | kReal),
      E("hardsigmoid", Hardsigmoid, kReal), E("hardswish", Hardswish, kReal), E("mish", Mish, kReal),
      E("softshrink", Softshrink, kReal), E("hardshrink", Hardshrink, kReal),
      E("logsigmoid", Logsigmoid, kReal), E("softsign", Softsign, kReal),
      E("threshold", Threshold, kInt | kReal),
  };
#undef E
  for (const auto& e : table)
    if (std::strcmp(e.name, op) == 0) return e.run(compute, o, p0, p1, stream);
  return false;
}

/// Runs binary op `op` computing in `compute` when that dtype is one of the op's and in Mask; false
/// otherwise. Instantiates the kernels of the ops x dtypes in Mask.
template <unsigned Mask>
bool binary_table(const char* op, Dtype compute, const Operands& o, double alpha, void* stream) {
  struct Entry {
    const char* name;
    bool (*run)(Dtype, const Operands&, double, void*);
  };
#define E(NAME, TYPE, TYPES) \
  Entry{NAME, [](Dtype c, const Operands& o, double a, void* s) { return run_binary<(TYPES) & Mask>(c, o, TYPE{a}, NAME, s); }}
  static const Entry table[] = {
      E("add", Add, kAll),         E("sub", Sub, kNum),         E("mul", Mul, kAll),
      E("div", Div, kFloat),       E("pow", Pow, kInt | kFloat),       E("maximum", Maximum, kBool | kInt | kReal),
      E("minimum", Minimum, kBool | kInt | kReal), E("atan2", Atan2, kReal), E("eq", Eq, kAll),
      E("ne", Ne, kAll),           E("lt", Lt, kBool | kInt | kReal), E("le", Le, kBool | kInt | kReal),
      E("gt", Gt, kBool | kInt | kReal), E("ge", Ge, kBool | kInt | kReal), E("logical_and", And, kAll),
      E("logical_or", Or, kAll),   E("logical_xor", Xor, kAll), E("complex", MakeComplex, kReal),
      E("polar", Polar, kReal),    E("gelu_backward", GeluBackward, kReal),
      E("bitwise_and", BitwiseAnd, kBool | kInt), E("bitwise_or", BitwiseOr, kBool | kInt),
      E("bitwise_xor", BitwiseXor, kBool | kInt), E("bitwise_left_shift", LeftShift, kInt),
      E("bitwise_right_shift", RightShift, kInt), E("gcd", Gcd, kInt), E("lcm", Lcm, kInt),
      E("fmod", Fmod, kInt | kReal), E("remainder", Remainder, kInt | kReal),
      E("floor_divide", FloorDivide, kInt | kReal), E("trunc_divide", TruncDivide, kInt | kReal),
      E("hypot", Hypot, kReal),    E("copysign", Copysign, kReal), E("logaddexp", Logaddexp, kReal),
      E("logaddexp2", Logaddexp2, kReal), E("xlogy", Xlogy, kReal),
      E("xlog1py", Xlog1py, kReal), E("zeta", Zeta, kReal), E("igamma", Igamma, kReal),
      E("igammac", Igammac, kReal),
      // the orthogonal polynomials: alpha is the derivative order in x
      E("chebyshev_polynomial_t", ChebyshevT, kReal), E("chebyshev_polynomial_u", ChebyshevU, kReal),
      E("chebyshev_polynomial_v", ChebyshevV, kReal), E("chebyshev_polynomial_w", ChebyshevW, kReal),
      E("shifted_chebyshev_polynomial_t", ShiftedChebyshevT, kReal),
      E("shifted_chebyshev_polynomial_u", ShiftedChebyshevU, kReal),
      E("shifted_chebyshev_polynomial_v", ShiftedChebyshevV, kReal),
      E("shifted_chebyshev_polynomial_w", ShiftedChebyshevW, kReal),
      E("hermite_polynomial_h", HermiteH, kReal), E("hermite_polynomial_he", HermiteHe, kReal),
      E("laguerre_polynomial_l", LaguerreL, kReal), E("legendre_polynomial_p", LegendreP, kReal),
  };
#undef E
  for (const auto& e : table)
    if (std::strcmp(e.name, op) == 0) return e.run(compute, o, alpha, stream);
  return false;
}

}  // namespace
}  // namespace phasor::cuda
