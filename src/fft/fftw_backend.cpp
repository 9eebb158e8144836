// src/fft/fftw_backend.cpp - FFTW (double and float) behind the plan cache: guru64 planning
// on the caller's strides, planning on scratch arrays for measuring efforts, new-array
// execution, per-plan thread counts, planner effort and wisdom files.
//
// Note [planning on scratch]
// FFTW_MEASURE and above run candidate transforms on the arrays given to the planner and so
// overwrite them. We therefore plan on scratch arrays with the same layout and the same
// SIMD alignment (offset modulo 64 bytes) and run the plan on the real arrays with the
// new-array execute functions, which FFTW allows for arrays of equal alignment, in-place-ness
// and layout (all part of the PlanKey). FFTW_ESTIMATE never touches the arrays, so it plans
// on the real ones directly.
//
// Note [fft threads]
// FFTW with 2 threads was measured 300x slower at n=256 and 10x slower at n=4096 than with 1
// on these machines (thread wake-up dwarfs the work), so a plan only gets more threads when
// its total size reaches kThreadsMinWork points; the count is capped by get_num_threads().
#include "fft/fftw_backend.hpp"

#include <fftw3.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "phasor/device.hpp"
#include "phasor/error.hpp"
#include "phasor/fft.hpp"

namespace phasor::fft {
namespace detail {
std::atomic<int> g_effort{static_cast<int>(Effort::estimate)};

namespace {

unsigned effort_flags(Effort e) {
  switch (e) {
    case Effort::estimate: return FFTW_ESTIMATE;
    case Effort::measure: return FFTW_MEASURE;
    case Effort::patient: return FFTW_PATIENT;
    case Effort::exhaustive: return FFTW_EXHAUSTIVE;
  }
  return FFTW_ESTIMATE;
}

/// fftw_init_threads / fftwf_init_threads once (caller holds the planner lock).
void init_threads_locked() {
  static bool done = false;
  if (done) return;
  fftw_init_threads();
  fftwf_init_threads();
  done = true;
}

int alignment_of(void* p, bool single) {
  return single ? fftwf_alignment_of(static_cast<float*>(p)) : fftw_alignment_of(static_cast<double*>(p));
}

/// Bytes spanned by an array whose dims are (n, stride) pairs, `elem` bytes per element.
std::size_t span_bytes(const std::vector<std::pair<std::int64_t, std::int64_t>>& nd, std::size_t elem) {
  std::int64_t last = 0;
  for (const auto& [n, s] : nd) last += (n - 1) * std::abs(s);
  return static_cast<std::size_t>(last + 1) * elem;
}

/// Scratch memory of `bytes` whose address has the same offset modulo 64 as `like`.
struct Scratch {
  void* base = nullptr;
  void* ptr = nullptr;
  Scratch(std::size_t bytes, const void* like) {
    const std::size_t off = reinterpret_cast<std::uintptr_t>(like) % 64;
    base = std::aligned_alloc(64, (bytes + off + 63) / 64 * 64);
    if (!base) throw Error("fft", "out of memory for planning scratch of " + std::to_string(bytes) + " bytes");
    std::memset(base, 0, (bytes + off + 63) / 64 * 64);
    ptr = static_cast<char*>(base) + off;
  }
  ~Scratch() { std::free(base); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

/// Makes an FFTW plan for `k` on arrays `in`/`out` (caller holds the planner lock).
void* make_plan_locked(const PlanKey& k, void* in, void* out) {
  init_threads_locked();
  std::vector<fftw_iodim64> dims(k.dims.size()), hm(k.howmany.size());
  for (std::size_t i = 0; i < dims.size(); ++i) dims[i] = {k.dims[i].n, k.dims[i].is, k.dims[i].os};
  for (std::size_t i = 0; i < hm.size(); ++i) hm[i] = {k.howmany[i].n, k.howmany[i].is, k.howmany[i].os};
  const int rank = static_cast<int>(dims.size()), hrank = static_cast<int>(hm.size());
  const int sign = k.forward ? FFTW_FORWARD : FFTW_BACKWARD;
  if (k.single) {
    fftwf_plan_with_nthreads(k.threads);
    switch (k.kind) {
      case Kind::c2c:
        return fftwf_plan_guru64_dft(rank, dims.data(), hrank, hm.data(), static_cast<fftwf_complex*>(in),
                                     static_cast<fftwf_complex*>(out), sign, k.flags);
      case Kind::r2c:
        return fftwf_plan_guru64_dft_r2c(rank, dims.data(), hrank, hm.data(), static_cast<float*>(in),
                                         static_cast<fftwf_complex*>(out), k.flags);
      case Kind::c2r:
        return fftwf_plan_guru64_dft_c2r(rank, dims.data(), hrank, hm.data(), static_cast<fftwf_complex*>(in),
                                         static_cast<float*>(out), k.flags);
    }
  } else {
    fftw_plan_with_nthreads(k.threads);
    switch (k.kind) {
      case Kind::c2c:
        return fftw_plan_guru64_dft(rank, dims.data(), hrank, hm.data(), static_cast<fftw_complex*>(in),
                                    static_cast<fftw_complex*>(out), sign, k.flags);
      case Kind::r2c:
        return fftw_plan_guru64_dft_r2c(rank, dims.data(), hrank, hm.data(), static_cast<double*>(in),
                                        static_cast<fftw_complex*>(out), k.flags);
      case Kind::c2r:
        return fftw_plan_guru64_dft_c2r(rank, dims.data(), hrank, hm.data(), static_cast<fftw_complex*>(in),
                                        static_cast<double*>(out), k.flags);
    }
  }
  return nullptr;
}

/// Plans `k` (Note [planning on scratch]) and wraps the result.
PlanPtr create_plan(const PlanKey& k, void* in, void* out) {
  const std::size_t real = k.single ? sizeof(float) : sizeof(double);
  const bool measuring = (k.flags & FFTW_ESTIMATE) == 0;
  std::unique_ptr<Scratch> sin, sout;
  void* pin = in;
  void* pout = out;
  if (measuring) {
    std::vector<std::pair<std::int64_t, std::int64_t>> ind, outd;
    for (std::size_t i = 0; i < k.dims.size(); ++i) {
      const bool halved = i + 1 == k.dims.size() && k.kind != Kind::c2c;
      const std::int64_t half = k.dims[i].n / 2 + 1;
      ind.emplace_back(halved && k.kind == Kind::c2r ? half : k.dims[i].n, k.dims[i].is);
      outd.emplace_back(halved && k.kind == Kind::r2c ? half : k.dims[i].n, k.dims[i].os);
    }
    for (const auto& h : k.howmany) {
      ind.emplace_back(h.n, h.is);
      outd.emplace_back(h.n, h.os);
    }
    const std::size_t in_elem = k.kind == Kind::r2c ? real : 2 * real;
    const std::size_t out_elem = k.kind == Kind::c2r ? real : 2 * real;
    sin = std::make_unique<Scratch>(std::max(span_bytes(ind, in_elem), k.inplace ? span_bytes(outd, out_elem) : 0), in);
    pin = sin->ptr;
    if (k.inplace) {
      pout = pin;
    } else {
      sout = std::make_unique<Scratch>(span_bytes(outd, out_elem), out);
      pout = sout->ptr;
    }
  }
  void* h = nullptr;
  {
    std::lock_guard<std::recursive_mutex> lock(planner_mutex());
    h = make_plan_locked(k, pin, pout);
  }
  if (!h) {
    std::ostringstream os;
    os << "FFTW could not plan a "
       << (k.kind == Kind::c2c   ? "c2c"
           : k.kind == Kind::r2c ? "r2c"
                                 : "c2r")
       << " transform of rank " << k.dims.size() << " with " << k.howmany.size() << " batch dims";
    throw Error("fft", os.str());
  }
  return std::make_shared<const Plan>(h, k.single);
}

}  // namespace

int fftw_threads_for_large() { return std::max(1, get_num_threads()); }

bool effort_is_estimate() { return g_effort.load(std::memory_order_relaxed) == static_cast<int>(Effort::estimate); }

const Plan* acquire_plan(PlanKey& k, void* in, void* out, PlanPtr& keep, int threads, bool share) {
  std::int64_t work = 1;
  for (const auto& d : k.dims) work *= d.n;
  for (const auto& d : k.howmany) work *= d.n;
  const Kind kind = k.kind;
  const bool single = k.single;
  if (kind != Kind::c2c) k.forward = kind == Kind::r2c;
  k.inplace = in == out;
  k.align_in = alignment_of(in, single);
  k.align_out = alignment_of(out, single);
  k.flags = effort_flags(static_cast<Effort>(g_effort.load(std::memory_order_relaxed)));
  if (kind == Kind::c2r) k.flags |= k.preserve_input ? FFTW_PRESERVE_INPUT : FFTW_DESTROY_INPUT;
  k.threads = threads > 0 ? threads : fftw_threads_for(work);
  const Plan* plan = cache_find(k, keep, share);
  if (!plan) {
    keep = cache_insert(k, create_plan(k, in, out));
    plan = keep.get();
  }
  return plan;
}

void execute_plan(const Plan* plan, Kind kind, void* in, void* out) {
  if (plan->single) {
    auto p = static_cast<fftwf_plan>(plan->handle);
    switch (kind) {
      case Kind::c2c: fftwf_execute_dft(p, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out)); break;
      case Kind::r2c: fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<fftwf_complex*>(out)); break;
      case Kind::c2r: fftwf_execute_dft_c2r(p, static_cast<fftwf_complex*>(in), static_cast<float*>(out)); break;
    }
  } else {
    auto p = static_cast<fftw_plan>(plan->handle);
    switch (kind) {
      case Kind::c2c: fftw_execute_dft(p, static_cast<fftw_complex*>(in), static_cast<fftw_complex*>(out)); break;
      case Kind::r2c: fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<fftw_complex*>(out)); break;
      case Kind::c2r: fftw_execute_dft_c2r(p, static_cast<fftw_complex*>(in), static_cast<double*>(out)); break;
    }
  }
}

void run_fftw(PlanKey& k, void* in, void* out) {
  for (const auto& d : k.dims)
    if (d.n == 0) return;
  for (const auto& d : k.howmany)
    if (d.n == 0) return;
  PlanPtr keep;
  const Plan* plan = acquire_plan(k, in, out, keep);
  execute_plan(plan, k.kind, in, out);
}

Plan::~Plan() {
  std::lock_guard<std::recursive_mutex> lock(planner_mutex());
  if (single)
    fftwf_destroy_plan(static_cast<fftwf_plan>(handle));
  else
    fftw_destroy_plan(static_cast<fftw_plan>(handle));
}

}  // namespace detail

// ---- planner effort and wisdom ----------------------------------------------------------------------
void set_planner_effort(Effort effort) { detail::g_effort.store(static_cast<int>(effort)); }

Effort planner_effort() { return static_cast<Effort>(detail::g_effort.load()); }

namespace {
constexpr const char* kWisdomMagic = "phasor-fftw-wisdom";

/// Takes ownership of a string FFTW allocated.
std::string take_fftw_string(char* s) {
  if (!s) return std::string();
  std::string r(s);
  std::free(s);  // FFTW documents these strings as allocated with malloc
  return r;
}

std::string current_wisdom_locked(bool single) {
  return take_fftw_string(single ? fftwf_export_wisdom_to_string() : fftw_export_wisdom_to_string());
}
}  // namespace

// File format: one header line "phasor-fftw-wisdom 1 <bytes of double wisdom> <bytes of float
// wisdom>", then FFTW's own double and float wisdom texts back to back.
void export_wisdom(const std::string& path) {
  std::string wd, wf;
  {
    std::lock_guard<std::recursive_mutex> lock(detail::planner_mutex());
    detail::init_threads_locked();
    wd = current_wisdom_locked(false);
    wf = current_wisdom_locked(true);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("export_wisdom", "cannot open '" + path + "' for writing");
  f << kWisdomMagic << " 1 " << wd.size() << " " << wf.size() << "\n" << wd << wf;
  f.flush();
  if (!f) throw Error("export_wisdom", "failed writing wisdom to '" + path + "'");
}

void import_wisdom(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("import_wisdom", "cannot open wisdom file '" + path + "' (missing or unreadable)");
  std::string header;
  std::getline(f, header);
  std::istringstream hs(header);
  std::string magic;
  int version = 0;
  long long nd = -1, nf = -1;
  hs >> magic >> version >> nd >> nf;
  const std::string rest((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (!hs || magic != kWisdomMagic || version != 1 || nd < 0 || nf < 0 ||
      static_cast<std::size_t>(nd + nf) != rest.size())
    throw Error("import_wisdom", "'" + path + "' is not a valid phasor wisdom file (corrupt or truncated)");
  const std::string wd = rest.substr(0, static_cast<std::size_t>(nd));
  const std::string wf = rest.substr(static_cast<std::size_t>(nd));
  std::lock_guard<std::recursive_mutex> lock(detail::planner_mutex());
  detail::init_threads_locked();
  // FFTW's import is not transactional: keep the current wisdom to restore it on failure.
  const std::string old_d = current_wisdom_locked(false), old_f = current_wisdom_locked(true);
  const bool ok_d = fftw_import_wisdom_from_string(wd.c_str()) != 0;
  const bool ok_f = ok_d && fftwf_import_wisdom_from_string(wf.c_str()) != 0;
  if (!ok_d || !ok_f) {
    fftw_forget_wisdom();
    fftwf_forget_wisdom();
    fftw_import_wisdom_from_string(old_d.c_str());
    fftwf_import_wisdom_from_string(old_f.c_str());
    throw Error("import_wisdom", std::string("'") + path + "' holds corrupt " + (ok_d ? "float" : "double") +
                                     " wisdom that FFTW rejected");
  }
}

void forget_wisdom() {
  std::lock_guard<std::recursive_mutex> lock(detail::planner_mutex());
  fftw_forget_wisdom();
  fftwf_forget_wisdom();
}

}  // namespace phasor::fft
