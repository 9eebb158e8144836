// tests/cuda_emu/cufft.cpp - the cuFFT calls phasor makes, through FFTW on emulated device memory (Note
// [CUDA emulation] in emu.hpp). Layouts follow cuFFT's documentation of cufftMakePlanMany64: a null
// inembed/onembed selects the basic layout (contiguous transforms; for r2c/c2r the real side of an
// in-place transform is padded to 2 * (n/2 + 1) in its last dimension), otherwise the advanced layout
// (element b*dist + ((i0*embed1 + i1)*embed2 + i2)*stride), which is FFTW's convention too.
#include <cufft.h>
#include <fftw3.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <type_traits>
#include <vector>

#include "emu.hpp"

using namespace phasor_emu;
using Lock = std::lock_guard<std::recursive_mutex>;

namespace {

struct Plan {
  int device = 0;
  bool made = false;
  bool auto_alloc = true;
  cufftType type = CUFFT_C2C;
  std::vector<int> n;
  std::vector<int> inembed, onembed;  // resolved (never empty once made)
  long long istride = 1, idist = 0, ostride = 1, odist = 0;
  long long batch = 1;
  bool basic = true;  // null embeds: the in-place real side is padded
  std::size_t work_size = 0;
  void* work = nullptr;
  cudaStream_t stream = nullptr;
};

std::map<cufftHandle, Plan>& plans() {
  static auto* m = new std::map<cufftHandle, Plan>;
  return *m;
}
cufftHandle g_next = 1;

Plan* plan_of(cufftHandle h) {
  auto it = plans().find(h);
  return it == plans().end() ? nullptr : &it->second;
}

bool is_double(cufftType t) { return t == CUFFT_Z2Z || t == CUFFT_D2Z || t == CUFFT_Z2D; }
bool real_input(cufftType t) { return t == CUFFT_R2C || t == CUFFT_D2Z; }
bool real_output(cufftType t) { return t == CUFFT_C2R || t == CUFFT_Z2D; }

/// Element count a side spans: (batch-1)*dist + (last index of the embedded box)*stride + 1.
std::size_t span(const std::vector<int>& embed, const std::vector<int>& n, long long stride, long long dist,
                 long long batch) {
  long long last = 0, box = 1;
  for (std::size_t d = embed.size(); d-- > 0;) {
    last += (n[d] - 1) * box;
    box *= embed[d];
  }
  return static_cast<std::size_t>((batch - 1) * dist + last * stride + 1);
}

/// The real/complex element sizes of each side of plan p.
std::size_t in_elem(const Plan& p) {
  const std::size_t r = is_double(p.type) ? sizeof(double) : sizeof(float);
  return real_input(p.type) ? r : 2 * r;
}
std::size_t out_elem(const Plan& p) {
  const std::size_t r = is_double(p.type) ? sizeof(double) : sizeof(float);
  return real_output(p.type) ? r : 2 * r;
}

/// The logical extents of plan p's input (in) or output side: n, with the last halved to n/2 + 1 on the
/// complex side of an r2c or c2r transform.
std::vector<int> extents(const Plan& p, bool in) {
  std::vector<int> e = p.n;
  if (in ? real_output(p.type) : real_input(p.type)) e.back() = e.back() / 2 + 1;
  return e;
}

/// The plan's layout for this execution (in-place basic r2c/c2r pad the real side).
void resolve_layout(const Plan& p, bool in_place, std::vector<int>& ie, std::vector<int>& oe, long long& idist,
                    long long& odist) {
  ie = p.inembed;
  oe = p.onembed;
  idist = p.idist;
  odist = p.odist;
  if (!p.basic) return;
  ie = extents(p, true);
  oe = extents(p, false);
  if (in_place) {  // the real side holds as many reals as the complex side's complex numbers, times 2
    if (real_input(p.type)) ie.back() = 2 * oe.back();
    if (real_output(p.type)) oe.back() = 2 * ie.back();
  }
  auto prod = [](const std::vector<int>& v) {
    long long s = 1;
    for (int x : v) s *= x;
    return s;
  };
  idist = prod(ie);
  odist = prod(oe);
}

/// FFTW's advanced interface in precision R: fftwf_* for float, fftw_* for double.
template <class R> struct Fftw;
template <> struct Fftw<float> {
  using C = fftwf_complex;
  static constexpr auto c2c = fftwf_plan_many_dft;
  static constexpr auto r2c = fftwf_plan_many_dft_r2c;
  static constexpr auto c2r = fftwf_plan_many_dft_c2r;
  static constexpr auto execute = fftwf_execute;
  static constexpr auto destroy = fftwf_destroy_plan;
};
template <> struct Fftw<double> {
  using C = fftw_complex;
  static constexpr auto c2c = fftw_plan_many_dft;
  static constexpr auto r2c = fftw_plan_many_dft_r2c;
  static constexpr auto c2r = fftw_plan_many_dft_c2r;
  static constexpr auto execute = fftw_execute;
  static constexpr auto destroy = fftw_destroy_plan;
};

/// Runs plan p's transform with FFTW in precision R, planned for these very arrays with FFTW_ESTIMATE
/// (which leaves them untouched). FFTW's planner is not thread-safe; the API lock serializes planning
/// with the other emulated calls.
template <class R>
void run_fftw(const Plan& p, const std::vector<int>& ie, const std::vector<int>& oe, long long idist, long long odist,
              void* i, void* o, int dir) {
  using F = Fftw<R>;
  using C = typename F::C;
  const int rank = static_cast<int>(p.n.size()), howmany = static_cast<int>(p.batch);
  const int is = static_cast<int>(p.istride), os = static_cast<int>(p.ostride);
  const int id = static_cast<int>(idist), od = static_cast<int>(odist);
  const auto f = real_input(p.type)
                     ? F::r2c(rank, p.n.data(), howmany, static_cast<R*>(i), ie.data(), is, id, static_cast<C*>(o),
                              oe.data(), os, od, FFTW_ESTIMATE)
                 : real_output(p.type)
                     ? F::c2r(rank, p.n.data(), howmany, static_cast<C*>(i), ie.data(), is, id, static_cast<R*>(o),
                              oe.data(), os, od, FFTW_ESTIMATE)
                     : F::c2c(rank, p.n.data(), howmany, static_cast<C*>(i), ie.data(), is, id, static_cast<C*>(o),
                              oe.data(), os, od, dir, FFTW_ESTIMATE);
  F::execute(f);
  F::destroy(f);
}

/// Checks and queues an execution of plan h (of type `expect`, precision R) on its stream; `name` is the
/// calling cufftExec function's.
template <class R>
cufftResult exec(cufftHandle h, void* in, void* out, int direction, cufftType expect, const char* name) {
  Lock lk(api_mutex());
  if (int status = 0; take_failure(name, status)) return static_cast<cufftResult>(status);
  Plan* p = plan_of(h);
  if (!p || !p->made) return CUFFT_INVALID_PLAN;
  if (p->type != expect) {
    report("cufftExec: the plan is of type %d, not %d", int(p->type), int(expect));
    return CUFFT_INVALID_VALUE;
  }
  if (current_device() != p->device) {
    report("cufftExec: plan made on cuda:%d executed while cuda:%d is current", p->device, current_device());
    return CUFFT_INVALID_DEVICE;
  }
  if (stream_device(p->stream, "cufftExec") != p->device) return CUFFT_INVALID_VALUE;
  const bool in_place = in == out;
  std::vector<int> ie, oe;
  long long idist, odist;
  resolve_layout(*p, in_place, ie, oe, idist, odist);
  const std::size_t in_bytes = span(ie, extents(*p, true), p->istride, idist, p->batch) * in_elem(*p);
  const std::size_t out_bytes = span(oe, extents(*p, false), p->ostride, odist, p->batch) * out_elem(*p);
  if (!check_device_range(in, in_bytes, p->device, "cufftExec input") ||
      !check_device_range(out, out_bytes, p->device, "cufftExec output"))
    return CUFFT_INVALID_VALUE;
  if (!p->auto_alloc && p->work_size > 0) {
    if (!p->work) {
      report("cufftExec: the plan has no work area (cufftSetAutoAllocation 0 and no cufftSetWorkArea)");
      return CUFFT_EXEC_FAILED;
    }
    if (!check_device_range(p->work, p->work_size, p->device, "cufftExec work area")) return CUFFT_INVALID_VALUE;
  }
  const Plan snapshot = *p;
  const bool scribble_input = real_output(p->type) && !in_place;
  const cudaError_t e = enqueue(p->stream, [=] {
    run_fftw<R>(snapshot, ie, oe, idist, odist, in, out, direction);
    if (scribble_input) std::memset(in, 0xFF, in_bytes);  // cuFFT's c2r may overwrite its input
    if (!snapshot.auto_alloc && snapshot.work) std::memset(snapshot.work, 0xA5, snapshot.work_size);
  });
  return e == cudaSuccess ? CUFFT_SUCCESS : CUFFT_EXEC_FAILED;
}

}  // namespace

extern "C" {

cufftResult cufftCreate(cufftHandle* h) {
  Lock lk(api_mutex());
  const cufftHandle id = g_next++;
  plans()[id].device = current_device();
  *h = id;
  return CUFFT_SUCCESS;
}

cufftResult cufftDestroy(cufftHandle h) {
  Lock lk(api_mutex());
  if (!plans().erase(h)) return CUFFT_INVALID_PLAN;
  return CUFFT_SUCCESS;
}

cufftResult cufftSetAutoAllocation(cufftHandle h, int autoAllocate) {
  Lock lk(api_mutex());
  Plan* p = plan_of(h);
  if (!p) return CUFFT_INVALID_PLAN;
  p->auto_alloc = autoAllocate != 0;
  return CUFFT_SUCCESS;
}

cufftResult cufftMakePlanMany64(cufftHandle h, int rank, long long int* n, long long int* inembed,
                                long long int istride, long long int idist, long long int* onembed,
                                long long int ostride, long long int odist, cufftType type, long long int batch,
                                size_t* workSize) {
  Lock lk(api_mutex());
  if (int status = 0; take_failure("cufftMakePlanMany64", status)) return static_cast<cufftResult>(status);
  Plan* p = plan_of(h);
  if (!p) return CUFFT_INVALID_PLAN;
  if (p->made) {
    report("cufftMakePlanMany64: the plan was made already");
    return CUFFT_INVALID_PLAN;
  }
  if (rank < 1 || rank > 3 || batch < 1) return CUFFT_INVALID_SIZE;
  if (type != CUFFT_C2C && type != CUFFT_Z2Z && type != CUFFT_R2C && type != CUFFT_D2Z && type != CUFFT_C2R &&
      type != CUFFT_Z2D)
    return CUFFT_INVALID_TYPE;
  if ((inembed == nullptr) != (onembed == nullptr)) {
    report("cufftMakePlanMany64: inembed and onembed must both be null or both be given");
    return CUFFT_INVALID_VALUE;
  }
  Plan q;
  q.device = p->device;
  q.auto_alloc = p->auto_alloc;
  q.stream = p->stream;
  q.type = type;
  long long total = 1;
  for (int d = 0; d < rank; ++d) {
    if (n[d] < 1 || n[d] > std::numeric_limits<int>::max()) return CUFFT_INVALID_SIZE;
    q.n.push_back(static_cast<int>(n[d]));
    total *= n[d];
  }
  q.basic = inembed == nullptr;
  if (!q.basic) {
    for (int d = 0; d < rank; ++d) {
      q.inembed.push_back(static_cast<int>(inembed[d]));
      q.onembed.push_back(static_cast<int>(onembed[d]));
    }
    q.istride = istride, q.idist = idist, q.ostride = ostride, q.odist = odist;
  }
  if (total * batch > std::numeric_limits<int>::max()) {
    report("cufftMakePlanMany64: %lld elements: too large for the emulator (FFTW's int interface)", total * batch);
    return CUFFT_INVALID_SIZE;
  }
  q.batch = batch;
  // a work area the size of the complex data, so that execution without one shows
  q.work_size = static_cast<std::size_t>(total * batch) * (is_double(type) ? 16 : 8);
  q.made = true;
  *p = q;
  if (workSize) *workSize = q.work_size;
  return CUFFT_SUCCESS;
}

cufftResult cufftPlanMany(cufftHandle* h, int rank, int* n, int* inembed, int istride, int idist, int* onembed,
                          int ostride, int odist, cufftType type, int batch) {
  Lock lk(api_mutex());
  if (rank < 1 || rank > 3) return CUFFT_INVALID_SIZE;
  long long n64[3], ie[3], oe[3];
  for (int d = 0; d < rank; ++d) {
    n64[d] = n[d];
    ie[d] = inembed ? inembed[d] : 0;
    oe[d] = onembed ? onembed[d] : 0;
  }
  cufftResult r = cufftCreate(h);
  if (r != CUFFT_SUCCESS) return r;
  std::size_t work = 0;
  r = cufftMakePlanMany64(*h, rank, n64, inembed ? ie : nullptr, istride, idist, onembed ? oe : nullptr, ostride, odist,
                          type, batch, &work);
  if (r != CUFFT_SUCCESS) cufftDestroy(*h);
  return r;
}

cufftResult cufftSetStream(cufftHandle h, cudaStream_t s) {
  Lock lk(api_mutex());
  Plan* p = plan_of(h);
  if (!p) return CUFFT_INVALID_PLAN;
  p->stream = s;
  return CUFFT_SUCCESS;
}

cufftResult cufftSetWorkArea(cufftHandle h, void* work) {
  Lock lk(api_mutex());
  Plan* p = plan_of(h);
  if (!p) return CUFFT_INVALID_PLAN;
  p->work = work;
  return CUFFT_SUCCESS;
}

cufftResult cufftExecC2C(cufftHandle h, cufftComplex* in, cufftComplex* out, int direction) {
  if (direction != CUFFT_FORWARD && direction != CUFFT_INVERSE) return CUFFT_INVALID_VALUE;
  return exec<float>(h, in, out, direction, CUFFT_C2C, "cufftExecC2C");
}

cufftResult cufftExecZ2Z(cufftHandle h, cufftDoubleComplex* in, cufftDoubleComplex* out, int direction) {
  if (direction != CUFFT_FORWARD && direction != CUFFT_INVERSE) return CUFFT_INVALID_VALUE;
  return exec<double>(h, in, out, direction, CUFFT_Z2Z, "cufftExecZ2Z");
}

cufftResult cufftExecR2C(cufftHandle h, cufftReal* in, cufftComplex* out) {
  return exec<float>(h, in, out, 0, CUFFT_R2C, "cufftExecR2C");
}

cufftResult cufftExecD2Z(cufftHandle h, cufftDoubleReal* in, cufftDoubleComplex* out) {
  return exec<double>(h, in, out, 0, CUFFT_D2Z, "cufftExecD2Z");
}

cufftResult cufftExecC2R(cufftHandle h, cufftComplex* in, cufftReal* out) {
  return exec<float>(h, in, out, 0, CUFFT_C2R, "cufftExecC2R");
}

cufftResult cufftExecZ2D(cufftHandle h, cufftDoubleComplex* in, cufftDoubleReal* out) {
  return exec<double>(h, in, out, 0, CUFFT_Z2D, "cufftExecZ2D");
}

}  // extern "C"
