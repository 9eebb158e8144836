// tests/test_jit.cpp - phasor::jit (phasor/jit.hpp): static graphs traced from eager runs and replayed.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::V;
using phasor::test::vals;

namespace {

/// max |a - b| in float64 (both on the CPU).
double max_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  return (a.detach().to(float64) - b.detach().to(float64)).abs().max().item<double>();
}

/// A small two-layer network with parameters the graph reads as constants.
struct Mlp {
  Tensor w1 = randn({8, 4}, float64).requires_grad_(), b1 = randn({8}, float64).requires_grad_();
  Tensor w2 = randn({3, 8}, float64).requires_grad_();
  Tensor operator()(const Tensor& x) const { return nn::functional::linear(tanh(nn::functional::linear(x, w1, b1)), w2); }
};

}  // namespace

TEST_CASE("a traced graph replays the function's ops on new inputs") {
  Mlp net;
  jit::Graph g = jit::trace([&](const V& in) { return V{net(in[0]), in[0].sum()}; }, {randn({5, 4}, float64)});
  CHECK(g.defined());
  CHECK(g.num_inputs() == 1);
  CHECK(g.num_outputs() == 2);
  CHECK(g.num_constants() == 3);  // w1, b1, w2
  CHECK(g.op_counts().at("tanh") == 1);
  CHECK(g.input_specs()[0].shape == Shape{5, 4});
  for (int rep = 0; rep < 3; ++rep) {
    const Tensor x = randn({5, 4}, float64);
    const V got = g({x});
    // reference: the same network written out with matmul, independent of nn::linear
    const Tensor h = tanh(matmul(x, net.w1.detach().t()) + net.b1.detach());
    CHECK(max_diff(got[0], matmul(h, net.w2.detach().t())) < 1e-12);
    CHECK(got[1].item<double>() == doctest::Approx(vals(x.sum())[0]).epsilon(1e-14));
  }
  const std::string s = g.str();
  CHECK(s.find("graph(%0: float64(5, 4)") == 0);
  CHECK(s.find("= tanh(") != std::string::npos);
  CHECK(s.find("return (") != std::string::npos);
  CHECK(g.to_dot().find("digraph") == 0);
}

TEST_CASE("replays record autograd history and read parameters as they are now") {
  Mlp net;
  const Tensor x0 = randn({6, 4}, float64).requires_grad_();  // replays will take inputs that require grad
  jit::Graph g = jit::trace([&](const V& in) { return V{net(in[0])}; }, {x0});
  CHECK_THROWS_WITH_AS(jit::trace([&](const V& in) { return V{net(in[0])}; }, {x0.detach()})({x0}),
                       "[jit.Graph] input 0 requires grad but the graph was traced with one that does not, and ops may "
                       "have taken paths without a gradient; trace with an input that requires grad", Error);
  // gradients through the replay equal the eager ones, for the input and for the parameters
  const Tensor x = randn({6, 4}, float64);
  Tensor xr = x.clone().requires_grad_(), xe = x.clone().requires_grad_();
  (g({xr})[0] * g({xr})[0]).sum().backward();
  const Tensor gw1 = net.w1.grad().clone(), gx = xr.grad().clone();
  for (Tensor* p : {&net.w1, &net.b1, &net.w2}) p->set_grad(Tensor());
  (net(xe) * net(xe)).sum().backward();
  CHECK(max_diff(gx, xe.grad()) < 1e-12);
  CHECK(max_diff(gw1, net.w1.grad()) < 1e-12);
  // float64 finite differences through the replay
  CHECK(autodiff::gradcheck([&](const V& in) { return g(in)[0]; }, {randn({6, 4}, float64).requires_grad_()}));
  // an in-place update of a parameter (an optimizer's step) is seen by the next replay
  {
    NoGradGuard ng;
    net.w2.mul_(-2.0);
  }
  CHECK(max_diff(g({x})[0], net(x)) < 1e-12);
}

TEST_CASE("a traced training step: replayed forward, eager backward and optimizer, as eager training") {
  manual_seed(3);
  nn::FNO a(nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(8).modes({4}).n_layers(2).projection_channels(8).dtype(float64));
  manual_seed(3);
  nn::FNO b(nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(8).modes({4}).n_layers(2).projection_channels(8).dtype(float64));
  const Tensor x = randn({3, 1, 32}, float64), y = randn({3, 1, 32}, float64);
  jit::Graph fwd = jit::trace([&](const Tensor& in) { return a.forward(in); }, x);
  CHECK(fwd.op_counts().at("spectral_mix") == 2);  // one mode mixing per Fourier layer
  CHECK(fwd.op_counts().at("rfft_modes") == 2);
  optim::Adam oa(a.parameters(), optim::AdamOptions(1e-2)), ob(b.parameters(), optim::AdamOptions(1e-2));
  for (int step = 0; step < 3; ++step) {
    oa.zero_grad();
    nn::functional::mse_loss(fwd({x})[0], y).backward();
    oa.step();
    ob.zero_grad();
    nn::functional::mse_loss(b.forward(x), y).backward();
    ob.step();
  }
  const V pa = a.parameters(), pb = b.parameters();
  REQUIRE(pa.size() == pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) CHECK(max_diff(pa[i], pb[i]) < 1e-12);
  CHECK(max_diff(fwd({y})[0], b.forward(y)) < 1e-12);
}

TEST_CASE("gradients computed inside the traced function replay as ops (physics-informed losses)") {
  // f(x) = sum sin(x)^2, so df/dx = 2 sin x cos x = sin 2x
  auto fn = [](const V& in) {
    Tensor x = in[0];
    Tensor f = (sin(x) * sin(x)).sum();
    return autodiff::grad({f}, {x}, {}, std::nullopt, /*create_graph=*/true);
  };
  jit::Graph g = jit::trace(fn, {randn({7}, float64).requires_grad_()});
  const Tensor x = randn({7}, float64);
  CHECK(max_diff(g({x})[0], sin(x * 2.0)) < 1e-12);  // the replay needs no requires_grad: the gradient is steps
  // and the replayed gradient is differentiable again: d/dx sum sin 2x = 2 cos 2x
  Tensor xr = x.clone().requires_grad_();
  g({xr})[0].sum().backward();
  CHECK(max_diff(xr.grad(), cos(x * 2.0) * 2.0) < 1e-12);
}

TEST_CASE("random draws are steps: each replay draws anew, as eager code would") {
  auto fn = [](const V& in) { return V{nn::functional::dropout(in[0], 0.5) + randn({4}, float64)}; };
  const Tensor x = ones({4}, float64);
  jit::Graph g = jit::trace(fn, {x});
  CHECK(g.op_counts().at("rand") == 1);
  CHECK(g.op_counts().at("randn") == 1);
  manual_seed(11);
  const Tensor r1 = g({x})[0];
  const Tensor r2 = g({x})[0];
  CHECK(max_diff(r1, r2) > 0);  // not frozen
  manual_seed(11);
  const Tensor e1 = fn({x})[0];
  CHECK(max_diff(r1, e1) == 0);  // same draws as the eager function from the same seed
  // a random draw nothing reads is kept, so the generator advances as eagerly
  jit::Graph g2 = jit::trace([](const V& in) { (void)rand({3}, float64); return V{in[0] * 2.0}; }, {x});
  CHECK(g2.num_steps() == 2);
}

TEST_CASE("in-place ops in a traced function") {
  // into a tensor the function made: the constant is copied before its first write
  auto fn = [](const V& in) {
    Tensor c = zeros({3}, float64);
    Tensor y = in[0] + c;  // reads c before the write
    c.add_(in[0]);
    c.mul_(2.0);
    return V{y, c};
  };
  jit::Graph g = jit::trace(fn, {randn({3}, float64)});
  const Tensor x = randn({3}, float64);
  const V got = g({x});
  CHECK(max_diff(got[0], x) < 1e-15);
  CHECK(max_diff(got[1], x * 2.0) < 1e-15);
  // into an intermediate result
  jit::Graph h = jit::trace([](const V& in) { Tensor t = in[0] * 3.0; t.sub_(1.0); return V{t.exp()}; }, {x});
  CHECK(max_diff(h({x})[0], (x * 3.0 - 1.0).exp()) < 1e-12);
}

TEST_CASE("what cannot be traced is refused, and leaves nothing behind") {
  const Tensor x = randn({3}, float64);
  Tensor param = randn({3}, float64);
  const Tensor before = param.clone();
  // a write into an input or into a tensor that existed before the trace: a side effect outside the graph
  CHECK_THROWS_WITH_AS(jit::trace([](const V& in) { Tensor t = in[0]; t.add_(1.0); return V{t}; }, {x}),
                       doctest::Contains("[add_] writes into input 0 (float64 (3,) on cpu) of the traced function"), Error);
  CHECK_THROWS_WITH_AS(jit::trace([&](const V& in) { param.mul_(2.0); return V{in[0] * param}; }, {x}),
                       doctest::Contains("[mul_] writes into a tensor (float64 (3,) on cpu) that existed before the trace"),
                       Error);
  CHECK(max_diff(param, before) == 0);  // refused before writing
  // a write into a tensor that has views in the traced function
  CHECK_THROWS_WITH_AS(jit::trace([](const V& in) {
                         Tensor t = in[0] * 2.0;
                         Tensor v = t.reshape({3, 1});
                         t.add_(1.0);
                         return V{v};
                       }, {x}),
                       doctest::Contains("shares memory with other tensors of the traced function"), Error);
  // backward() inside the function would write .grad, a side effect outside the graph
  Tensor w = randn({3}, float64).requires_grad_();
  CHECK_THROWS_WITH_AS(jit::trace([&](const V& in) { (in[0] * w).sum().backward(); return V{in[0] * 2.0}; }, {x}),
                       doctest::Contains("[backward] accumulates into the .grad of a leaf while tracing"), Error);
  CHECK(!w.grad().defined());
  // undefined outputs, empty functions, nested traces
  CHECK_THROWS_WITH_AS(jit::trace([](const V&) { return V{Tensor()}; }, {x}),
                       "[jit.trace] output 0 of the traced function is undefined", Error);
  CHECK_THROWS_WITH_AS(jit::trace(jit::Function(), {x}), "[jit.trace] the function is empty", Error);
  CHECK_THROWS_WITH_AS(jit::trace([](const V& in) { return jit::trace([](const V& i) { return i; }, in)(in); }, {x}),
                       "[jit.trace] a trace is already being recorded on this thread; traces do not nest", Error);
  CHECK_THROWS_WITH_AS(jit::trace([](const V& in) { return in; }, {Tensor()}), "[jit.trace] example input 0 is undefined",
                       Error);
  // after all that, eager code runs untraced and a new trace works
  jit::Graph g = jit::trace([](const V& in) { return V{in[0] + 1.0}; }, {x});
  CHECK(g.num_steps() == 1);
  CHECK(max_diff(g({x})[0], x + 1.0) == 0);
}

TEST_CASE("a graph checks its inputs") {
  const Tensor x = randn({2, 3}, float64);
  jit::Graph g = jit::trace([](const V& in) { return V{in[0].t().matmul(in[1])}; }, {x, randn({2, 4}, float64)});
  CHECK_THROWS_WITH_AS(g({x}), "[jit.Graph] expected 2 inputs, got 1", Error);
  CHECK_THROWS_WITH_AS(g({x, randn({3, 4}, float64)}),
                       "[jit.Graph] input 1: the graph was traced for float64 (2, 4) on cpu, got float64 (3, 4) on cpu", Error);
  CHECK_THROWS_WITH_AS(g({x, randn({2, 4}, float32)}),
                       "[jit.Graph] input 1: the graph was traced for float64 (2, 4) on cpu, got float32 (2, 4) on cpu", Error);
  CHECK_THROWS_WITH_AS(g({x, Tensor()}), "[jit.Graph] input 1 is undefined", Error);
  CHECK_THROWS_WITH_AS(jit::Graph()({x}), "[jit.Graph] the graph is empty (nothing was traced)", Error);
  // a non-contiguous input to a graph traced with a contiguous one is copied first
  const Tensor yt = randn({4, 2}, float64).t();
  CHECK(max_diff(g({x, yt})[0], x.t().matmul(yt)) < 1e-12);
  // a graph traced with a non-contiguous input wants that layout
  jit::Graph h = jit::trace([](const V& in) { return V{in[0] * 2.0}; }, {yt});
  const Tensor zt = randn({4, 2}, float64).t();
  CHECK(max_diff(h({zt})[0], zt * 2.0) == 0);
  CHECK_THROWS_WITH_AS(h({randn({2, 4}, float64)}), doctest::Contains("[jit.Graph] input 0 has strides (4, 1) but the graph was traced for strides (1, 2)"), Error);
}

TEST_CASE("shapes that depend on values are caught by the replay, host decisions by check_inputs") {
  // nonzero's output shape depends on the values: a replay whose count differs cannot run the later steps
  jit::Graph g = jit::trace([](const V& in) { return V{nonzero(in[0]).to(float64).sum({0})}; }, {from_vector<double>({1, 0, 2})});
  CHECK(vals(g({from_vector<double>({0, 5, 7})})[0]) == std::vector<double>{3});
  CHECK_THROWS_WITH_AS(g({from_vector<double>({1, 1, 1})}), doctest::Contains("the function's shapes depend on its inputs' values"), Error);
  // a branch on item() is baked in; check_inputs finds it
  auto branchy = [](const V& in) { return V{in[0].sum().item<double>() > 0 ? in[0] * 2.0 : in[0] * 3.0}; };
  jit::TraceOptions opt;
  opt.check_inputs = {{from_vector<double>({-1, -2})}};
  CHECK_THROWS_WITH_AS(jit::trace(branchy, {from_vector<double>({1, 2})}, opt),
                       doctest::Contains("[jit.trace] check_inputs[0]: output 0 of the graph differs from the function's"), Error);
  opt.check_inputs = {{from_vector<double>({5, 2})}};
  CHECK(jit::trace(branchy, {from_vector<double>({1, 2})}, opt).num_steps() >= 1);
}

TEST_CASE("ops that take indices read each replay's indices, in values and gradients") {
  Tensor w = randn({10, 3}, float64).requires_grad_();
  auto fn = [&](const V& in) {
    return V{nn::functional::embedding(in[0], w) * 2.0, nn::functional::one_hot(in[0], 10).to(float64),
             gather(in[1], 1, in[0].reshape({4, 1})), nn::functional::cross_entropy(in[1], in[0])};
  };
  const Tensor logits = randn({4, 10}, float64);
  jit::Graph g = jit::trace(fn, {from_vector<std::int64_t>({1, 2, 3, 4}), logits});
  const Tensor idx = from_vector<std::int64_t>({9, 0, 5, 5});
  const V got = g({idx, logits}), want = fn({idx, logits});
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(max_diff(got[i], want[i]) == 0);
  // one_hot's inferred class count comes from the replay's values: a new output shape, and a step after it refuses
  jit::Graph oh = jit::trace([](const V& in) { return V{nn::functional::one_hot(in[0])}; }, {from_vector<std::int64_t>({1, 2, 0, 1})});
  CHECK(oh({idx})[0].shape() == Shape{4, 10});
  jit::Graph oh2 = jit::trace([](const V& in) { return V{nn::functional::one_hot(in[0]) * 2}; }, {from_vector<std::int64_t>({1, 2, 3, 4})});
  CHECK_THROWS_WITH_AS(oh2({idx}), doctest::Contains("the function's shapes depend on its inputs' values"), Error);
  // the embedding's gradient lands on the replay's rows: 2 per lookup, row 5 twice
  w.set_grad(Tensor());
  g({idx, logits})[0].sum().backward();
  const auto gw = vals(w.grad().sum({1}));
  CHECK(gw == std::vector<double>{6, 0, 0, 0, 0, 12, 0, 0, 0, 6});
  // a replay checks its indices as the eager op does
  CHECK_THROWS_WITH_AS(g({from_vector<std::int64_t>({1, 2, 3, 10}), logits}),
                       doctest::Contains("index 10 out of range for 10 embeddings"), Error);
}

TEST_CASE("dead steps are dropped") {
  auto fn = [](const V& in) {
    Tensor unused = in[0].exp().sum();
    (void)unused;
    return V{in[0] * 2.0};
  };
  const Tensor x = randn({4}, float64);
  CHECK(jit::trace(fn, {x}).num_steps() == 1);
  jit::TraceOptions keep;
  keep.eliminate_dead_steps = false;
  CHECK(jit::trace(fn, {x}, keep).num_steps() == 3);
}

TEST_CASE("steps that read only tensors the function made are folded into constants") {
  auto fn = [](const V& in) {
    const Tensor grid = linspace(0.0, 1.0, 5, float64).reshape({5, 1}).expand({5, 3}) * 2.0;  // from shapes only
    return V{in[0] * grid};
  };
  const Tensor x = randn({5, 3}, float64);
  const jit::Graph g = jit::trace(fn, {x});
  CHECK(g.num_steps() == 1);  // the multiply by x; reshape, expand and the scaling were computed once
  const Tensor y = randn({5, 3}, float64);
  CHECK(max_diff(g({y})[0], fn({y})[0]) == 0);
  jit::TraceOptions no_fold;
  no_fold.fold_constants = false;
  CHECK(jit::trace(fn, {x}, no_fold).num_steps() == 4);
}

TEST_CASE("custom functions replay with their own backward, detach cuts the history") {
  // a straight-through estimator: forward rounds, backward passes the gradient through times 2
  auto ste = [](const Tensor& x) {
    return autodiff::custom_function(
        "ste", [](autodiff::FunctionCtx&, const V& in) { return V{in[0].round()}; },
        [](autodiff::FunctionCtx&, const V& g) { return V{g[0] * 2.0}; }, {x})[0];
  };
  jit::Graph g = jit::trace([&](const V& in) { return V{ste(in[0]) * in[0].detach()}; }, {randn({5}, float64).requires_grad_()});
  CHECK(g.op_counts().at("ste") == 1);
  CHECK(g.op_counts().at("detach") == 1);
  const Tensor x = randn({5}, float64);
  Tensor xr = x.clone().requires_grad_();
  const Tensor y = g({xr})[0];
  CHECK(max_diff(y, x.round() * x) == 0);
  y.sum().backward();
  CHECK(max_diff(xr.grad(), x * 2.0) < 1e-15);  // d/dx (ste(x) * const) = 2 * const
}

TEST_CASE("compile traces once per signature and replays afterwards") {
  int traced = 0;
  jit::CompiledFunction f = jit::compile([&](const V& in) {
    ++traced;
    return V{(in[0] * in[0]).sum({-1})};
  });
  const Tensor a = randn({2, 3}, float64), b = randn({2, 3}, float64), c = randn({4, 3}, float64);
  CHECK(max_diff(f({a})[0], (a * a).sum({-1})) == 0);
  CHECK(max_diff(f({b})[0], (b * b).sum({-1})) == 0);
  CHECK(traced == 1);
  CHECK(f.cache_size() == 1);
  CHECK(max_diff(f({c})[0], (c * c).sum({-1})) == 0);  // a new shape: traced again
  CHECK(traced == 2);
  f({a.clone().requires_grad_()});  // requires_grad is part of the signature
  CHECK(f.cache_size() == 3);
  CHECK(f.graph_for({a}).num_steps() == 2);
  f.clear();
  CHECK(f.cache_size() == 0);
  CHECK_THROWS_WITH_AS(jit::compile(jit::Function()), "[jit.compile] the function is empty", Error);
}

TEST_CASE("one graph replays on several threads at once") {
  Mlp net;
  jit::Graph g = jit::trace([&](const V& in) { return V{net(in[0])}; }, {randn({3, 4}, float64)});
  std::vector<Tensor> xs, want;
  for (int i = 0; i < 4; ++i) {
    xs.push_back(randn({3, 4}, float64));
    want.push_back(net(xs.back()).detach());
  }
  std::vector<Tensor> got(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] {
    NoGradGuard ng;
    for (int r = 0; r < 20; ++r) got[static_cast<std::size_t>(i)] = g({xs[static_cast<std::size_t>(i)]})[0];
  });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) CHECK(max_diff(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)]) == 0);
}
