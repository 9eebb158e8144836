// tests/test_module.cpp - nn::Module: registries, dotted names, modes, dtype moves, state_dict, printing.
#include <doctest/doctest.h>

#include <sstream>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::vals;

namespace {

// y = x * scale + shift, with a buffer counting calls.
struct Affine : nn::Module {
  Tensor scale, shift, calls;
  explicit Affine(std::int64_t n) : nn::Module("Affine") {
    scale = register_parameter("scale", ones({n}));
    shift = register_parameter("shift", zeros({n}));
    calls = register_buffer("calls", zeros({}, int64));
  }
  Tensor forward(const Tensor& x) override {
    calls.add_(Scalar(1));
    return x * scale + shift;
  }
  std::string extra_repr() const override { return "n=" + std::to_string(scale.numel()); }
};

struct Net : nn::Module {
  std::shared_ptr<Affine> a, b;
  Tensor w;
  Net() : nn::Module("Net") {
    a = register_module("a", std::make_shared<Affine>(3));
    b = register_module("b", std::make_shared<Affine>(3));
    w = register_parameter("w", full({3}, 2.0, complex64));
    register_buffer("scratch", zeros({3}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) override { return b->forward(a->forward(x)); }
};

}  // namespace

TEST_CASE("module registries and dotted names") {
  Net net;
  auto named = net.named_parameters();
  REQUIRE(named.size() == 5);
  CHECK(named[0].first == "w");
  CHECK(named[1].first == "a.scale");
  CHECK(named[4].first == "b.shift");
  CHECK(net.parameters(false).size() == 1);
  CHECK(net.num_parameters() == 15);
  CHECK(net.named_buffers().size() == 3);
  CHECK(net.children().size() == 2);
  auto mods = net.named_modules();
  REQUIRE(mods.size() == 2);
  CHECK(mods[1].first == "b");
  for (auto& p : net.parameters()) CHECK(p.requires_grad());
  // The handles are shared: an in-place change through the registry shows in the member.
  { NoGradGuard ng; net.parameters()[1].fill_(Scalar(3.0)); }
  CHECK(vals(net.a->scale) == std::vector<double>{3, 3, 3});
}

TEST_CASE("module forward, backward, zero_grad and modes") {
  Net net;
  Tensor x = from_vector(std::vector<float>{1, 2, 3});
  net.forward(x).sum().backward();
  CHECK(vals(net.a->scale.grad()) == std::vector<double>{1, 2, 3});
  CHECK(net.a->calls.item<std::int64_t>() == 1);
  net.zero_grad(/*set_to_none=*/false);
  CHECK(vals(net.a->scale.grad()) == std::vector<double>{0, 0, 0});
  net.zero_grad();
  CHECK_FALSE(net.a->scale.grad().defined());
  CHECK(net.is_training());
  net.eval();
  CHECK_FALSE(net.a->is_training());
  net.train();
  CHECK(net.b->is_training());
  nn::Module bare;
  CHECK_THROWS_WITH_AS(bare.forward(x), "[Module] this module has no single-tensor forward", Error);
}

TEST_CASE("module to(dtype) keeps the members' identity") {
  Net net;
  Tensor before = net.a->scale;
  net.to(float64);
  CHECK(net.a->scale.dtype() == float64);
  CHECK(before.is_same(net.a->scale));
  CHECK(net.w.dtype() == complex128);
  CHECK(net.a->calls.dtype() == int64);
  CHECK(net.a->scale.requires_grad());
  net.forward(ones({3}, float64)).sum().backward();
  CHECK(net.a->scale.grad().dtype() == float64);
  CHECK_THROWS_WITH_AS(net.to(int64), "[Net.to] modules convert to floating or complex dtypes only, got int64", Error);
  CHECK(net.a->scale.dtype() == float64);
}

TEST_CASE("module state_dict round trip and strict errors") {
  manual_seed(1);
  Net src, dst;
  { NoGradGuard ng; src.a->scale.copy_(randn({3})); src.w.copy_(randn({3}, complex64)); }
  auto sd = src.state_dict();
  CHECK(sd.size() == 7);  // 5 parameters + 2 persistent buffers ("scratch" is not persistent)
  CHECK(sd.count("a.calls") == 1);
  CHECK(sd.count("scratch") == 0);
  dst.load_state_dict(sd);
  CHECK(vals(dst.a->scale) == vals(src.a->scale));
  CHECK(vals(dst.w.real()) == vals(src.w.real()));
  CHECK_FALSE(dst.a->scale.is_same(src.a->scale));  // copied, not aliased

  // Errors list every offending key and change nothing.
  auto bad = sd;
  bad.erase("b.shift");
  bad["extra"] = zeros({1});
  bad["a.scale"] = zeros({4});
  const auto keep = vals(dst.a->shift);
  CHECK_THROWS_WITH_AS(dst.load_state_dict(bad),
                       "[Net.load_state_dict] shape mismatch: a.scale (module (3,), dict (4,)); missing keys: "
                       "b.shift; unexpected keys: extra",
                       Error);
  CHECK(vals(dst.a->scale) == vals(src.a->scale));
  CHECK(vals(dst.a->shift) == keep);
  // Non-strict: missing/unexpected reported, shapes still checked.
  bad["a.scale"] = zeros({3});
  auto r = dst.load_state_dict(bad, /*strict=*/false);
  CHECK(r.missing_keys == std::vector<std::string>{"b.shift"});
  CHECK(r.unexpected_keys == std::vector<std::string>{"extra"});
  CHECK(vals(dst.a->scale) == std::vector<double>{0, 0, 0});
  bad["w"] = zeros({3});
  bad["w"] = full({3}, 1.0, complex64);
  bad["a.shift"] = full({3}, 1.0, complex64);
  CHECK_THROWS_WITH_AS(dst.load_state_dict(bad, false),
                       "[Net.load_state_dict] shape mismatch: a.shift (complex complex64 into float32)", Error);
}

TEST_CASE("module registration errors and printing") {
  Affine a(2);
  CHECK_THROWS_WITH_AS(a.register_parameter("scale", ones({1})), "[Affine.register_parameter] 'scale' is already registered",
                       Error);
  CHECK_THROWS_WITH_AS(a.register_buffer("x.y", ones({1})),
                       "[Affine.register_buffer] name 'x.y' must be non-empty and contain no '.'", Error);
  Tensor nonleaf = ones({2}).requires_grad_() * 2.0;
  CHECK_THROWS_WITH_AS(a.register_parameter("p", nonleaf),
                       "[Affine.register_parameter] 'p' must be a leaf tensor (detach it first)", Error);
  CHECK_THROWS_WITH_AS(a.register_module("sub", std::shared_ptr<nn::Module>()),
                       "[Affine.register_module] submodule 'sub' is null", Error);
  Net net;
  std::ostringstream os;
  os << net;
  CHECK(os.str() ==
        "Net(\n"
        "  (a): Affine(n=3)  # 6 parameters\n"
        "  (b): Affine(n=3)  # 6 parameters\n"
        ")  # 15 parameters");
}

TEST_CASE("set_data") {
  Tensor p = ones({2}).requires_grad_();
  (p * 3.0).sum().backward();
  p.set_data(full({2}, 5.0));
  CHECK(p.grad().defined());  // same dtype and shape: gradient kept
  p.set_data(full({3}, 5.0, float64));
  CHECK_FALSE(p.grad().defined());
  CHECK(p.shape() == Shape{3});
  CHECK_THROWS_WITH_AS(p.set_data(zeros({3}, int64)), "[set_data] a tensor that requires grad cannot hold int64 data",
                       Error);
  Tensor q = p * 2.0;
  CHECK_THROWS_WITH_AS(q.set_data(zeros({3})), "[set_data] only leaf tensors can take new data", Error);
}
