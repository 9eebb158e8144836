// CPU-vs-device agreement of the losses, distances, one_hot and embeddings of tests/test_loss_extra.cpp,
// with their gradients. Every case is a DEVICE_CASE: on cuda:0 with a GPU, and on the virtual CPU device
// cpu:1 everywhere (tests/cuda_test_util.hpp).
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <phasor/phasor.hpp>
#include <string>
#include <utility>
#include <vector>

using namespace phasor;
using namespace cuda_test;
namespace F = phasor::nn::functional;
using nn::Reduction;

namespace {

using V = std::vector<Tensor>;
using Fn = std::function<Tensor(const V&)>;

double tol(Dtype dt) { return dt == Dtype::Float32 ? 5e-5 : 1e-11; }

/// Gradients of sum f(in)^2 w.r.t. the floating inputs agree on the CPU and on dev (int64 inputs are passed as
/// they are; an input the op does not differentiate, e.g. a +-1 target, has no gradient on either side).
void grads_match(const Device& dev, const std::string& name, const Fn& f, const V& in, double eps) {
  CAPTURE(name);
  V c, g;
  for (const auto& t : in) {
    const bool fl = is_floating(t.dtype());
    c.push_back(fl ? t.detach().clone().requires_grad_() : t);
    g.push_back(fl ? t.detach().to(dev).requires_grad_() : t.to(dev));
  }
  sum_sq(f(c)).backward();
  sum_sq(f(g)).backward();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!is_floating(in[i].dtype())) continue;
    CAPTURE(i);
    CHECK(c[i].grad().defined() == g[i].grad().defined());
    if (!c[i].grad().defined() || !g[i].grad().defined()) continue;
    CHECK(g[i].grad().device() == dev);
    CHECK(rel_diff(g[i].grad(), c[i].grad()) <= eps);
  }
}

/// Values and gradients of f agree on the CPU and on dev.
void both(const Device& dev, const std::string& name, const Fn& f, const V& in, double eps) {
  agree(dev, name, f, in, eps);
  grads_match(dev, name, f, in, eps);
}

}  // namespace

DEVICE_CASE("loss extra: probabilistic losses agree with the CPU, with gradients") {
  manual_seed(31);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const double t = tol(dt);
    const Tensor x = sample({4, 3}, dt), y = sample({4, 3}, dt);
    const Tensor prob = (rand({4, 3}, float64) * 0.9 + 0.05).to(dt), tprob = rand({4, 3}, float64).to(dt);
    const Tensor w = (rand({3}, float64) + 0.5).to(dt), pw = (rand({3}, float64) + 0.5).to(dt);
    const Tensor var = (rand({4, 3}, float64) + 0.2).to(dt), var1 = (rand({4}, float64) + 0.2).to(dt);
    const Tensor cnt = from_vector(std::vector<double>{0, 1, 2, 3, 0.5, 7, 1, 4, 2, 0, 5, 1.5}, Shape{4, 3}).to(dt);
    for (Reduction r : {Reduction::none, Reduction::mean, Reduction::sum}) {
      CAPTURE(static_cast<int>(r));
      both(dev, "binary_cross_entropy", [r](const V& a) { return F::binary_cross_entropy(a[0], a[1], a[2], r); },
           {prob, tprob, w}, t);
      both(dev, "binary_cross_entropy_with_logits",
           [r](const V& a) { return F::binary_cross_entropy_with_logits(a[0], a[1], a[2], r, a[3]); }, {x, tprob, w, pw}, t);
      both(dev, "poisson_nll_loss", [r](const V& a) { return F::poisson_nll_loss(a[0], a[1], true, true, 1e-8, r); },
           {x, cnt}, t);
      both(dev, "poisson_nll_loss linear", [r](const V& a) { return F::poisson_nll_loss(a[0], a[1], false, false, 1e-8, r); },
           {prob, cnt}, t);
      both(dev, "gaussian_nll_loss", [r](const V& a) { return F::gaussian_nll_loss(a[0], a[1], a[2], true, 1e-6, r); },
           {x, y, var}, t);
      both(dev, "gaussian_nll_loss homoscedastic",
           [r](const V& a) { return F::gaussian_nll_loss(a[0], a[1], a[2], false, 1e-6, r); }, {x, y, var1}, t);
    }
    for (Reduction r : {Reduction::none, Reduction::mean, Reduction::sum, Reduction::batchmean}) {
      both(dev, "kl_div", [r](const V& a) { return F::kl_div(F::log_softmax(a[0], 1), F::softmax(a[1], 1), r); }, {x, y}, t);
      both(dev, "kl_div log_target",
           [r](const V& a) { return F::kl_div(F::log_softmax(a[0], 1), F::log_softmax(a[1], 1), r, true); }, {x, y}, t);
    }
    // the input range check runs on the device too
    CHECK(error_of([&] { (void)F::binary_cross_entropy(on(dev, prob) * 3.0, on(dev, tprob)); })
              .find("[binary_cross_entropy] all elements of input should be between 0 and 1") == 0);
    CHECK(error_of([&] { (void)F::gaussian_nll_loss(on(dev, x), on(dev, y), on(dev, -var)); })
              .find("[gaussian_nll_loss] var has negative entries") == 0);
  }
}

DEVICE_CASE("loss extra: margin losses agree with the CPU, with gradients") {
  manual_seed(32);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const double t = tol(dt);
    const Tensor a = sample({5, 4}, dt), b = sample({5, 4}, dt), c = sample({5, 4}, dt);
    const Tensor pm = where(rand({5}, float64) < 0.5, full({}, -1.0, float64), full({}, 1.0, float64)).to(dt);
    const Tensor pm2 = where(rand({5, 4}, float64) < 0.5, full({}, -1.0, float64), full({}, 1.0, float64)).to(dt);
    const Tensor cls = from_vector(std::vector<std::int64_t>{0, 3, 1, 1, 2});
    const Tensor w = (rand({4}, float64) + 0.5).to(dt), prob = rand({5, 4}, float64).to(dt);
    for (Reduction r : {Reduction::none, Reduction::mean, Reduction::sum}) {
      CAPTURE(static_cast<int>(r));
      both(dev, "cosine_embedding_loss", [r](const V& x) { return F::cosine_embedding_loss(x[0], x[1], x[2], 0.1, r); },
           {a, b, pm}, t);
      both(dev, "margin_ranking_loss", [r](const V& x) { return F::margin_ranking_loss(x[0], x[1], x[2], 0.2, r); },
           {a.select(1, 0), b.select(1, 0), pm}, t);
      both(dev, "hinge_embedding_loss", [r](const V& x) { return F::hinge_embedding_loss(x[0], x[1], 0.8, r); }, {a, pm2}, t);
      both(dev, "soft_margin_loss", [r](const V& x) { return F::soft_margin_loss(x[0], x[1], r); }, {a, pm2}, t);
      both(dev, "multilabel_soft_margin_loss",
           [r](const V& x) { return F::multilabel_soft_margin_loss(x[0], x[1], x[2], r); }, {a, prob, w}, t);
      for (std::int64_t p : {1, 2})
        both(dev, "multi_margin_loss", [r, p](const V& x) { return F::multi_margin_loss(x[0], x[1], p, 0.9, x[2], r); },
             {a, cls, w}, t);
      for (bool swap : {false, true})
        both(dev, "triplet_margin_loss",
             [r, swap](const V& x) { return F::triplet_margin_loss(x[0], x[1], x[2], 1.0, 2, 1e-6, swap, r); }, {a, b, c}, t);
    }
    CHECK(error_of([&] { (void)F::multi_margin_loss(on(dev, a), on(dev, cls) + 3); }) ==
          "[multi_margin_loss] target 6 out of range for 4 classes");
  }
}

DEVICE_CASE("loss extra: distances agree with the CPU, with gradients") {
  manual_seed(33);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const double t = tol(dt);
    const Tensor a = sample({3, 1, 5}, dt), b = sample({4, 5}, dt), x = sample({6, 4}, dt);
    both(dev, "cosine_similarity", [](const V& v) { return F::cosine_similarity(v[0], v[1], -1); }, {a, b}, t);
    both(dev, "cosine_similarity dim 1", [](const V& v) { return F::cosine_similarity(v[0], v[1]); }, {b, sample({4, 5}, dt)}, t);
    for (double p : {1.0, 2.0, 3.0}) {
      both(dev, "pairwise_distance", [p](const V& v) { return F::pairwise_distance(v[0], v[1], p, 1e-6, true); }, {a, b}, t);
      both(dev, "pdist", [p](const V& v) { return F::pdist(v[0], p); }, {x}, t);
    }
    agree(dev, "pdist inf", [](const V& v) { return F::pdist(v[0], 1.0 / 0.0); }, {x}, t);
  }
}

DEVICE_CASE("loss extra: one_hot, embedding, embedding_bag and the Embedding module on a device") {
  manual_seed(34);
  const Tensor idx = from_vector(std::vector<std::int64_t>{2, 0, 5, 2, 1, 5}, Shape{2, 3});
  agree(dev, "one_hot", [](const V& v) { return F::one_hot(v[0]); }, {idx}, 0);
  agree(dev, "one_hot 7", [](const V& v) { return F::one_hot(v[0], 7); }, {idx}, 0);
  CHECK(error_of([&] { (void)F::one_hot(on(dev, idx), 4); }) == "[one_hot] class value 5 out of range for 4 classes");
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const double t = tol(dt);
    const Tensor w = sample({6, 3}, dt);
    // the index is an input too: agree/grads_agree move it to the device
    both(dev, "embedding", [](const V& v) { return F::embedding(v[1], v[0]); }, {w, idx}, t);
    both(dev, "embedding padding freq", [](const V& v) { return F::embedding(v[1], v[0], 2, std::nullopt, 2.0, true); },
         {w, idx}, t);
    // max_norm renormalises the weight in place on the device as on the CPU
    Tensor wc = w.clone() * 3.0, wd = on(dev, wc);
    const Tensor oc = F::embedding(idx, wc, std::nullopt, 1.0), od = F::embedding(on(dev, idx), wd, std::nullopt, 1.0);
    CHECK(od.device() == dev);
    CHECK(rel_diff(od, oc) <= t);
    CHECK(rel_diff(wd, wc) <= t);
    CHECK(error_of([&] { (void)F::embedding(on(dev, idx) + 1, on(dev, w)); }) == "[embedding] index 6 out of range for 6 embeddings");
    const Tensor flat = idx.reshape({-1}), off = from_vector(std::vector<std::int64_t>{0, 2, 2}), psw = sample({6}, dt);
    using M = F::EmbeddingBagMode;
    for (M mode : {M::sum, M::mean, M::max})
      both(dev, "embedding_bag",
           [mode](const V& v) { return F::embedding_bag(v[1], v[0], v[2], std::nullopt, 2.0, false, mode, false, Tensor(), false, 0); },
           {w, flat, off}, t);
    both(dev, "embedding_bag weights",
         [](const V& v) { return F::embedding_bag(v[1], v[0], v[2], std::nullopt, 2.0, false, M::sum, false, v[3]); },
         {w, flat, off, psw}, t);
    both(dev, "embedding_bag 2-D", [](const V& v) { return F::embedding_bag(v[1], v[0]); }, {w, idx}, t);
  }
  // the module: to(dev), forward and a gradient on the device
  auto emb = std::make_shared<nn::Embedding>(nn::EmbeddingOptions(6, 3).padding_idx(0).dtype(float64));
  const Tensor want = emb->forward(idx);
  emb->to(dev);
  Tensor got = emb->forward(on(dev, idx));
  CHECK(got.device() == dev);
  CHECK(rel_diff(got, want) == 0);
  got.sum().backward();
  CHECK(emb->weight.grad().device() == dev);
  CHECK(rel_diff(emb->weight.grad().select(0, 0), zeros({3}, float64)) == 0);
  auto pre = nn::Embedding::from_pretrained(on(dev, sample({4, 2}, float64)));
  CHECK(pre->forward(on(dev, from_vector(std::vector<std::int64_t>{3}))).device() == dev);
}

DEVICE_CASE("loss extra: second derivatives agree with the CPU") {
  manual_seed(35);
  const Tensor x = sample({4, 3}, float64), y = sample({4, 3}, float64), t01 = rand({4, 3}, float64);
  const Tensor var = rand({4, 3}, float64) + 0.2, w = rand({6, 3}, float64);
  const double t = 1e-10;
  grad2_agree(dev, "binary_cross_entropy_with_logits",
              [](const V& a) { return F::binary_cross_entropy_with_logits(a[0], a[1]); }, {x, t01}, t);
  grad2_agree(dev, "soft_margin_loss", [](const V& a) { return F::soft_margin_loss(a[0], a[1]); }, {x, y}, t);
  grad2_agree(dev, "multilabel_soft_margin_loss", [](const V& a) { return F::multilabel_soft_margin_loss(a[0], a[1]); },
              {x, t01}, t);
  grad2_agree(dev, "gaussian_nll_loss", [](const V& a) { return F::gaussian_nll_loss(a[0], a[1], a[2]); }, {x, y, var}, t);
  grad2_agree(dev, "cosine_similarity", [](const V& a) { return F::cosine_similarity(a[0], a[1]); }, {x, y}, t);
  grad2_agree(dev, "pairwise_distance p=3", [](const V& a) { return F::pairwise_distance(a[0], a[1], 3); }, {x, y}, t);
  grad2_agree(dev, "triplet_margin_loss p=1",
              [](const V& a) { return F::triplet_margin_loss(a[0].select(0, 0), a[0].select(0, 1), a[1].select(0, 2), 5.0, 1); },
              {x, y}, t);
  const Tensor idx = from_vector(std::vector<std::int64_t>{1, 4, 1, 0});
  grad2_agree(dev, "embedding", [idx](const V& a) { return F::embedding(idx.to(a[0].device()), a[0]).square(); }, {w}, t);
}

DEVICE_CASE("loss extra: the edits and comparisons the loss tests build their inputs with work on a device") {
  // index_put_ (copy_), add_, isnan and equal (all) as tests/test_loss_extra.cpp uses them, on dev
  Tensor x = zeros({2, 3}, float64, dev);
  x.index_put_({0, 1}, 1.0);
  x.add_(ones({2, 3}, float64, dev));
  CHECK(x.device() == dev);
  CHECK(equal(x, from_vector(std::vector<double>{1, 2, 1, 1, 1, 1}, Shape{2, 3}).to(dev)));
  CHECK(!isnan(x).any().item<bool>());
}
