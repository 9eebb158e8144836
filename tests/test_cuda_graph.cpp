// tests/test_cuda_graph.cpp - cuda::Graph (Note [CUDA graphs]): captured work replays on new inputs as the
// same work run eagerly would, whole FNO training steps included; what cannot be captured throws and
// leaves the device as it was; memory a live graph may touch is not reused. GPU-only cases (skipped
// without a GPU; the CUDA emulation build runs them).
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <string>

#include <phasor/phasor.hpp>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;
namespace F = phasor::nn::functional;

namespace {

/// A fresh CPU sample moved to the GPU.
Tensor gpu_randn(const Shape& s) { return randn(s, float32).to(kDev); }

/// An FNO of `d` spatial dims on the GPU, its parameters drawn from `seed`.
std::unique_ptr<nn::FNO> make_fno(int d, std::uint64_t seed) {
  manual_seed(seed);
  auto m = std::make_unique<nn::FNO>(nn::FNOOptions().in_channels(2).out_channels(1).hidden_channels(8).modes(d == 1 ? Shape{6} : Shape{4, 4})
                .n_layers(2).projection_channels(16));
  m->to(kDev);
  return m;
}

/// max rel_diff over two models' parameters.
double param_diff(nn::FNO& a, nn::FNO& b) {
  const auto pa = a.parameters(), pb = b.parameters();
  REQUIRE(pa.size() == pb.size());
  double worst = 0;
  for (std::size_t i = 0; i < pa.size(); ++i) worst = std::max(worst, rel_diff(pa[i], pb[i]));
  return worst;
}

}  // namespace

TEST_CASE("cuda graph: a replay runs the captured work again on the inputs' new values" * doctest::skip(!kGpu)) {
  Tensor x = zeros({3, 1000}, float32, kDev);
  const Tensor w = gpu_randn({1000});
  Tensor y;
  auto work = [&] { y = ((x * w + 1.0).exp() * 0.5).sum({1}); };
  work();  // warm up (as every capture should be)
  cuda::Graph g;
  CHECK_FALSE(g.is_captured());
  g.capture(work);
  CHECK(g.is_captured());
  CHECK(g.device() == 0);
  CHECK_FALSE(cuda::is_capturing());
  for (int k = 0; k < 3; ++k) {
    const Tensor xs = randn({3, 1000}, float32);
    x.copy_(xs.to(kDev));
    // one graph launch: no kernel launch, no host wait
    CHECK((emu_count(kDev, EmuCounter::Launches, [&] { g.replay(); }) <= 0));
    const Tensor expect = ((xs * w.to(Device::cpu()) + 1.0).exp() * 0.5).sum({1});
    CHECK(rel_diff(y, expect) < 1e-6);
  }
  const long graph_launches = emu_count(kDev, EmuCounter::GraphLaunches, [&] { g.replay(); });
  CHECK((graph_launches == 1 || graph_launches == -1));
  // a graph moves; reset() discards the capture, after which the graph can capture again
  cuda::Graph h(std::move(g));
  CHECK(h.is_captured());
  CHECK_FALSE(g.is_captured());
  h.reset();
  CHECK_FALSE(h.is_captured());
  h.capture([&] { y = x * 3.0; });
  x.fill_(2.0);
  h.replay();
  CHECK(rel_diff(y, full({3, 1000}, 6.0, float32)) == 0);
}

TEST_CASE("cuda graph: memory a live graph may touch is not reused until the graph is reset" * doctest::skip(!kGpu)) {
  Tensor src = gpu_randn({4096});
  const Tensor expect = src.to(Device::cpu()) * 2.0;
  Tensor out;
  cuda::Graph g;
  g.capture([&] { out = src * 2.0; });
  src = Tensor();  // the graph still reads its memory
  const Tensor other = full({4096}, 7.0, float32, kDev);  // must not land on src's block
  g.replay();
  CHECK(rel_diff(out, expect) == 0);
  CHECK(rel_diff(other, full({4096}, 7.0, float32)) == 0);
  g.reset();
}

TEST_CASE("cuda graph: whole FNO training steps with SGD replay as eager steps do, the lr read at each replay" *
          doctest::skip(!kGpu)) {
  for (int d : {1, 2}) {
    CAPTURE(d);
    const auto pg = make_fno(d, 5), pe = make_fno(d, 5);
    nn::FNO &graphed = *pg, &eager = *pe;
    REQUIRE(param_diff(graphed, eager) == 0);
    optim::SGD sg(graphed.parameters(), optim::SGDOptions(1e-2).momentum(0.9).weight_decay(1e-4));
    optim::SGD se(eager.parameters(), optim::SGDOptions(1e-2).momentum(0.9).weight_decay(1e-4));
    const Shape xs = d == 1 ? Shape{3, 2, 32} : Shape{3, 2, 16, 16}, ys = d == 1 ? Shape{3, 1, 32} : Shape{3, 1, 16, 16};
    Tensor x = gpu_randn(xs), y = gpu_randn(ys);  // the graph's inputs: new batches are copied in
    Tensor loss;
    auto step = [&](nn::FNO& m, optim::SGD& opt) {
      loss = F::relative_lp_loss(m.forward(x), y);
      loss.backward();
      opt.step();
    };
    for (auto* p : {&graphed, &eager}) {  // warm-up: plans, caches and momentum buffers are made here
      optim::SGD& opt = p == &graphed ? sg : se;
      opt.zero_grad();
      step(*p, opt);
    }
    sg.zero_grad();  // the captured backward makes the gradients; each replay overwrites them
    cuda::Graph g;
    g.capture([&] { step(graphed, sg); });
    const Tensor graphed_loss = loss;
    for (int k = 0; k < 3; ++k) {
      CAPTURE(k);
      x.copy_(gpu_randn(xs));
      y.copy_(gpu_randn(ys));
      if (k > 0)  // a new lr reaches the replay (Note [host values in CUDA graphs])
        for (optim::SGD* o : {&sg, &se}) o->param_groups()[0].set_lr(1e-2 * (k == 1 ? 3.0 : 0.25));
      const long waits = emu_count(kDev, EmuCounter::HostWaits, [&] { g.replay(); });
      CHECK((waits == 0 || waits == -1));
      se.zero_grad();
      step(eager, se);
      CHECK(rel_diff(graphed_loss, loss) < 1e-5);
      CHECK(param_diff(graphed, eager) < 1e-5);
    }
  }
}

TEST_CASE("cuda graph: forward and backward captured, a host-counted Adam stepping after each replay" * doctest::skip(!kGpu)) {
  const auto pg = make_fno(2, 9), pe = make_fno(2, 9);
  nn::FNO &graphed = *pg, &eager = *pe;
  optim::AdamW ag(graphed.parameters(), optim::AdamWOptions(1e-3)), ae(eager.parameters(), optim::AdamWOptions(1e-3));
  Tensor x = gpu_randn({2, 2, 16, 16});
  const Tensor y = gpu_randn({2, 1, 16, 16});
  auto fwd_bwd = [&](nn::FNO& m) {
    Tensor loss = F::relative_lp_loss(m.forward(x), y);
    loss.backward();
    return loss;
  };
  fwd_bwd(graphed);  // warm-up
  ag.step();
  ag.zero_grad();
  fwd_bwd(eager);
  ae.step();
  cuda::Graph g;
  Tensor graphed_loss;
  g.capture([&] { graphed_loss = fwd_bwd(graphed); });
  for (int k = 0; k < 3; ++k) {
    x.copy_(gpu_randn({2, 2, 16, 16}));
    g.replay();
    ag.step();  // reads the gradients the replay wrote (no zero_grad between replays)
    ae.zero_grad();
    const Tensor loss = fwd_bwd(eager);
    ae.step();
    CHECK(rel_diff(graphed_loss, loss) < 1e-5);
    CHECK(param_diff(graphed, eager) < 1e-5);
  }
}

TEST_CASE("cuda graph: whole FNO training steps with capturable AdamW replay as eager Adam steps do, under an LR "
          "scheduler" * doctest::skip(!kGpu)) {
  const auto pg = make_fno(1, 13), pe = make_fno(1, 13);
  nn::FNO &graphed = *pg, &eager = *pe;
  // the graphed optimizer keeps its step counts on the GPU; the eager one on the host
  optim::AdamW ag(graphed.parameters(), optim::AdamWOptions(1e-2).amsgrad(true).capturable(true));
  optim::AdamW ae(eager.parameters(), optim::AdamWOptions(1e-2).amsgrad(true));
  Tensor x = gpu_randn({3, 2, 32}), y = gpu_randn({3, 1, 32});
  Tensor loss;
  auto step = [&](nn::FNO& m, optim::AdamW& opt) {
    loss = F::relative_lp_loss(m.forward(x), y);
    loss.backward();
    optim::clip_grad_norm_(m.parameters(), 0.05);  // on the device: no host round trip to capture
    opt.step();
  };
  ag.zero_grad();
  step(graphed, ag);  // warm-up: the state (step counts on the GPU) is made here
  ae.zero_grad();
  step(eager, ae);
  ag.zero_grad();
  cuda::Graph g;
  g.capture([&] { step(graphed, ag); });
  const Tensor graphed_loss = loss;
  // the schedulers change the lr between replays: each replay reads the rate of its moment
  optim::StepLR sched_g(ag, 1, 0.5), sched_e(ae, 1, 0.5);
  for (int k = 0; k < 4; ++k) {
    CAPTURE(k);
    x.copy_(gpu_randn({3, 2, 32}));
    g.replay();
    ae.zero_grad();
    step(eager, ae);
    CHECK(rel_diff(graphed_loss, loss) < 1e-5);
    CHECK(param_diff(graphed, eager) < 1e-5);
    sched_g.step();
    sched_e.step();
    CHECK(ag.param_groups()[0].lr() == ae.param_groups()[0].lr());
  }
  CHECK(ag.param_groups()[0].lr() == doctest::Approx(1e-2 / 16));
  // each replay advanced the device-side counts: warm-up + 4 replays (the capture itself ran nothing)
  const Tensor p0 = graphed.parameters()[0];
  CHECK(ag.state(p0).at("step").device() == kDev);
  CHECK(ag.state(p0).at("step").item<double>() == 5);
}

TEST_CASE("cuda graph: what cannot be captured throws, discards the capture and leaves the device as it was" *
          doctest::skip(!kGpu)) {
  const Tensor x = gpu_randn({64});
  const cuda::Stream before = cuda::current_stream();
  cuda::Graph g;
  CHECK_THROWS_WITH_AS(g.replay(), "[cuda.Graph.replay] nothing captured (call capture or capture_begin/capture_end)",
                       Error);
  CHECK_THROWS_WITH_AS(g.capture_end(), "[cuda.Graph.capture_end] no capture in progress (call capture_begin first)",
                       Error);
  CHECK_THROWS_WITH_AS(g.capture_begin(7), doctest::Contains("[cuda.Graph.capture_begin] device cuda:7 does not exist"),
                       Error);
  auto after_failure = [&] {  // nothing half-done: no capture, the same current stream, eager work works
    CHECK_FALSE(g.is_captured());
    CHECK_FALSE(cuda::is_capturing());
    CHECK(cuda::current_stream() == before);
    CHECK(rel_diff(x + 1.0, x.to(Device::cpu()) + 1.0) == 0);
  };
  // the host waits for the GPU
  CHECK_THROWS_WITH_AS(g.capture([&] { (void)(x * 2.0).sum().item<float>(); }),
                       doctest::Contains("[to] a copy between the CPU and a GPU cannot be captured into a CUDA graph "
                                         "(capturing on cuda:0)"),
                       Error);
  after_failure();
  CHECK_THROWS_WITH_AS(g.capture([&] { cuda::synchronize(); }),
                       doctest::Contains("cudaErrorStreamCaptureUnsupported"), Error);
  after_failure();
  // random numbers: only the default generator's counters can be read by each replay; randperm is host work
  Generator own(5);
  const std::uint64_t own0 = own.offset(), default0 = default_generator().offset();
  CHECK_THROWS_WITH_AS(g.capture([&] { (void)randn({4}, float32, kDev, &own); }),
                       doctest::Contains("[randn] random numbers from a Generator other than the default one cannot be "
                                         "captured into a CUDA graph (capturing on cuda:0)"),
                       Error);
  after_failure();
  CHECK_THROWS_WITH_AS(g.capture([&] { (void)randint(0, 9, {4}, int64, kDev); (void)rand({4}, float32, kDev, &own); }),
                       doctest::Contains("[rand] random numbers from a Generator other than the default one"), Error);
  after_failure();
  CHECK_THROWS_WITH_AS(g.capture([&] { (void)randperm(6, int64, kDev); }),
                       doctest::Contains("[randperm] a random permutation cannot be captured into a CUDA graph"), Error);
  after_failure();
  CHECK(own.offset() == own0);  // the failed captures drew nothing
  CHECK(default_generator().offset() == default0);
  // a transform whose cuFFT plan was never made
  CHECK_THROWS_WITH_AS(g.capture([&] { (void)fft::rfft(x.reshape({8, 8})); }),
                       doctest::Contains("[fft] making a cuFFT plan cannot be captured into a CUDA graph"), Error);
  after_failure();
  // optimizers: Adam's step count lives on the host; SGD's first momentum step starts its buffer there
  Tensor p = gpu_randn({16}).requires_grad_();
  (p * p).sum().backward();
  optim::Adam adam({p}, optim::AdamOptions(1e-2));
  adam.step();
  const Tensor p1 = p.detach().clone();
  CHECK_THROWS_WITH_AS(g.capture([&] { adam.step(); }),
                       doctest::Contains("[optim.Adam] the step cannot be captured into a CUDA graph"), Error);
  after_failure();
  CHECK(adam.state(p).at("step").item<double>() == 1);
  CHECK(rel_diff(p, p1) == 0);
  optim::Adam fresh({p}, optim::AdamOptions(1e-2).capturable(true));  // capturable, but its state is not made yet
  CHECK_THROWS_WITH_AS(g.capture([&] { fresh.step(); }),
                       doctest::Contains("[optim.Adam] the first (capturable) step cannot be captured"), Error);
  after_failure();
  CHECK(fresh.state(p).empty());
  optim::SGD sgd({p}, optim::SGDOptions(1e-2).momentum(0.9));
  CHECK_THROWS_WITH_AS(g.capture([&] { sgd.step(); }),
                       doctest::Contains("[optim.SGD] the first momentum step cannot be captured"), Error);
  after_failure();
  CHECK(sgd.state(p).empty());
  // one capture at a time per thread; a graph holding a capture must be reset first
  cuda::Graph g2;
  g.capture_begin();
  CHECK(cuda::is_capturing());
  CHECK_THROWS_WITH_AS(g.capture_begin(), "[cuda.Graph.capture_begin] this graph is already capturing", Error);
  CHECK_THROWS_WITH_AS(g2.capture_begin(),
                       "[cuda.Graph.capture_begin] the calling thread is already capturing a graph on cuda:0", Error);
  CHECK_THROWS_WITH_AS(g.reset(), "[cuda.Graph.reset] a capture is in progress (end it with capture_end first)", Error);
  CHECK_THROWS_WITH_AS(g.replay(), "[cuda.Graph.replay] the capture has not ended (call capture_end first)", Error);
  Tensor y = x * 2.0;
  g.capture_end();
  CHECK_THROWS_WITH_AS(g.capture_begin(), "[cuda.Graph.capture_begin] this graph already holds a capture (reset() discards it)",
                       Error);
  g.replay();
  CHECK(rel_diff(y, x.to(Device::cpu()) * 2.0) == 0);
}

// Note [device checks in CUDA graphs]: index tensors already on the GPU are checked by the device on every
// replay; a bad one makes replay() throw the eager op's message for the first offending value, in the index's
// logical order, and the failed op and every later checked op of that replay change nothing.
TEST_CASE("cuda graph: index ops on device indices replay with each replay's indices, and replay() reports a bad one" *
          doctest::skip(!kGpu)) {
  manual_seed(41);
  const Tensor x = gpu_randn({5, 7}), acc = gpu_randn({5, 7}), src = gpu_randn({5, 3}), w = gpu_randn({5, 3});
  const Tensor istore = zeros({6}, int64, kDev), gstore = zeros({3, 5}, int64, kDev);
  const Tensor isel = istore.slice(0, 0, 6, 2);  // strided views: the checks walk the logical order
  const Tensor gidx = gstore.t();                // (5, 3)
  auto set = [](const Tensor& view, const std::vector<std::int64_t>& v) {
    Tensor dst = view;  // a handle to the same storage
    dst.copy_(from_vector(v, view.shape()).to(kDev));
  };
  set(isel, {6, 0, -2});
  set(gidx, {0, 6, 3, 1, 1, 1, 2, 5, 4, 6, 0, 0, 3, 2, 1});
  Tensor xp = gpu_randn({5, 7}).requires_grad_();
  Tensor a, b, c, d;
  cuda::Graph g;
  g.capture([&] {
    a = index_select(x, 1, isel);
    b = gather(x, 1, gidx);
    c = index_add(acc, 1, isel, src);
    d = scatter_add(acc, 1, gidx, src);
    (index_select(xp, 1, isel) * w).sum().backward();  // its gradient: an index_add, checked as well
  });
  const Tensor xc = x.to(Device::cpu()), accc = acc.to(Device::cpu()), srcc = src.to(Device::cpu());
  auto check_outputs = [&] {
    const Tensor ic = isel.to(Device::cpu()), gc = gidx.to(Device::cpu());
    CHECK(rel_diff(a, index_select(xc, 1, ic)) == 0);
    CHECK(rel_diff(b, gather(xc, 1, gc)) == 0);
    CHECK(rel_diff(c, index_add(accc, 1, ic, srcc)) <= 1e-6);
    CHECK(rel_diff(d, scatter_add(accc, 1, gc, srcc)) <= 1e-6);
    CHECK(rel_diff(xp.grad(), index_add(zeros({5, 7}), 1, ic, w.to(Device::cpu()))) <= 1e-6);
  };
  auto replay = [&] {  // a replay of a graph with index checks waits for its end to read them
    const long waits = emu_count(kDev, EmuCounter::HostWaits, [&] { g.replay(); });
    CHECK((waits == 1 || waits == -1));
  };
  replay();
  check_outputs();
  set(isel, {-7, 3, 3});  // new in-range values, negative ones counting from the end
  set(gidx, {6, 6, 6, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2});
  replay();
  check_outputs();
  // an index out of range: the first offending value (9, not -8) is named; the failed op writes zeros, so does
  // the later gather, and neither accumulation adds anything
  set(isel, {6, 9, -8});
  CHECK_THROWS_WITH_AS(g.replay(), "[index_select] index 9 out of range for a dim of size 7 (in a CUDA graph replay)",
                       Error);
  CHECK(rel_diff(a, zeros({5, 3})) == 0);
  CHECK(rel_diff(b, zeros({5, 3})) == 0);
  CHECK(rel_diff(c, accc) == 0);
  CHECK(rel_diff(d, accc) == 0);
  // the eager op says the same, without the suffix
  CHECK_THROWS_WITH_AS(index_select(x, 1, isel), "[index_select] index 9 out of range for a dim of size 7", Error);
  set(isel, {1, 2, 3});
  // gather's index: logical (1, 2) = 8 comes first, though storage (0, 3) = -1 precedes it in memory
  set(gidx, {0, 0, 0, 0, 0, 8, 0, 0, 0, -1, 0, 0, 0, 0, 0});
  CHECK_THROWS_WITH_AS(g.replay(), "[gather] index 8 out of range for dim 1 of size 7 (in a CUDA graph replay)", Error);
  CHECK_THROWS_WITH_AS(gather(x, 1, gidx), "[gather] index 8 out of range for dim 1 of size 7", Error);
  CHECK(rel_diff(a, index_select(xc, 1, isel.to(Device::cpu()))) == 0);  // index_select ran before the failure
  CHECK(rel_diff(b, zeros({5, 3})) == 0);
  CHECK(rel_diff(d, accc) == 0);
  // good indices again: the check words are reset before every replay
  set(gidx, {1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1});
  replay();
  check_outputs();
  // such a replay waits, so another capture cannot hold it
  cuda::Graph outer;
  CHECK_THROWS_WITH_AS(outer.capture([&] { g.replay(); }),
                       "[cuda.Graph.replay] a replay of a graph with device checks cannot be captured into a CUDA graph "
                       "(capturing on cuda:0): it waits for the replay to read them (Note [device checks in CUDA graphs])",
                       Error);
  CHECK_FALSE(cuda::is_capturing());
  replay();
  check_outputs();
  // cross_entropy checks its class targets the same way (ignore_index exempt) and masks bad ones before its
  // own gather, which takes no check of its own
  const Tensor logits = gpu_randn({4, 6}).requires_grad_();
  const Tensor target = from_vector<std::int64_t>({5, 0, -100, 3}).to(kDev);
  Tensor loss;
  cuda::Graph h;
  h.capture([&] {
    loss = F::cross_entropy(logits, target);
    loss.backward();
  });
  auto ce_agrees = [&] {
    const Tensor lc = logits.detach().to(Device::cpu()).requires_grad_();
    const Tensor want = F::cross_entropy(lc, target.to(Device::cpu()));
    want.backward();
    CHECK(rel_diff(loss, want) <= 1e-6);
    CHECK(rel_diff(logits.grad(), lc.grad()) <= 1e-6);
  };
  h.replay();
  ce_agrees();
  set(target, {1, -100, 4, 4});
  h.replay();
  ce_agrees();
  set(target, {5, 6, -100, -1});
  CHECK_THROWS_WITH_AS(h.replay(), "[cross_entropy] target 6 is out of bounds for 6 classes (in a CUDA graph replay)",
                       Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(logits, target), "[cross_entropy] target 6 is out of bounds for 6 classes", Error);
  // indices the library builds in range (pad's sources) take no check: no wait after such a replay
  const Tensor padded_in = gpu_randn({3, 8});
  Tensor padded = pad(padded_in, {2, 3}, PadMode::reflect);  // warm: its source positions are a cached constant
  cuda::Graph k;
  k.capture([&] { padded = pad(padded_in, {2, 3}, PadMode::reflect); });
  CHECK(emu_count(kDev, EmuCounter::HostWaits, [&] { k.replay(); }) <= 0);
  CHECK(rel_diff(padded, pad(padded_in.to(Device::cpu()), {2, 3}, PadMode::reflect)) == 0);
}

TEST_CASE("cuda graph: a failed replay leaves an in-place index_put_'s target as it was, and take reads nothing" *
          doctest::skip(!kGpu)) {
  const Tensor target = zeros({4, 5}, float64, kDev), rows = from_vector<std::int64_t>({0, 3}).to(kDev);
  const Tensor cols = from_vector<std::int64_t>({1, 4}).to(kDev), flat = from_vector<std::int64_t>({2, 19}).to(kDev);
  const Tensor x = arange(20, float64).to(kDev);
  Tensor taken;
  auto work = [&] {
    Tensor(target).index_put_({rows, cols}, scalar_tensor(1.0, float64, kDev), true);
    taken = take(x, flat);
  };
  work();
  cuda::Graph g;
  g.capture(work);
  g.replay();
  CHECK(to_vector<double>(target.sum({1})) == std::vector<double>{2, 0, 0, 2});
  CHECK(to_vector<double>(taken) == std::vector<double>{2, 19});
  // a bad column fails index_put_'s flag check; its clamped index, and take's, are not used
  Tensor(cols).copy_(from_vector<std::int64_t>({1, 5}).to(kDev));
  CHECK(error_of([&] { g.replay(); }) == "[index_put_] index 5 out of range for dim 1 of size 5 (in a CUDA graph replay)");
  CHECK(to_vector<double>(target.sum({1})) == std::vector<double>{2, 0, 0, 2});
  CHECK(to_vector<double>(taken) == std::vector<double>{0, 0});
}

TEST_CASE("cuda graph: values ops check on the device (clip_grad_norm_, welch, istft, pde rk4) replay as eager work "
          "does, and replay() throws the eager error of a failure" * doctest::skip(!kGpu)) {
  namespace sg = phasor::signal;
  namespace P = phasor::pde;
  manual_seed(44);
  const std::string in_replay = " (in a CUDA graph replay)";
  // each graph below holds one check: a replay waits for its end to read it
  auto replay = [](const cuda::Graph& g) {
    const long waits = emu_count(kDev, EmuCounter::HostWaits, [&] { g.replay(); });
    CHECK((waits == 1 || waits == -1));
  };
  SUBCASE("clip_grad_norm_ with error_if_nonfinite: a failing replay leaves the gradients unclipped") {
    nn::Linear lin(4, 3);
    lin.to(kDev);
    const std::vector<Tensor> params = lin.parameters();
    const Tensor x = gpu_randn({5, 4});
    auto backward = [&] {
      lin.zero_grad();
      lin.forward(x).square().sum().backward();
    };
    Tensor total;
    auto step = [&] {
      backward();
      total = optim::clip_grad_norm_(params, 1.0, 2.0, true);
    };
    step();
    cuda::Graph g;
    g.capture(step);
    std::vector<Tensor> grads;  // the gradients the replays write (an eager step would make new ones)
    for (const auto& p : params) grads.push_back(p.grad());
    auto agrees = [&] {  // the same step on CPU copies of the parameters
      std::vector<Tensor> pc;
      for (const auto& p : params) pc.push_back(p.detach().to(Device::cpu()).requires_grad_());
      F::linear(x.to(Device::cpu()), pc[0], pc[1]).square().sum().backward();
      const Tensor want = optim::clip_grad_norm_(pc, 1.0, 2.0, true);
      CHECK(rel_diff(total, want) <= 1e-5);
      for (std::size_t i = 0; i < pc.size(); ++i) CHECK(rel_diff(grads[i], pc[i].grad()) <= 1e-5);
    };
    for (int k = 0; k < 2; ++k) {
      Tensor(x).copy_(randn({5, 4}).to(kDev) * 3.0);
      replay(g);
      agrees();
    }
    // an input that overflows float32 makes the weight's gradient infinite (all of x's rows alike: no inf - inf)
    Tensor(x).fill_(1e30);
    const std::string err = error_of([&] { g.replay(); });
    CHECK(err.find("[clip_grad_norm_] the total norm of order 2 for gradients from `parameters` is inf (non-finite), "
                   "so it cannot be clipped; pass error_if_nonfinite = false to clip anyway") == 0);
    CHECK(err == error_of(step) + in_replay);  // the eager step says the same, and clips nothing either
    for (std::size_t i = 0; i < params.size(); ++i) CHECK(rel_diff(grads[i], params[i].grad()) == 0);
    Tensor(x).copy_(gpu_randn({5, 4}));
    replay(g);  // the check words are reset before every replay
    agrees();
  }
  SUBCASE("welch with a window tensor: a window that sums to zero fails a replay") {
    const Tensor sig = gpu_randn({2, 300}), win = sg::get_window("hann", 64, true, float32, kDev);
    const sg::WelchOptions o = sg::WelchOptions().with_window(win).sampling_rate(50);
    Tensor P;
    auto run = [&] { P = std::get<1>(sg::welch(sig, o)); };
    run();
    cuda::Graph g;
    g.capture(run);
    for (int k = 0; k < 2; ++k) {
      Tensor(sig).copy_(gpu_randn({2, 300}));
      replay(g);
      const sg::WelchOptions oc = sg::WelchOptions().with_window(win.to(Device::cpu())).sampling_rate(50);
      CHECK(rel_diff(P, std::get<1>(sg::welch(sig.to(Device::cpu()), oc))) <= 1e-5);
    }
    Tensor(win).zero_();
    const std::string err = error_of([&] { g.replay(); });
    CHECK(err == "[welch] the window sums to zero; cannot scale the density" + in_replay);
    CHECK(err == error_of(run) + in_replay);
  }
  SUBCASE("istft with a window tensor: the first sample where NOLA fails is named") {
    const Tensor win = ones({16}, float32, kDev);
    const sg::STFTOptions o = sg::STFTOptions(16).hop(16).centered(false).with_window(win);
    const Tensor X = sg::stft(gpu_randn({96}), o);
    Tensor y;
    auto run = [&] { y = sg::istft(X, o); };
    run();
    cuda::Graph g;
    g.capture(run);
    for (int k = 0; k < 2; ++k) {
      Tensor(X).copy_(sg::stft(gpu_randn({96}), o));
      replay(g);
      const sg::STFTOptions oc = sg::STFTOptions(16).hop(16).centered(false).with_window(win.to(Device::cpu()));
      CHECK(rel_diff(y, sg::istft(X.to(Device::cpu()), oc)) <= 1e-5);
    }
    Tensor(win).narrow(0, 5, 1).zero_();  // frames do not overlap: output samples 5, 21, ... have no weight
    const std::string err = error_of([&] { g.replay(); });
    CHECK(err.find("[istft] the squared window's overlap-add is 0 at output sample 5 (NOLA condition violated) for "
                   "n_fft = 16, hop_length = 16, win_length = 16") == 0);
    CHECK(err == error_of(run) + in_replay);
  }
  SUBCASE("pde::step and Integrator: rk4's stability check reads the equation's device parameter at each replay") {
    const P::Grid grid({32}, 2.0 * 3.141592653589793);
    const Tensor nu = scalar_tensor(0.1, float64, kDev);
    const P::Burgers eq(grid, nu);  // its viscosity is nu's storage
    const Tensor u = P::to_spectral(grid, randn({32}, float64)).to(kDev);
    for (P::Stepper s : {P::Stepper::rk4, P::Stepper::etdrk4}) {
      CAPTURE(P::to_string(s));
      Tensor(nu).fill_(0.1);
      Tensor a, b;
      const P::Integrator integ(eq, 0.01, s);
      auto run = [&] {
        a = P::step(eq, u, 0.0, 0.01, s);
        b = integ.steps(u, 0.0, 3);
      };
      run();
      cuda::Graph g;
      g.capture(run);
      for (int k = 0; k < 2; ++k) {
        Tensor(u).copy_(P::to_spectral(grid, randn({32}, float64)).to(kDev));
        if (s == P::Stepper::rk4)
          replay(g);
        else
          CHECK(emu_count(kDev, EmuCounter::HostWaits, [&] { g.replay(); }) <= 0);  // no check, no wait
        const P::Burgers eq_cpu(grid, 0.1);
        const Tensor uc = u.to(Device::cpu());
        CHECK(rel_diff(a, P::step(eq_cpu, uc, 0.0, 0.01, s)) <= 1e-10);
        CHECK(rel_diff(b, P::Integrator(eq_cpu, 0.01, s).steps(uc, 0.0, 3)) <= 1e-10);
      }
      if (s != P::Stepper::rk4) continue;
      Tensor(nu).fill_(1000.0);  // |L| dt far outside RK4's stability region
      const std::string err = error_of([&] { g.replay(); });
      CHECK(err.find("[pde::step] explicit rk4 step is unstable: max|L| dt = ") == 0);
      CHECK(err == error_of(run) + in_replay);
      Tensor(nu).fill_(0.1);
      replay(g);
    }
  }
}

TEST_CASE("cuda graph: random numbers drawn in a capture are fresh on every replay, as the eager draws would be" *
          doctest::skip(!kGpu)) {
  // Note [random numbers in CUDA graphs]: a replay takes its counters from the default generator as it is then
  Tensor x = gpu_randn({3, 100}).requires_grad_();
  Tensor u, n, k, c, d, dx;
  auto work = [&] {
    (void)(x.detach() * 2.0).exp().sum();  // temporaries the capture frees before its first draw
    u = rand({101}, float32, kDev);
    n = randn({7, 9}, float64, kDev);
    k = randint(-3, 40, {33}, int64, kDev);
    c = randn({5}, complex64, kDev);
    d = nn::functional::dropout(x, 0.3, true);  // dropout's mask: rand inside a composite op
    (d * d).sum().backward();
    dx = x.grad();
  };
  auto eager = [&](std::uint64_t seed, int skip) {  // the draws of eager work after `skip` earlier ones
    manual_seed(seed);
    for (int i = 0; i <= skip; ++i) {
      x.set_grad(Tensor());
      work();
    }
    return std::vector<Tensor>{u.to(Device::cpu()), n.to(Device::cpu()), k.to(Device::cpu()), c.to(Device::cpu()),
                               d.detach().to(Device::cpu()), dx.to(Device::cpu())};
  };
  const std::vector<Tensor> first = eager(11, 0), second = eager(11, 1);
  const std::uint64_t per_step = default_generator().offset() / 2;
  CHECK(per_step == 51 + 32 + 17 + 5 + 150);  // counters per step: two values each
  manual_seed(11);  // eager() above was the warm-up
  cuda::Graph g;
  x.set_grad(Tensor());  // the captured backward makes x's gradient, so each replay writes it afresh
  g.capture(work);
  CHECK(default_generator().offset() == 0);  // the capture drew nothing
  auto replayed = [&] {
    return std::vector<Tensor>{u.to(Device::cpu()), n.to(Device::cpu()), k.to(Device::cpu()), c.to(Device::cpu()),
                               d.detach().to(Device::cpu()), dx.to(Device::cpu())};
  };
  auto same = [](const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!equal(a[i], b[i])) return false;
    return true;
  };
  g.replay();
  const std::vector<Tensor> r1 = replayed();
  CHECK(default_generator().offset() == per_step);
  g.replay();
  const std::vector<Tensor> r2 = replayed();
  CHECK(default_generator().offset() == 2 * per_step);
  CHECK(same(r1, first));   // exactly the eager draws from the same generator state
  CHECK(same(r2, second));  // and the next replay draws the next ones
  CHECK_FALSE(equal(r1[0], r2[0]));
  const Tensor keep = (r1[4] == Scalar(0.0)).to(float32);  // dropout's zeros, and the gradient is zero exactly there
  CHECK(keep.sum().item<double>() > 0);
  CHECK(equal(r1[5] * keep, zeros({3, 100})));
  manual_seed(11);  // reseeding between replays takes effect, as for eager draws
  g.replay();
  CHECK(same(replayed(), first));
  // eager draws go on from where the replays left the generator
  const Tensor after = rand({101}, float32, kDev).to(Device::cpu());
  eager(11, 0);
  CHECK(equal(after, rand({101}, float32, kDev).to(Device::cpu())));
  g.reset();
}

TEST_CASE("cuda graph: a captured SGD step reads each group's lr at every replay, and its last one once the optimizer "
          "is gone" * doctest::skip(!kGpu)) {
  // loss = sum(p^2)/2 has gradient p, so a plain SGD step is p <- p - lr * p
  const Tensor p0 = from_vector(std::vector<double>{1.0, -2.0, 0.5}).to(kDev);
  Tensor a = p0.clone().requires_grad_(), b = p0.clone().requires_grad_();
  auto opt = std::make_unique<optim::SGD>(std::vector<optim::ParamGroup>{optim::ParamGroup({a}), optim::ParamGroup({b})},
                                          optim::SGDOptions(0.1));
  auto step = [&] {
    ((a * a).sum() * 0.5 + (b * b).sum() * 0.5).backward();
    opt->step();
  };
  step();  // warm-up
  opt->zero_grad();
  cuda::Graph g;
  g.capture(step);
  std::vector<double> ra{1.0, -2.0, 0.5}, rb = ra;
  auto expect = [](std::vector<double>& r, double lr) {
    for (double& v : r) v = v - lr * v;
  };
  expect(ra, 0.1), expect(rb, 0.1);  // the warm-up
  CHECK(rel_diff(a, from_vector(ra)) < 1e-15);
  for (const auto& [la, lb] : std::vector<std::pair<double, double>>{{0.1, 0.1}, {0.5, 0.01}, {0.25, 0.75}}) {
    opt->param_groups()[0].set_lr(la);
    opt->param_groups()[1].set_lr(lb);
    g.replay();
    expect(ra, la), expect(rb, lb);
    CHECK(rel_diff(a, from_vector(ra)) < 1e-15);
    CHECK(rel_diff(b, from_vector(rb)) < 1e-15);
  }
  opt->param_groups()[0].set_lr(0.9);  // never read by a replay
  opt.reset();
  g.replay();
  expect(ra, 0.25), expect(rb, 0.75);
  CHECK(rel_diff(a, from_vector(ra)) < 1e-15);
  CHECK(rel_diff(b, from_vector(rb)) < 1e-15);
}

TEST_CASE("cuda graph: CPU-only builds and CPU devices") {
  if (cuda::is_built()) return;
  cuda::Graph g;
  CHECK_THROWS_WITH_AS(g.capture([] {}), doctest::Contains("[cuda.Graph.capture] phasor was built without CUDA"), Error);
  CHECK_FALSE(cuda::is_capturing());
  CHECK_FALSE(g.is_captured());
}
