// tests/cuda_emu/runtime.cpp - the CUDA runtime calls phasor makes, on the host (Note [CUDA emulation]
// in emu.hpp): devices, memory, streams, events, copies and kernel launches with their threads.
#include "device_prelude.hpp"  // first: it defines __shared__ before the toolkit's headers do

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "emu.hpp"

/// A captured graph: its work items in capture order (the CUDA headers declare the struct, the emulator defines it).
struct CUgraph_st {
  std::vector<std::function<void()>> nodes;
};
/// An instantiated graph: the nodes, shared with launches still queued when it is destroyed.
struct CUgraphExec_st {
  std::shared_ptr<const std::vector<std::function<void()>>> nodes;
};

// AddressSanitizer's manual poisoning, present when the process carries its runtime (an emulation build
// with PHASOR_EMU_SANITIZE: the kernels are instrumented, the emulator is not and calls it through these).
extern "C" void __asan_poison_memory_region(void const volatile* addr, std::size_t size) __attribute__((weak));
extern "C" void __asan_unpoison_memory_region(void const volatile* addr, std::size_t size) __attribute__((weak));

namespace phasor_emu {

Coords g_coords;

namespace {

/// Marks device bytes as no allocation's (poisoned) or a live allocation's, for instrumented kernels;
/// nothing without the AddressSanitizer runtime.
void poison(const char* p, std::size_t n, bool poisoned) {
  if (n == 0 || !__asan_poison_memory_region) return;
  if (poisoned) __asan_poison_memory_region(p, n);
  else __asan_unpoison_memory_region(p, n);
}

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<std::size_t>(std::strtoull(v, nullptr, 10)) : fallback;
}

constexpr std::size_t kAlign = 512;  // cudaMalloc guarantees 256
constexpr std::size_t kPage = 4096;
// Device memory is unprotected in 2 MiB steps: with transparent huge pages, mprotect then changes one
// page-table entry per 2 MiB instead of 512 (it runs twice per batch of device work).
constexpr std::size_t kHuge = 2 << 20;

/// One emulated device: its memory region, free ranges and allocations. Checks use an allocation's
/// requested size, not the rounded-up size it reserves.
struct Device {
  char* base = nullptr;
  std::size_t capacity = 0;
  std::size_t used = 0;
  std::size_t high = 0;  // end of the highest allocation ever made (page-rounded): what is unprotected
  std::map<std::size_t, std::size_t> free_ranges;                     // offset -> bytes
  std::map<std::size_t, std::pair<std::size_t, std::size_t>> live;    // offset -> (requested, reserved) bytes
};

struct Capture;

struct Stream {
  int device = 0;
  bool legacy = false;
  bool blocking = true;        // orders with the legacy default stream (cudaStreamCreate's default)
  Capture* capture = nullptr;  // the capture sequence it records into (cudaStreamBeginCapture), if any
  std::deque<std::function<void()>> work;
  std::uint64_t queued = 0, done = 0;
};

/// A capture sequence: the work queued on its stream since cudaStreamBeginCapture, in order. A call the
/// capture mode prohibits invalidates it (`invalid` says why): cudaStreamEndCapture then returns no graph.
struct Capture {
  Stream* stream = nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::vector<std::function<void()>> nodes;
  std::string invalid;
};

/// Invalidates capture `c` (null: none) for `why`, keeping the first reason.
void invalidate(Capture* c, const std::string& why) {
  if (c && c->invalid.empty()) c->invalid = why;
}

struct Event {
  int device = 0;
  Stream* stream = nullptr;  // where it was last recorded (nullptr: never)
  Capture* captured = nullptr;  // the capture it was last recorded into (then `stream`/`at` mean nothing)
  std::uint64_t at = 0;      // stream->done must reach this
  bool reported_not_ready = false;
  bool timing = true;        // false when made with cudaEventDisableTiming: cudaEventElapsedTime refuses it
  double time_ms = 0;
};

struct State {
  std::recursive_mutex mu;
  std::vector<Device> devices;
  std::vector<std::unique_ptr<Stream>> legacy;  // per device
  std::set<Stream*> streams;                    // every stream, legacy ones included
  std::set<Event*> events;
  std::vector<Event*> retired_events;            // destroyed, never freed (queued work may still set them)
  std::set<Capture*> captures;                  // capture sequences in progress
  std::set<const void*> graphs, execs;          // live cudaGraph_t / cudaGraphExec_t handles
  std::map<const char*, std::size_t, std::less<>> pinned;  // cudaHostAlloc'ed: start -> bytes
  bool protect = true;
  bool sync = false;
  int sms = 4;
  int access_depth = 0;
  std::uint64_t launches = 0;
  std::uint64_t graph_launches = 0;
  std::uint64_t host_waits = 0;  // calls that block the host until device work is done
  std::map<std::string, int> failures;  // library call -> the status its next call returns (phasor_emu_fail_next)
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
};

State& state();
thread_local int t_device = 0;
thread_local cudaError_t t_last_error = cudaSuccess;
thread_local cudaStreamCaptureMode t_capture_mode = cudaStreamCaptureModeGlobal;  // cudaThreadExchangeStreamCaptureMode

void on_segv(int sig, siginfo_t* info, void* ctx);

State& state() {
  static State* s = [] {
    auto* st = new State;  // never destroyed: kernels may run from static destructors
    const int n = static_cast<int>(env_size("PHASOR_EMU_DEVICES", 2));
    const std::size_t cap = env_size("PHASOR_EMU_MEMORY_MB", 4096) << 20;
    st->protect = env_size("PHASOR_EMU_PROTECT", 1) != 0;
    st->sync = env_size("PHASOR_EMU_SYNC", 0) != 0;
    st->sms = static_cast<int>(env_size("PHASOR_EMU_SMS", 4));
    st->devices.resize(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) {
      Device& dev = st->devices[static_cast<std::size_t>(d)];
      // reserve one huge page more, to start on a 2 MiB boundary
      void* p = mmap(nullptr, cap + kHuge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) {
        std::fprintf(stderr, "phasor_emu: cannot reserve %zu bytes for device %d\n", cap, d);
        std::abort();
      }
      dev.base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) / kHuge * kHuge);
      madvise(dev.base, cap, MADV_HUGEPAGE);
      dev.capacity = cap;
      dev.free_ranges[0] = cap;
      auto s = std::make_unique<Stream>();
      s->device = d;
      s->legacy = true;
      st->streams.insert(s.get());
      st->legacy.push_back(std::move(s));
    }
    struct sigaction sa {};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    return st;
  }();
  return *s;
}

/// Host code touched device memory: name the address and where it came from, then crash as before.
void on_segv(int, siginfo_t* info, void*) {
  const char* a = static_cast<const char*>(info->si_addr);
  State& st = state();
  for (std::size_t d = 0; d < st.devices.size(); ++d) {
    const Device& dev = st.devices[d];
    if (a >= dev.base && a < dev.base + dev.capacity) {
      char msg[200];
      const int n = std::snprintf(msg, sizeof msg,
                                  "phasor_emu: host code touched device memory (cuda:%zu, offset %zu) outside "
                                  "emulated device work; backtrace:\n",
                                  d, static_cast<std::size_t>(a - dev.base));
      if (n > 0) (void)!write(2, msg, static_cast<std::size_t>(n));
      void* frames[64];
      backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
      break;
    }
  }
  // SA_RESETHAND: returning re-runs the access under the default action (a core dump / crash)
}

/// Makes device memory accessible for its lifetime (nested uses keep it open).
struct Access {
  Access() {
    State& st = state();
    if (st.access_depth++ == 0 && st.protect)
      for (auto& d : st.devices)
        if (d.high) mprotect(d.base, d.high, PROT_READ | PROT_WRITE);
  }
  ~Access() {
    State& st = state();
    if (--st.access_depth == 0 && st.protect)
      for (auto& d : st.devices)
        if (d.high) mprotect(d.base, d.high, PROT_NONE);
  }
  Access(const Access&) = delete;
  Access& operator=(const Access&) = delete;
};

/// Runs `s`'s queued work until `upto` items have run.
void flush(Stream* s, std::uint64_t upto) {
  if (s->done >= upto || s->work.empty()) return;
  Access a;
  while (s->done < upto && !s->work.empty()) {
    std::function<void()> w = std::move(s->work.front());
    s->work.pop_front();
    ++s->done;
    w();
  }
}
void flush_all(Stream* s) { flush(s, s->queued); }
/// Runs all queued work of device d (-1: of every device).
void flush_device(int d) {
  for (Stream* s : state().streams)
    if (d < 0 || s->device == d) flush_all(s);
}
/// Whether device d (-1: any device) has queued work that has not run.
bool pending(int d) {
  for (Stream* s : state().streams)
    if ((d < 0 || s->device == d) && s->done < s->queued) return true;
  return false;
}

/// The Stream of handle `h` (nullptr, cudaStreamLegacy, cudaStreamPerThread: the current device's
/// legacy stream), or nullptr for an unknown handle.
Stream* resolve(cudaStream_t h) {
  State& st = state();
  if (h == nullptr || h == cudaStreamLegacy || h == cudaStreamPerThread)
    return st.legacy[static_cast<std::size_t>(t_device)].get();
  auto* s = reinterpret_cast<Stream*>(h);
  return st.streams.count(s) ? s : nullptr;
}

/// Where a pointer range lies.
enum class Where { Device, Pinned, Pageable, Bad };
struct Place {
  Where where = Where::Pageable;
  int device = -1;
};

Place place_of(const void* ptr, std::size_t bytes, std::string& why) {
  State& st = state();
  const char* p = static_cast<const char*>(ptr);
  for (std::size_t d = 0; d < st.devices.size(); ++d) {
    const Device& dev = st.devices[d];
    if (p < dev.base || p >= dev.base + dev.capacity) continue;
    const std::size_t off = static_cast<std::size_t>(p - dev.base);
    auto it = dev.live.upper_bound(off);
    if (it == dev.live.begin()) {
      why = "not inside any live allocation (freed, or never allocated)";
      return {Where::Bad, static_cast<int>(d)};
    }
    --it;
    const std::size_t size = it->second.first;
    if (off >= it->first + std::max<std::size_t>(size, 1)) {
      why = "not inside any live allocation (freed, or never allocated)";
      return {Where::Bad, static_cast<int>(d)};
    }
    if (off + bytes > it->first + size) {
      why = "runs " + std::to_string(off + bytes - it->first - size) + " bytes past the end of its " +
            std::to_string(size) + "-byte allocation";
      return {Where::Bad, static_cast<int>(d)};
    }
    return {Where::Device, static_cast<int>(d)};
  }
  auto it = st.pinned.upper_bound(p);
  if (it != st.pinned.begin()) {
    --it;
    if (p < it->first + it->second) {
      if (p + bytes > it->first + it->second) {
        why = "runs past the end of its pinned host allocation";
        return {Where::Bad, -1};
      }
      return {Where::Pinned, -1};
    }
  }
  return {Where::Pageable, -1};
}

// ---- kernel threads ------------------------------------------------------------------------------
// A thread that may wait at a barrier runs on its own stack (a fiber). Switching saves the callee-saved
// registers and the floating-point control words on the old stack and continues on the new one:
// ucontext's swapcontext also switches signal masks (a system call per switch), far too slow for
// hundreds of threads meeting at a dozen barriers per block.

extern "C" void phasor_emu_switch(void** save_sp, void* load_sp);
asm(R"(
  .text
  .globl phasor_emu_switch
  .hidden phasor_emu_switch
  .type phasor_emu_switch, @function
phasor_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size phasor_emu_switch, .-phasor_emu_switch
)");

constexpr std::size_t kStackBytes = 128 << 10;
enum class FiberState { Fresh, Running, Barrier, Done };

struct Fiber {
  void* sp = nullptr;  // saved stack pointer while switched out
  char* stack = nullptr;
  FiberState state = FiberState::Done;
};

struct Grid {
  std::vector<Fiber> fibers;
  void* scheduler_sp = nullptr;
  int current = -1;     // fiber running now, -1: none
  bool direct = false;  // a thread runs on the scheduler's stack (no barrier may come)
  bool in_kernel = false;
  const std::function<void()>* body = nullptr;
  unsigned threads = 0;
  std::vector<unsigned> order;  // the fibers the current phase runs, in turn
  std::size_t pos = 0;          // the one running now
};
Grid g_grid;

void set_thread(unsigned t) {
  const dim3 b = g_coords.block_dim;
  g_coords.thread = uint3{t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
}

[[noreturn]] void fiber_entry();

/// Makes fiber t ready to start at fiber_entry on its own stack.
void prepare_fiber(unsigned t) {
  Fiber& f = g_grid.fibers[t];
  if (!f.stack) {
    void* p = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) std::abort();
    mprotect(p, kPage, PROT_NONE);  // guard page
    f.stack = static_cast<char*>(p);
  }
  // the frame phasor_emu_switch pops: control words, six registers, then "returns" into fiber_entry
  auto* top = reinterpret_cast<std::uint64_t*>(f.stack + kStackBytes);
  *--top = 0;  // fake return address of fiber_entry: entry sees rsp = 8 (mod 16), as after a call
  *--top = reinterpret_cast<std::uint64_t>(&fiber_entry);
  for (int r = 0; r < 6; ++r) *--top = 0;
  --top;
  std::uint32_t mxcsr;
  std::uint16_t fcw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fcw));
  std::memcpy(reinterpret_cast<char*>(top), &mxcsr, 4);
  std::memcpy(reinterpret_cast<char*>(top) + 4, &fcw, 2);
  f.sp = top;
  f.state = FiberState::Fresh;
}

/// Leaves the running fiber (its stack pointer saved to *save) for the phase's next fiber, or for the
/// scheduler after the last one: fibers hand over to each other directly, one switch per thread.
void switch_next(void** save) {
  if (++g_grid.pos < g_grid.order.size()) {
    const unsigned t = g_grid.order[g_grid.pos];
    Fiber& f = g_grid.fibers[t];
    f.state = FiberState::Running;
    set_thread(t);
    g_grid.current = static_cast<int>(t);
    phasor_emu_switch(save, f.sp);
  } else {
    g_grid.current = -1;
    phasor_emu_switch(save, g_grid.scheduler_sp);
  }
}

/// A fiber's first code: runs the thread, then hands over for good.
[[noreturn]] void fiber_entry() {
  (*g_grid.body)();
  g_grid.fibers[static_cast<std::size_t>(g_grid.current)].state = FiberState::Done;
  void* dead = nullptr;
  switch_next(&dead);
  std::abort();  // never resumed
}

/// Runs the fibers of g_grid.order in turn, each until its next barrier or its end.
void run_phase() {
  if (g_grid.order.empty()) return;
  g_grid.pos = 0;
  const unsigned t = g_grid.order[0];
  Fiber& f = g_grid.fibers[t];
  f.state = FiberState::Running;
  set_thread(t);
  g_grid.current = static_cast<int>(t);
  phasor_emu_switch(&g_grid.scheduler_sp, f.sp);
}

/// Runs one block: thread 0 first on a fiber; without a barrier there, the rest run directly.
void run_block(std::uint64_t launch_no) {
  const unsigned n = g_grid.threads;
  prepare_fiber(0);
  g_grid.order.assign(1, 0);
  run_phase();
  if (g_grid.fibers[0].state == FiberState::Done) {
    g_grid.direct = true;
    const bool reverse = launch_no & 1;
    for (unsigned k = 1; k < n; ++k) {
      const unsigned t = reverse ? n - k : k;
      set_thread(t);
      (*g_grid.body)();
    }
    g_grid.direct = false;
    return;
  }
  // thread 0 waits at a barrier: start the others, then release the barriers one by one
  g_grid.order.clear();
  for (unsigned t = 1; t < n; ++t) {
    prepare_fiber(t);
    g_grid.order.push_back(t);
  }
  run_phase();
  for (std::uint64_t phase = launch_no;; ++phase) {
    g_grid.order.clear();
    const bool reverse = phase & 1;
    for (unsigned k = 0; k < n; ++k) {
      const unsigned t = reverse ? n - 1 - k : k;
      if (g_grid.fibers[t].state == FiberState::Barrier) g_grid.order.push_back(t);
    }
    if (g_grid.order.empty()) break;
    run_phase();
  }
}

void run_grid(dim3 grid, dim3 block, const std::function<void()>& body, std::uint64_t launch_no) {
  g_grid.threads = block.x * block.y * block.z;
  if (g_grid.fibers.size() < g_grid.threads) g_grid.fibers.resize(g_grid.threads);
  g_grid.body = &body;
  g_grid.in_kernel = true;
  g_coords.block_dim = block;
  g_coords.grid_dim = grid;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        g_coords.block = uint3{x, y, z};
        run_block(launch_no);
      }
  g_grid.in_kernel = false;
  g_grid.body = nullptr;
}

const char* error_name(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorIllegalState: return "cudaErrorIllegalState";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorStreamCaptureUnmatched: return "cudaErrorStreamCaptureUnmatched";
    case cudaErrorStreamCaptureIsolation: return "cudaErrorStreamCaptureIsolation";
    case cudaErrorStreamCaptureImplicit: return "cudaErrorStreamCaptureImplicit";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    default: return "cudaErrorUnknown";
  }
}

}  // namespace

// ---- shared with cufft.cpp / cublas.cpp ------------------------------------------------------------

std::recursive_mutex& api_mutex() { return state().mu; }
int device_count() { return static_cast<int>(state().devices.size()); }
int current_device() { return t_device; }

bool take_failure(const char* call, int& status) {
  std::lock_guard<std::recursive_mutex> lk(api_mutex());
  auto& f = state().failures;
  if (f.empty()) return false;
  auto it = f.find(call);
  if (it == f.end()) return false;
  status = it->second;
  f.erase(it);
  return true;
}

void report(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "phasor_emu: %s\n", buf);
}

cudaError_t fail(cudaError_t e) {
  t_last_error = e;
  return e;
}

namespace {
/// Counts a call that blocks the host until queued device work is done (none queued: no wait, as a GPU
/// with nothing to do answers at once); PHASOR_EMU_TRACE_WAITS=1 prints where.
void note_wait(const char* call, bool queued) {
  if (!queued) return;
  ++state().host_waits;
  static const bool trace = env_size("PHASOR_EMU_TRACE_WAITS", 0) != 0;
  if (!trace) return;
  std::fprintf(stderr, "phasor_emu: host wait in %s from:\n", call);
  void* frames[24];
  backtrace_symbols_fd(frames, backtrace(frames, 24), 2);
}

/// A call that stream capture prohibits (a synchronization, an allocation or free, a copy to or from
/// pageable memory) while a capture not begun in relaxed mode is in progress, from a thread whose own
/// mode is not relaxed: every such capture is invalidated and true returned (the call then fails with
/// cudaErrorStreamCaptureUnsupported and does nothing). Single-threaded emulation: global and
/// thread-local captures are treated alike.
bool prohibited_in_capture(const char* call) {
  if (t_capture_mode == cudaStreamCaptureModeRelaxed) return false;
  bool hit = false;
  for (Capture* c : state().captures)
    if (c->mode != cudaStreamCaptureModeRelaxed) {
      invalidate(c, std::string(call) + " during stream capture");
      hit = true;
    }
  if (hit) report("%s during stream capture: the capture is invalidated", call);
  return hit;
}

/// PHASOR_EMU_TRACE_LAUNCHES=1 prints each kernel launch: the kernel's name where its library exports it,
/// else its library and offset (`addr2line -f -C -e <library> <offset>` names it), and the configuration.
void trace_launch(const void* kernel, dim3 grid, dim3 block) {
  static const bool trace = env_size("PHASOR_EMU_TRACE_LAUNCHES", 0) != 0;
  if (!trace) return;
  Dl_info info{};
  std::string name = "?";
  if (kernel && dladdr(kernel, &info) && info.dli_fname) {
    if (info.dli_sname && info.dli_saddr == kernel) {
      int status = 0;
      char* d = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
      name = status == 0 && d ? d : info.dli_sname;
      std::free(d);
    } else {
      char off[32];
      std::snprintf(off, sizeof off, "0x%zx",
                    static_cast<std::size_t>(static_cast<const char*>(kernel) - static_cast<const char*>(info.dli_fbase)));
      name = std::string(info.dli_fname) + " " + off;
    }
  }
  std::fprintf(stderr, "phasor_emu: launch %s grid (%u, %u, %u) block (%u, %u, %u)\n", name.c_str(), grid.x, grid.y,
               grid.z, block.x, block.y, block.z);
}
}  // namespace

bool check_device_range(const void* p, std::size_t bytes, int device, const char* what) {
  std::string why;
  const Place pl = place_of(p, bytes, why);
  if (pl.where == Where::Bad) {
    report("%s: %zu bytes at %p on cuda:%d: %s", what, bytes, p, pl.device, why.c_str());
    return false;
  }
  if (pl.where != Where::Device) {
    report("%s: %p is host memory, not device memory", what, p);
    return false;
  }
  if (device >= 0 && pl.device != device) {
    report("%s: %p is memory of cuda:%d, not of cuda:%d", what, p, pl.device, device);
    return false;
  }
  return true;
}

int stream_device(cudaStream_t s, const char* what) {
  Stream* st = resolve(s);
  if (!st) {
    report("%s: unknown stream handle %p", what, static_cast<void*>(s));
    return -1;
  }
  return st->device;
}

cudaError_t enqueue(cudaStream_t h, std::function<void()> work) {
  State& st = state();
  Stream* s = resolve(h);
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  if (Capture* c = s->capture) {  // recorded, not run: a graph launch runs it
    if (!c->invalid.empty()) return fail(cudaErrorStreamCaptureInvalidated);
    c->nodes.push_back(std::move(work));
    return cudaSuccess;
  }
  // blocking streams and the legacy default stream order each other: run what the new work must follow
  if (s->legacy) {
    for (Stream* o : st.streams)
      if (o != s && o->device == s->device && o->blocking) {
        if (o->capture) {  // the legacy stream would have to wait for a capturing stream
          invalidate(o->capture, "work on the legacy default stream (implicit synchronization)");
          return fail(cudaErrorStreamCaptureImplicit);
        }
        flush_all(o);
      }
  } else if (s->blocking) {
    flush_all(st.legacy[static_cast<std::size_t>(s->device)].get());
  }
  s->work.push_back(std::move(work));
  ++s->queued;
  if (st.sync) flush_all(s);
  return cudaSuccess;
}

void launch(const void* kernel, dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
            std::function<void()> thread) {
  std::lock_guard<std::recursive_mutex> lk(api_mutex());
  State& st = state();
  const std::uint64_t threads = std::uint64_t(block.x) * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535 || shared_bytes > 48 * 1024) {
    report("kernel launch with grid (%u, %u, %u), block (%u, %u, %u), %zu shared bytes: invalid configuration", grid.x,
           grid.y, grid.z, block.x, block.y, block.z, shared_bytes);
    fail(cudaErrorInvalidConfiguration);
    return;
  }
  if (int status = 0; take_failure("cudaLaunchKernel", status)) {  // a test's request (phasor_emu_fail_next)
    fail(static_cast<cudaError_t>(status));
    return;
  }
  const int d = stream_device(stream, "kernel launch");
  if (d < 0) {
    fail(cudaErrorInvalidResourceHandle);
    return;
  }
  if (d != t_device) {
    report("kernel launch on a stream of cuda:%d while cuda:%d is current", d, t_device);
    fail(cudaErrorInvalidResourceHandle);
    return;
  }
  const std::uint64_t no = st.launches++;
  trace_launch(kernel, grid, block);
  enqueue(stream, [grid, block, no, body = std::move(thread)] { run_grid(grid, block, body, no); });
}

void syncthreads() {
  if (!g_grid.in_kernel) {
    report("__syncthreads outside a kernel");
    std::abort();
  }
  if (g_grid.direct) {
    report("__syncthreads reached by a thread although thread 0 of its block finished without one (a barrier "
           "in divergent code: undefined on a GPU)");
    std::abort();
  }
  Fiber& f = g_grid.fibers[static_cast<std::size_t>(g_grid.current)];
  f.state = FiberState::Barrier;
  switch_next(&f.sp);
}

}  // namespace phasor_emu

// ---- the runtime API ------------------------------------------------------------------------------

using namespace phasor_emu;
using Lock = std::lock_guard<std::recursive_mutex>;

namespace {
Event* event_of(cudaEvent_t e) {
  auto* ev = reinterpret_cast<Event*>(e);
  return state().events.count(ev) ? ev : nullptr;
}
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - state().t0).count();
}
}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  Lock lk(api_mutex());
  *count = device_count();
  return *count > 0 ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaGetDevice(int* device) {
  *device = t_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  Lock lk(api_mutex());
  if (device < 0 || device >= device_count()) return fail(cudaErrorInvalidDevice);
  t_device = device;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  Lock lk(api_mutex());
  if (device < 0 || device >= device_count()) return fail(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = state().sms; return cudaSuccess;
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; return cudaSuccess;
    case cudaDevAttrWarpSize: *value = 32; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; return cudaSuccess;
    default: report("cudaDeviceGetAttribute: attribute %d is not emulated", int(attr)); return fail(cudaErrorInvalidValue);
  }
}

cudaError_t cudaGetLastError(void) {
  const cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void) { return t_last_error; }

const char* cudaGetErrorName(cudaError_t e) { return error_name(e); }
const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    default: return "emulated CUDA error";
  }
}

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  Lock lk(api_mutex());
  if (prohibited_in_capture("cudaMalloc")) return fail(cudaErrorStreamCaptureUnsupported);
  Device& dev = state().devices[static_cast<std::size_t>(t_device)];
  const std::size_t size = std::max<std::size_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  for (auto it = dev.free_ranges.begin(); it != dev.free_ranges.end(); ++it) {
    if (it->second < size) continue;
    const std::size_t off = it->first, rest = it->second - size;
    dev.free_ranges.erase(it);
    if (rest) dev.free_ranges[off + size] = rest;
    dev.live[off] = {bytes, size};
    dev.used += size;
    const std::size_t end = std::min(dev.capacity, (off + size + kHuge - 1) / kHuge * kHuge);
    if (end > dev.high) {
      poison(dev.base + dev.high, end - dev.high, true);  // reachable now, but no allocation's
      dev.high = end;
      if (state().protect && state().access_depth > 0) mprotect(dev.base, dev.high, PROT_READ | PROT_WRITE);
    }
    poison(dev.base + off, size, false);
    {
      Access a;
      std::memset(dev.base + off, 0xFF, size);  // uninitialized memory reads as NaN
    }
    poison(dev.base + off + bytes, size - bytes, true);  // the rounding: not the caller's
    *ptr = dev.base + off;
    return cudaSuccess;
  }
  *ptr = nullptr;
  return fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void* ptr) {
  Lock lk(api_mutex());
  if (!ptr) return cudaSuccess;
  if (prohibited_in_capture("cudaFree")) return fail(cudaErrorStreamCaptureUnsupported);
  note_wait("cudaFree", pending(-1));
  flush_device(-1);  // cudaFree waits for the device
  for (Device& dev : state().devices) {
    char* p = static_cast<char*>(ptr);
    if (p < dev.base || p >= dev.base + dev.capacity) continue;
    const std::size_t off = static_cast<std::size_t>(p - dev.base);
    auto it = dev.live.find(off);
    if (it == dev.live.end()) {
      report("cudaFree(%p): not the start of a live allocation", ptr);
      return fail(cudaErrorInvalidValue);
    }
    std::size_t start = off, size = it->second.second;
    dev.live.erase(it);
    dev.used -= size;
    poison(p, size, true);  // a kernel still using it is reported
    // merge with free neighbours, then release the whole huge pages of the free range
    auto next = dev.free_ranges.lower_bound(start);
    if (next != dev.free_ranges.end() && next->first == start + size) {
      size += next->second;
      next = dev.free_ranges.erase(next);
    }
    if (next != dev.free_ranges.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        start = prev->first;
        size += prev->second;
        dev.free_ranges.erase(prev);
      }
    }
    dev.free_ranges[start] = size;
    const std::size_t pa = (start + kHuge - 1) / kHuge * kHuge, pb = (start + size) / kHuge * kHuge;
    if (pb > pa) madvise(dev.base + pa, pb - pa, MADV_DONTNEED);
    return cudaSuccess;
  }
  report("cudaFree(%p): not device memory", ptr);
  return fail(cudaErrorInvalidValue);
}

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total) {
  Lock lk(api_mutex());
  const Device& dev = state().devices[static_cast<std::size_t>(t_device)];
  *free_bytes = dev.capacity - dev.used;
  *total = dev.capacity;
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned int) {
  Lock lk(api_mutex());
  if (prohibited_in_capture("cudaHostAlloc")) return fail(cudaErrorStreamCaptureUnsupported);
  void* p = std::aligned_alloc(kPage, std::max<std::size_t>(kPage, (bytes + kPage - 1) / kPage * kPage));
  if (!p) return fail(cudaErrorMemoryAllocation);
  state().pinned[static_cast<const char*>(p)] = bytes;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
  Lock lk(api_mutex());
  auto it = state().pinned.find(static_cast<const char*>(ptr));
  if (it == state().pinned.end()) {
    report("cudaFreeHost(%p): not memory from cudaHostAlloc", ptr);
    return fail(cudaErrorInvalidValue);
  }
  if (prohibited_in_capture("cudaFreeHost")) return fail(cudaErrorStreamCaptureUnsupported);
  note_wait("cudaFreeHost", pending(-1));
  flush_device(-1);  // cudaFreeHost waits for the device
  state().pinned.erase(it);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
  Lock lk(api_mutex());
  auto* st = new Stream;  // streams live as long as the process (phasor never destroys one)
  st->device = t_device;
  st->blocking = (flags & cudaStreamNonBlocking) == 0;
  state().streams.insert(st);
  *s = reinterpret_cast<cudaStream_t>(st);
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

cudaError_t cudaStreamSynchronize(cudaStream_t h) {
  Lock lk(api_mutex());
  Stream* s = resolve(h);
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  if (prohibited_in_capture("cudaStreamSynchronize")) return fail(cudaErrorStreamCaptureUnsupported);
  note_wait("cudaStreamSynchronize", s->done < s->queued);
  flush_all(s);
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t h) {
  Lock lk(api_mutex());
  Stream* s = resolve(h);
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  if (s->capture) {
    invalidate(s->capture, "cudaStreamQuery on a capturing stream");
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  if (prohibited_in_capture("cudaStreamQuery")) return fail(cudaErrorStreamCaptureUnsupported);
  if (s->done >= s->queued) return cudaSuccess;
  flush_all(s);  // not ready now, done by the next query: work in flight makes progress
  return cudaErrorNotReady;  // not an error: cudaGetLastError stays clean
}

cudaError_t cudaDeviceSynchronize(void) {
  Lock lk(api_mutex());
  if (prohibited_in_capture("cudaDeviceSynchronize")) return fail(cudaErrorStreamCaptureUnsupported);
  note_wait("cudaDeviceSynchronize", pending(t_device));
  flush_device(t_device);
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int flags) {
  Lock lk(api_mutex());
  auto* ev = new Event;
  ev->device = t_device;
  ev->timing = (flags & cudaEventDisableTiming) == 0;
  state().events.insert(ev);
  *e = reinterpret_cast<cudaEvent_t>(ev);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  Lock lk(api_mutex());
  Event* ev = event_of(e);
  if (!ev) return fail(cudaErrorInvalidResourceHandle);
  state().events.erase(ev);
  // work queued to set its time may still run: keep the object (a few bytes per event), reachable
  state().retired_events.push_back(ev);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t h) {
  Lock lk(api_mutex());
  Event* ev = event_of(e);
  Stream* s = resolve(h);
  if (!ev || !s) return fail(cudaErrorInvalidResourceHandle);
  if (ev->device != s->device) {
    report("cudaEventRecord: event of cuda:%d recorded on a stream of cuda:%d", ev->device, s->device);
    return fail(cudaErrorInvalidResourceHandle);
  }
  const cudaError_t r = enqueue(h, [ev] { ev->time_ms = now_ms(); });
  if (r != cudaSuccess) return r;
  ev->captured = s->capture;
  ev->stream = s;
  ev->at = s->queued;
  ev->reported_not_ready = false;
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  Lock lk(api_mutex());
  Event* ev = event_of(e);
  if (!ev) return fail(cudaErrorInvalidResourceHandle);
  if (ev->captured) {  // recorded into a capture: there is nothing to query
    invalidate(ev->captured, "cudaEventQuery on an event recorded in the capture");
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  if (!ev->stream || ev->stream->done >= ev->at) return cudaSuccess;
  if (!ev->reported_not_ready) {
    ev->reported_not_ready = true;
    return cudaErrorNotReady;  // not an error: cudaGetLastError stays clean
  }
  flush(ev->stream, ev->at);
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  Lock lk(api_mutex());
  Event* ev = event_of(e);
  if (!ev) return fail(cudaErrorInvalidResourceHandle);
  if (prohibited_in_capture("cudaEventSynchronize")) return fail(cudaErrorStreamCaptureUnsupported);
  if (ev->captured) return fail(cudaErrorStreamCaptureUnsupported);
  note_wait("cudaEventSynchronize", ev->stream && ev->stream->done < ev->at);
  if (ev->stream) flush(ev->stream, ev->at);
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  Lock lk(api_mutex());
  Event *ea = event_of(a), *eb = event_of(b);
  if (!ea || !eb || !ea->timing || !eb->timing) return fail(cudaErrorInvalidResourceHandle);
  if (!ea->stream || !eb->stream || ea->stream->done < ea->at || eb->stream->done < eb->at)
    return fail(cudaErrorNotReady);
  *ms = static_cast<float>(eb->time_ms - ea->time_ms);
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t h, cudaEvent_t e, unsigned int) {
  Lock lk(api_mutex());
  Event* ev = event_of(e);
  Stream* waiter = resolve(h);
  if (!ev || !waiter) return fail(cudaErrorInvalidResourceHandle);
  if (ev->captured != waiter->capture && (ev->captured || waiter->capture)) {
    // one capture's event waited for outside it, or a capturing stream waiting for outside work: the
    // emulator captures one stream at a time (no fork/join of streams into a capture)
    for (Capture* c : {ev->captured, waiter->capture}) invalidate(c, "cudaStreamWaitEvent across a capture's boundary");
    return fail(cudaErrorStreamCaptureIsolation);
  }
  if (ev->captured) return cudaSuccess;  // same capture, same stream: already in order
  if (!ev->stream) return cudaSuccess;  // never recorded: nothing to wait for
  Stream* producer = ev->stream;
  const std::uint64_t at = ev->at;  // the event as recorded now, whatever is recorded into it later
  return enqueue(h, [producer, at] { flush(producer, at); });
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t h) {
  Lock lk(api_mutex());
  Stream* s = resolve(h);
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  if (bytes == 0) return cudaSuccess;
  std::string wd, ws;
  const Place pd = place_of(dst, bytes, wd), ps = place_of(src, bytes, ws);
  const bool dst_dev = pd.where == Where::Device, src_dev = ps.where == Where::Device;
  const char* names[] = {"HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice", "Default"};
  const char* kname = kind >= 0 && kind <= 4 ? names[kind] : "?";
  if (pd.where == Where::Bad || ps.where == Where::Bad) {
    report("cudaMemcpyAsync(%s, %zu bytes): %s %s", kname, bytes, pd.where == Where::Bad ? "destination" : "source",
           (pd.where == Where::Bad ? wd : ws).c_str());
    return fail(cudaErrorInvalidValue);
  }
  const bool want_dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool want_src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind != cudaMemcpyDefault && (dst_dev != want_dst_dev || src_dev != want_src_dev)) {
    report("cudaMemcpyAsync(%s): destination is %s memory, source is %s memory", kname, dst_dev ? "device" : "host",
           src_dev ? "device" : "host");
    return fail(cudaErrorInvalidValue);
  }
  if ((dst_dev && pd.device != s->device && src_dev && ps.device != s->device)) {
    report("cudaMemcpyAsync: device-to-device copy between other devices than the stream's (cuda:%d)", s->device);
    return fail(cudaErrorInvalidValue);
  }
  if (s->capture && ((!src_dev && ps.where == Where::Pageable) || (!dst_dev && pd.where == Where::Pageable))) {
    // a copy from or to pageable memory is synchronous with the host: it cannot be captured
    invalidate(s->capture, "cudaMemcpyAsync to or from pageable host memory");
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  if (!src_dev && ps.where == Where::Pageable && dst_dev) {
    // pageable to device: the stream's earlier work is waited for, the source staged before the call returns
    note_wait("cudaMemcpyAsync from pageable memory", s->done < s->queued);
    auto copy = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + bytes);
    return enqueue(h, [dst, copy] { std::memcpy(dst, copy->data(), copy->size()); });
  }
  const cudaError_t r = enqueue(h, [dst, src, bytes] { std::memcpy(dst, src, bytes); });
  if (r == cudaSuccess && !dst_dev && pd.where == Where::Pageable) {  // to pageable memory: synchronous
    note_wait("cudaMemcpyAsync to pageable memory", true);  // the copy itself is waited for
    flush_all(s);
  }
  return r;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  Lock lk(api_mutex());
  if (prohibited_in_capture("cudaMemcpy")) return fail(cudaErrorStreamCaptureUnsupported);
  const std::uint64_t waits = state().host_waits;
  const cudaError_t r = cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
  if (r == cudaSuccess) flush_all(resolve(nullptr));
  state().host_waits = waits + 1;  // a synchronous copy: one wait, whatever the copy counted
  return r;
}

/// Calls so far that blocked the host until device work was done (synchronizations, synchronous copies,
/// frees): a warm training step should make none.
std::uint64_t phasor_emu_host_waits(void) {
  Lock lk(api_mutex());
  return state().host_waits;
}

/// Makes the next call of the emulated library function `call` fail with `status` (tests of error paths).
void phasor_emu_fail_next(const char* call, int status) {
  Lock lk(api_mutex());
  state().failures[call] = status;
}

/// Kernel launches so far (not counting those a bad configuration refused).
std::uint64_t phasor_emu_launches(void) {
  Lock lk(api_mutex());
  return state().launches;
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes,
                                cudaStream_t h) {
  Lock lk(api_mutex());
  if (!resolve(h)) return fail(cudaErrorInvalidResourceHandle);
  if (dst_device < 0 || dst_device >= device_count() || src_device < 0 || src_device >= device_count())
    return fail(cudaErrorInvalidDevice);
  if (bytes == 0) return cudaSuccess;
  if (!check_device_range(dst, bytes, dst_device, "cudaMemcpyPeerAsync destination") ||
      !check_device_range(src, bytes, src_device, "cudaMemcpyPeerAsync source"))
    return fail(cudaErrorInvalidValue);
  return enqueue(h, [dst, src, bytes] { std::memcpy(dst, src, bytes); });
}

// ---- stream capture and graphs: a graph is the captured work items, run in order by one queued item ----

cudaError_t cudaStreamBeginCapture(cudaStream_t h, cudaStreamCaptureMode mode) {
  Lock lk(api_mutex());
  Stream* s = resolve(h);
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  if (s->legacy) {
    report("cudaStreamBeginCapture: the legacy default stream cannot be captured");
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  if (s->capture) return fail(cudaErrorIllegalState);
  auto* c = new Capture;
  c->stream = s;
  c->mode = mode;
  s->capture = c;
  state().captures.insert(c);
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t h, cudaGraph_t* graph) {
  Lock lk(api_mutex());
  Stream* s = resolve(h);
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  Capture* c = s->capture;
  if (!c) return fail(cudaErrorIllegalState);
  s->capture = nullptr;
  state().captures.erase(c);
  for (Event* ev : state().events)
    if (ev->captured == c) ev->captured = nullptr, ev->stream = nullptr;  // as never recorded
  std::unique_ptr<Capture> owned(c);
  *graph = nullptr;
  if (!c->invalid.empty()) return fail(cudaErrorStreamCaptureInvalidated);
  auto* g = new CUgraph_st{std::move(c->nodes)};
  state().graphs.insert(g);
  *graph = g;
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t h, cudaStreamCaptureStatus* status) {
  Lock lk(api_mutex());
  Stream* s = resolve(h);
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  *status = !s->capture                 ? cudaStreamCaptureStatusNone
            : s->capture->invalid.empty() ? cudaStreamCaptureStatusActive
                                          : cudaStreamCaptureStatusInvalidated;
  return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  std::swap(*mode, t_capture_mode);
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  Lock lk(api_mutex());
  if (!state().graphs.count(graph)) return fail(cudaErrorInvalidValue);
  auto* e = new CUgraphExec_st{std::make_shared<const std::vector<std::function<void()>>>(graph->nodes)};
  state().execs.insert(e);
  *exec = e;
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t h) {
  Lock lk(api_mutex());
  if (!state().execs.count(exec)) return fail(cudaErrorInvalidValue);
  std::shared_ptr<const std::vector<std::function<void()>>> nodes = exec->nodes;
  const cudaError_t r = enqueue(h, [nodes] {
    for (const auto& n : *nodes) n();
  });
  if (r == cudaSuccess) ++state().graph_launches;
  return r;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, std::size_t* count) {
  Lock lk(api_mutex());
  if (!state().graphs.count(graph) || nodes) return fail(cudaErrorInvalidValue);  // only the count is emulated
  *count = graph->nodes.size();
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  Lock lk(api_mutex());
  if (!state().execs.erase(exec)) return fail(cudaErrorInvalidValue);
  delete exec;  // a queued launch keeps its nodes alive
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  Lock lk(api_mutex());
  if (!state().graphs.erase(graph)) return fail(cudaErrorInvalidValue);
  delete graph;
  return cudaSuccess;
}

/// Graph launches so far (cudaGraphLaunch calls that queued their graph).
std::uint64_t phasor_emu_graph_launches(void) {
  Lock lk(api_mutex());
  return state().graph_launches;
}

cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t h) {
  Lock lk(api_mutex());
  const int d = stream_device(h, "cudaMemsetAsync");
  if (d < 0) return fail(cudaErrorInvalidResourceHandle);
  if (bytes == 0) return cudaSuccess;
  if (!check_device_range(dst, bytes, d, "cudaMemsetAsync")) return fail(cudaErrorInvalidValue);
  return enqueue(h, [dst, value, bytes] { std::memset(dst, value, bytes); });
}

}  // extern "C"
