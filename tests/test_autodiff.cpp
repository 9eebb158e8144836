// tests/test_autodiff.cpp - the engine: backward/grad, retain/create graph, hooks, in-place rules,
// custom functions, checkpointing, gradcheck itself, observers.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <thread>
#include <phasor/phasor.hpp>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

TEST_CASE("backward accumulates into leaves and grad() returns without accumulating") {
  Tensor x = vec({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = (x * x * x).sum();  // dy/dx = 3x^2
  auto g = autodiff::grad({y}, {x}, {}, true);
  CHECK(vals(g[0]) == std::vector<double>{3, 12, 27});
  CHECK_FALSE(x.grad().defined());
  y.backward();
  CHECK(vals(x.grad()) == std::vector<double>{3, 12, 27});
  Tensor y2 = (x * 2.0).sum();
  y2.backward();
  CHECK(vals(x.grad()) == std::vector<double>{5, 14, 29});
  CHECK(x.is_leaf());
  CHECK_FALSE(y.is_leaf());
  REQUIRE(y.grad_fn());
  CHECK(y.grad_fn()->name() == "sumBackward");
}

TEST_CASE("a graph recorded on one thread runs backward and dies on others") {
  // Graph nodes, their vectors and the outputs' autograd state come from the recording thread's
  // small-block lists and go back to whichever thread frees them (Note [graph node memory]).
  Tensor x = vec({0.5, -1.0, 2.0}).requires_grad_();
  for (int round = 0; round < 3; ++round) {
    std::vector<Tensor> losses(4);
    std::thread rec([&] {
      for (int i = 0; i < 4; ++i) losses[static_cast<std::size_t>(i)] = ((x * x).sin() * double(i + 1)).sum();
    });
    rec.join();
    std::thread run([&] {
      for (int i = 0; i < 2; ++i) losses[static_cast<std::size_t>(i)].backward();
    });
    run.join();
    losses.clear();  // the two graphs never run die here
    // d/dx sum_i (i+1) sin(x^2) over i = 0, 1: 3 * 2x cos(x^2)
    std::vector<double> ref;
    for (double v : {0.5, -1.0, 2.0}) ref.push_back(3.0 * 2.0 * v * std::cos(v * v));
    check_close(x.grad(), ref);
    x.set_grad(Tensor());
  }
}

TEST_CASE("a leaf's first gradient never aliases a tensor the caller holds") {
  // the reshape's backward hands the leaf a view of the caller's gradient: copied
  Tensor x = vec({1.0, 2.0, 3.0, 4.0}).requires_grad_();
  const Tensor go = vec({1.0, 1.0, 1.0, 1.0}).reshape({2, 2});
  x.reshape({2, 2}).backward(go);
  x.grad().zero_();
  CHECK(vals(go.reshape({4})) == std::vector<double>{1, 1, 1, 1});
  // a view whose base only it holds is taken as it is (no copy), and is the leaf's own
  Tensor z = vec({1.0, 2.0, 3.0, 4.0}).requires_grad_();
  (z.reshape({2, 2}) * 3.0).sum().backward();
  CHECK(vals(z.grad()) == std::vector<double>{3, 3, 3, 3});
  z.grad().mul_(2.0);
  (z * 1.0).sum().backward();
  CHECK(vals(z.grad()) == std::vector<double>{7, 7, 7, 7});
  // a narrow view of a larger gradient buffer is copied (it would keep the whole buffer alive)
  Tensor a = vec({1.0, 2.0}).requires_grad_(), b = vec({3.0, 4.0});
  Tensor c = cat({a, b});
  (c * 5.0).sum().backward();
  CHECK(vals(a.grad()) == std::vector<double>{5, 5});
  CHECK(a.grad().is_contiguous());
}

TEST_CASE("backward twice without retain_graph is an error; with retain_graph it works") {
  Tensor x = vec({0.5, -1.0}).requires_grad_();
  Tensor y = x.exp().sum();
  y.backward(Tensor(), true);
  y.backward();
  CHECK(vals(x.grad())[0] == doctest::Approx(2 * std::exp(0.5)));
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("second time"), Error);
}

TEST_CASE("non-scalar backward needs a gradient") {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor y = x * 3.0;
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("(2,)"), Error);
  y.backward(vec({1.0, 10.0}));
  CHECK(vals(x.grad()) == std::vector<double>{3, 30});
  CHECK_THROWS_WITH_AS(y.backward(vec({1.0, 2.0, 3.0})), doctest::Contains("shape"), Error);
}

TEST_CASE("in-place change of a saved tensor is detected by the version counter") {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor a = x * 1.0;
  Tensor y = (a * a).sum();
  {
    NoGradGuard ng;
    a.add_(1.0);
  }
  CHECK(a.version() == 1);
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("modified by an in-place operation"), Error);
}

TEST_CASE("in-place rules") {
  Tensor leaf = vec({1.0, 2.0}).requires_grad_();
  CHECK_THROWS_WITH_AS(leaf.add_(1.0), doctest::Contains("leaf"), Error);
  CHECK(vals(leaf) == std::vector<double>{1, 2});  // unchanged
  {
    NoGradGuard ng;
    leaf.mul_(2.0);  // allowed without recording
  }
  CHECK(vals(leaf) == std::vector<double>{2, 4});
  // in place on a non-leaf rebases its history
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor y = x * 3.0;
  y += x;  // y = 4x
  y.sum().backward();
  CHECK(vals(x.grad()) == std::vector<double>{4, 4});
  // in place on a view of a leaf that requires grad is refused, and changes nothing
  CHECK_THROWS_WITH_AS(x.slice(0, 0, 1).add_(1.0), doctest::Contains("[add_] a view of a leaf tensor that requires grad"), Error);
  CHECK(vals(x) == std::vector<double>{1, 2});
  // integer in-place with a float result is refused and leaves the tensor unchanged
  Tensor i = from_vector(std::vector<std::int64_t>{1, 2});
  CHECK_THROWS_WITH_AS(i.add_(0.5), doctest::Contains("int64"), Error);
  CHECK(to_vector<std::int64_t>(i) == std::vector<std::int64_t>{1, 2});
}

// Note [views and in-place history]
TEST_CASE("in place on a view while recording: the root's history takes the write (copy_slices), as PyTorch") {
  using V = std::vector<Tensor>;
  // a narrow, a transposed column, a strided select, a view of a view
  const std::vector<std::pair<const char*, std::function<Tensor(const V&)>>> fs = {
      {"narrow mul_", [](const V& in) { Tensor b = in[0] * 1.0; b.narrow(0, 1, 2).mul_(in[1]); return b; }},
      {"column add_", [](const V& in) { Tensor b = in[0].reshape({2, 2}) * 1.0; b.t().select(0, 1).add_(in[1]); return b; }},
      {"every other copy_", [](const V& in) { Tensor b = in[0] * 1.5; b.slice(0, 0, 4, 2).copy_(in[1].sin()); return b.exp(); }},
      {"view of a view", [](const V& in) { Tensor b = in[0] * 2.0; b.narrow(0, 1, 3).narrow(0, 1, 2).div_(in[1]); return b * b; }},
      {"two writes", [](const V& in) {
         Tensor b = in[0] * 1.0;
         b.narrow(0, 0, 2).mul_(in[1]);
         b.narrow(0, 1, 2).add_(in[1] * in[1]);
         return b;
       }},
      {"index_put_ through a view", [](const V& in) {
         Tensor b = in[0] * 1.0;
         b.narrow(0, 1, 3).index_put_({from_vector<std::int64_t>({2, 0})}, in[1], true);
         return b;
       }},
      {"a root without history", [](const V& in) {
         Tensor u = zeros({4}, float64);
         u.narrow(0, 2, 2).copy_(in[1]);
         return u * in[0];
       }},
  };
  for (const auto& [name, f] : fs) {
    CAPTURE(name);
    const V in = {leaf64({4}), (vec({0.5, 2.0}) + 0.0).requires_grad_()};
    CHECK(autodiff::gradcheck(f, in));
    CHECK(autodiff::gradgradcheck(f, in));
  }
  // the values and the gradients written out
  Tensor a = vec({1.0, 2.0, 3.0, 4.0}).requires_grad_(), w = vec({10.0, 20.0}).requires_grad_();
  Tensor b = a * 1.0;
  Tensor v = b.narrow(0, 1, 2);
  v.mul_(w);
  CHECK(vals(b) == std::vector<double>{1, 20, 60, 4});
  REQUIRE(b.grad_fn());
  CHECK(b.grad_fn()->name() == "copy_slicesBackward");
  CHECK(v.grad_fn()->name() == "as_stridedBackward");
  (b * vec({1.0, 2.0, 3.0, 4.0})).sum().backward();
  CHECK(vals(a.grad()) == std::vector<double>{1, 20, 60, 4});
  CHECK(vals(w.grad()) == std::vector<double>{4, 9});
  // a root without history that does not require grad starts to: its views follow
  Tensor u = zeros({4}, float64);
  Tensor left = u.narrow(0, 0, 2), right = u.narrow(0, 2, 2);
  CHECK_FALSE(right.requires_grad());
  left.copy_(w);
  CHECK(u.requires_grad());
  CHECK(right.requires_grad());
  CHECK(left.requires_grad());
  auto g = autodiff::grad({(u.narrow(0, 1, 2) * vec({3.0, 5.0})).sum()}, {w});
  CHECK(vals(g[0]) == std::vector<double>{0, 3});
  // refused, changing nothing: a view with another dtype than its root
  Tensor z = (vec({1.0, 2.0}).to(complex128) * 1.0);
  Tensor r = real(z);
  CHECK_THROWS_WITH_AS(r.mul_(w), doctest::Contains("[mul_] an in-place operation on a float64 view of a complex128 tensor"), Error);
  CHECK(vals(real(z)) == std::vector<double>{1, 2});
}

TEST_CASE("a view made before its root (or another view) was written in place carries the gradient of its new values") {
  using V = std::vector<Tensor>;
  // the root written: the view sees the write
  Tensor a = vec({1.0, 1.0, 1.0, 1.0}).requires_grad_();
  Tensor b = a * 1.0;
  Tensor v = b.narrow(0, 0, 2);
  b.mul_(2.0);
  CHECK(vals(v) == std::vector<double>{2, 2});
  v.sum().backward();
  CHECK(vals(a.grad()) == std::vector<double>{2, 2, 0, 0});
  // another view written: a sibling overlapping it sees the write
  const auto sibling = [](const V& in) {
    Tensor c = in[0] * 1.0;
    Tensor v1 = c.narrow(0, 0, 2), v2 = c.narrow(0, 1, 3);
    v1.mul_(in[0].narrow(0, 2, 2));
    return v2 * v2;
  };
  CHECK(autodiff::gradcheck(sibling, {leaf64({4})}));
  CHECK(autodiff::gradgradcheck(sibling, {leaf64({4})}));
  // a transposed root (detached, no base of its own)
  const Tensor base = randn({3, 2}, float64);
  const auto transposed_root = [&](const V& in) {
    Tensor r = base.clone().t().detach();  // not contiguous, and no view: a root of its own
    Tensor col = r.select(1, 2);
    r.narrow(1, 0, 2).mul_(in[0].reshape({2, 2}));
    return r.exp().sum({1}) + col;
  };
  CHECK(autodiff::gradcheck(transposed_root, {leaf64({4})}));
  // a view with another dtype than its root has no place in the root's gradient: refused once behind
  Tensor zr = vec({1.0, 2.0}).requires_grad_();
  Tensor z = zr.to(complex128) * 1.0;
  Tensor re = real(z);
  z.mul_(2.0);
  CHECK_THROWS_WITH_AS((re * 1.0).sum(), doctest::Contains("[autograd] a float64 view of a complex128 tensor written in place since the view was made cannot be differentiated"), Error);
  // a view made a leaf of its own stays one
  Tensor p = zeros({3}, float64);
  Tensor pv = p.narrow(0, 0, 2).requires_grad_();
  p.narrow(0, 2, 1).copy_(zr.narrow(0, 0, 1));
  (pv * 3.0).sum().backward();
  CHECK(vals(pv.grad()) == std::vector<double>{3, 3});
}

TEST_CASE("create_graph gives higher derivatives") {
  Tensor x = vec({2.0}).requires_grad_();
  Tensor y = (x * x * x).sum();
  auto g1 = autodiff::grad({y}, {x}, {}, std::nullopt, true);
  CHECK(vals(g1[0])[0] == doctest::Approx(12.0));
  auto g2 = autodiff::grad({g1[0].sum()}, {x}, {}, std::nullopt, true);
  CHECK(vals(g2[0])[0] == doctest::Approx(12.0));  // 6x
  auto g3 = autodiff::grad({g2[0].sum()}, {x});
  CHECK(vals(g3[0])[0] == doctest::Approx(6.0));
}

TEST_CASE("grad(): unused inputs and inputs that do not require grad") {
  Tensor x = vec({1.0}).requires_grad_(), w = vec({2.0}).requires_grad_();
  Tensor y = (x * 2.0).sum();
  CHECK_THROWS_WITH_AS(autodiff::grad({y}, {w}, {}, true), doctest::Contains("allow_unused"), Error);
  auto g = autodiff::grad({y}, {x, w}, {}, true, false, true);
  CHECK(g[0].defined());
  CHECK_FALSE(g[1].defined());
  Tensor c = vec({1.0});
  CHECK_THROWS_AS(autodiff::grad({y}, {c}), Error);
  CHECK_THROWS_WITH_AS(c.sum().backward(), doctest::Contains("does not require grad"), Error);
}

TEST_CASE("grad() w.r.t. a non-leaf tensor") {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor h = x * x;
  Tensor y = (h * 3.0).sum();
  auto g = autodiff::grad({y}, {h});
  CHECK(vals(g[0]) == std::vector<double>{3, 3});
}

TEST_CASE("NoGradGuard and detach stop recording") {
  Tensor x = vec({1.0}).requires_grad_();
  {
    NoGradGuard ng;
    CHECK_FALSE(GradMode::is_enabled());
    Tensor y = x * 2.0;
    CHECK_FALSE(y.requires_grad());
    {
      EnableGradGuard eg;
      CHECK((x * 2.0).requires_grad());
    }
  }
  CHECK(GradMode::is_enabled());
  Tensor d = x.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.data_ptr() == x.data_ptr());
  CHECK_THROWS_AS(from_vector(std::vector<std::int64_t>{1}).requires_grad_(), Error);
}

TEST_CASE("hooks and retain_grad") {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  int calls = 0;
  auto h = x.register_hook([&](const Tensor& g) {
    ++calls;
    return g * 10.0;
  });
  Tensor m = x * 2.0;
  m.retain_grad();
  Tensor seen;
  m.register_hook([&](const Tensor& g) {
    seen = g.clone();
    return Tensor();
  });
  (m * m).sum().backward();
  CHECK(calls == 1);
  CHECK(vals(seen) == std::vector<double>{4, 8});
  CHECK(vals(m.grad()) == std::vector<double>{4, 8});
  CHECK(vals(x.grad()) == std::vector<double>{80, 160});
  x.remove_hook(h);
  x.set_grad(Tensor());
  (x * 1.0).sum().backward();
  CHECK(calls == 1);
  CHECK(vals(x.grad()) == std::vector<double>{1, 1});
}

TEST_CASE("complex gradients follow dL/dz* (PyTorch's convention)") {
  Tensor z = from_vector(std::vector<std::complex<double>>{{1.0, 2.0}, {-3.0, 0.5}}).requires_grad_();
  Tensor l = (z * z.conj()).real().sum();  // |z|^2 -> grad 2z
  l.backward();
  auto g = to_vector<std::complex<double>>(z.grad());
  CHECK(g[0].real() == doctest::Approx(2.0));
  CHECK(g[0].imag() == doctest::Approx(4.0));
  CHECK(g[1].real() == doctest::Approx(-6.0));
  // real input through a complex op: the gradient is real
  Tensor x = vec({0.3, -0.7}).requires_grad_();
  Tensor y = (x * std::complex<double>(0.0, 1.0)).exp().real().sum();  // sum cos(x) -> -sin(x)
  y.backward();
  CHECK(x.grad().dtype() == float64);
  CHECK(vals(x.grad())[0] == doctest::Approx(-std::sin(0.3)));
}

TEST_CASE("custom functions") {
  auto my_exp = [](const Tensor& x) {
    return autodiff::custom_function(
        "my_exp",
        [](autodiff::FunctionCtx& ctx, const V& in) {
          Tensor y = in[0].exp();
          ctx.save_for_backward({y});
          return V{y};
        },
        [](autodiff::FunctionCtx& ctx, const V& g) { return V{g[0] * ctx.saved_tensors()[0]}; }, {x})[0];
  };
  Tensor x = vec({0.1, 0.2}).requires_grad_();
  CHECK(my_exp(x).grad_fn()->name() == "my_expBackward");
  my_exp(x).sum().backward();
  CHECK(vals(x.grad())[1] == doctest::Approx(std::exp(0.2)));
  CHECK(autodiff::gradcheck([&](const V& in) { return my_exp(in[0]) * in[0]; }, {vec({0.3, -0.4}).requires_grad_()}));
  // a wrong backward is caught by gradcheck
  auto bad = [](const Tensor& x) {
    return autodiff::custom_function(
        "bad_sin", [](autodiff::FunctionCtx&, const V& in) { return V{in[0].sin()}; },
        [](autodiff::FunctionCtx&, const V& g) { return V{g[0]}; }, {x})[0];
  };
  Tensor b = vec({0.5}).requires_grad_();
  autodiff::GradcheckOptions o;
  o.raise_exception = false;
  CHECK_FALSE(autodiff::gradcheck([&](const V& in) { return V{bad(in[0])}; }, {b}, o));
  CHECK_THROWS_WITH_AS(autodiff::gradcheck([&](const V& in) { return bad(in[0]); }, {b}),
                       doctest::Contains("Jacobian mismatch"), Error);
  // wrong number of gradients
  Tensor w = vec({1.0}).requires_grad_();
  auto two = autodiff::custom_function(
      "two", [](autodiff::FunctionCtx&, const V& in) { return V{in[0] * 1.0}; },
      [](autodiff::FunctionCtx&, const V& g) { return V{g[0], g[0]}; }, {w});
  CHECK_THROWS_WITH_AS(two[0].sum().backward(),
                       doctest::Contains("[twoBackward] backward returned 2 gradients for 1 inputs"), Error);
}

TEST_CASE("gradcheck names the first wrong Jacobian entry (several inputs, complex parts)") {
  // y = x * z elementwise (x real, z complex); `scale` multiplies z's gradient, so {1, 2} is wrong for
  // z's element 1 only: d Re(y_1) / d Re(z_1) = x_1, but the backward says 2 x_1
  auto mul = [](const Tensor& scale) {
    return [scale](const V& in) {
      return autodiff::custom_function(
          "scaled_mul",
          [](autodiff::FunctionCtx& ctx, const V& a) {
            ctx.save_for_backward({a[0], a[1]});
            return V{a[0] * a[1]};
          },
          [scale](autodiff::FunctionCtx& ctx, const V& g) {
            const Tensor x = ctx.saved_tensors()[0], z = ctx.saved_tensors()[1];
            return V{(g[0] * z.conj()).real(), g[0] * x * scale};
          },
          in);
    };
  };
  manual_seed(11);
  Tensor x = (randn({2}, float64) + 2.0).requires_grad_();  // away from 0: the wrong entry differs by x_1
  Tensor z = randn({2}, complex128).requires_grad_();
  CHECK(autodiff::gradcheck(mul(vec({1.0, 1.0})), {x, z}));
  CHECK(autodiff::gradgradcheck(mul(vec({1.0, 1.0})), {x, z}));
  CHECK_THROWS_WITH_AS(autodiff::gradcheck(mul(vec({1.0, 2.0})), {x, z}),
                       doctest::Contains("output 0 (real) element 1 w.r.t. input 1 (real) element 1"), Error);
  // an input the output does not use has a zero analytic row and passes
  Tensor unused = randn({3}, float64).requires_grad_();
  CHECK(autodiff::gradcheck([](const V& in) { return V{in[0] * 2.0}; }, {x, unused}));
}

TEST_CASE("checkpoint recomputes and matches plain gradients") {
  manual_seed(3);
  Tensor x = randn({5}, float64).requires_grad_();
  Tensor w = randn({5}, float64).requires_grad_();
  auto f = [](const V& in) { return V{(in[0] * in[1]).tanh().sin() * in[0]}; };
  f({x, w})[0].sum().backward();
  auto gx = vals(x.grad()), gw = vals(w.grad());
  x.set_grad(Tensor());
  w.set_grad(Tensor());
  autodiff::checkpoint(f, {x, w})[0].sum().backward();
  auto cx = vals(x.grad()), cw = vals(w.grad());
  for (int i = 0; i < 5; ++i) {
    CHECK(cx[i] == doctest::Approx(gx[i]));
    CHECK(cw[i] == doctest::Approx(gw[i]));
  }
  CHECK(autodiff::gradcheck([&](const V& in) { return autodiff::checkpoint(f, in)[0]; }, {x, w}));
  CHECK(autodiff::gradgradcheck([&](const V& in) { return autodiff::checkpoint(f, in)[0]; }, {x, w}));
}

TEST_CASE("observers see every op call") {
  struct Counter : OpObserver {
    std::vector<std::string> names;
    void on_begin(const OpEvent& e) override {
      if (e.depth == 0) names.push_back(e.name);
    }
  };
  auto c = std::make_shared<Counter>();
  add_op_observer(c);
  Tensor x = vec({1.0, 2.0});
  Tensor y = (x + x).mean();
  remove_op_observer(c);
  Tensor z = x * x;
  REQUIRE(c->names.size() == 2);
  CHECK(c->names[0] == "add");
  CHECK(c->names[1] == "mean");
}

TEST_CASE("observers see each op's tensor arguments and results, on every dispatch path") {
  // apply_op with and without a node to record, apply_nondiff, apply_inplace and composite take their
  // tensors as a view of the caller's braced list (Note [tensor lists]); observers get them as vectors.
  struct Call {
    std::string name;
    bool primitive;
    std::vector<const void*> in;
    Tensor out;  // the first result (read after the observer is gone: reading it runs ops)
  };
  struct Log : OpObserver {
    std::vector<Call> calls;
    void on_end(const OpEvent& e) override {
      if (e.depth != 0) return;
      Call c{e.name, e.primitive, {}, {}};
      for (const Tensor& t : *e.inputs) c.in.push_back(t.data_ptr());
      if (e.outputs && !e.outputs->empty()) c.out = (*e.outputs)[0];
      calls.push_back(std::move(c));
    }
  };
  Tensor a = vec({1.0, 2.0}), b = vec({3.0, 5.0}), w = vec({0.5, 0.25}).requires_grad_();
  Tensor s = vec({1.0, 2.0}), m = vec({1.0, 0.0});
  auto log = std::make_shared<Log>();
  add_op_observer(log);
  Tensor p = a * b;                               // nothing to record
  Tensor q = a * w;                               // records a node
  Tensor e = eq(a, m);                            // no gradient (bool result)
  s.add_(b);                                      // in place: self comes first
  Tensor l = nn::functional::mse_loss(a, b);      // a composition of primitives
  remove_op_observer(log);
  REQUIRE(log->calls.size() == 5);
  const auto& c = log->calls;
  CHECK(c[0].name == "mul");
  CHECK(c[0].in == std::vector<const void*>{a.data_ptr(), b.data_ptr()});
  CHECK(vals(c[0].out) == std::vector<double>{3, 10});
  CHECK(c[1].name == "mul");
  CHECK(c[1].in == std::vector<const void*>{a.data_ptr(), w.data_ptr()});
  CHECK(vals(c[1].out) == std::vector<double>{0.5, 0.5});
  CHECK(q.requires_grad());
  CHECK(c[2].name == "eq");
  CHECK(c[2].in == std::vector<const void*>{a.data_ptr(), m.data_ptr()});
  CHECK(vals(c[2].out.to(float64)) == std::vector<double>{1, 0});
  CHECK(c[3].name == "add_");
  CHECK(c[3].in == std::vector<const void*>{s.data_ptr(), b.data_ptr()});
  CHECK(vals(c[3].out) == std::vector<double>{4, 7});
  CHECK(c[4].name == "mse_loss");
  CHECK_FALSE(c[4].primitive);
  CHECK(c[4].in == std::vector<const void*>{a.data_ptr(), b.data_ptr()});
  CHECK(vals(c[4].out) == std::vector<double>{6.5});
}

TEST_CASE("grad() of a leaf w.r.t. itself is the given gradient") {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  auto g = autodiff::grad({x}, {x}, {vec({3.0, 4.0})});
  REQUIRE(g[0].defined());
  CHECK(vals(g[0]) == std::vector<double>{3, 4});
  CHECK(autodiff::gradcheck([](const V& in) { return in[0].real(); }, {vec({0.5}).requires_grad_()}));
}
