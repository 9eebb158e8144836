// examples/common/train.hpp - the epoch loop the FNO examples share: one optimizer step per batch,
// a scheduler step and a test error per epoch, progress on a bar (or a line every few epochs when
// the output is not a terminal), and the loss curves for the figures. Long runs can resume: with
// Options::resume_path, fit() saves model, optimizer, scheduler, loader epoch and curves every
// save_every epochs (atomically) and, when that file exists at the start, continues from it; the
// loader reshuffles by (seed, epoch), so a resumed run repeats the uninterrupted one's batches.
#pragma once
#include <phasor/phasor.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace train {

/// What fit() shows and how it averages the training loss.
struct Options {
  int epochs = 1;
  int print_every = 10;              ///< epochs between printed lines when the bar is not live
  const char* train_label = "train";  ///< names of the two curves in the progress output
  const char* test_label = "test";
  bool loss_is_sum = false;  ///< batch_loss sums over the batch (else it is the batch mean)
  std::string resume_path;   ///< when set: continue from this file if it exists, and save to it
  int save_every = 5;        ///< epochs between saves to resume_path (and after the last one)
  /// On a CUDA device: replay the training step of every batch shaped like the first from a
  /// phasor::cuda::Graph (README, Note [CUDA graphs]): the batch is copied into the graph's inputs, and
  /// the step is captured once (each replay reads the lr the scheduler has set). Other batches (a last
  /// partial one) and the first step (it makes the optimizer state) run eagerly. The optimizer must be
  /// capturable (Adam: AdamOptions::capturable).
  bool cuda_graph = false;
};

/// Per-epoch curves: mean training loss per sample and test error, and the wall time of the loop.
struct History {
  std::vector<double> epoch, train, test;
  double seconds = 0;
  std::int64_t steps = 0, replayed = 0;  ///< training steps of this run, and those replayed from a CUDA graph
};

namespace detail {
/// Prefixes every key of `d` with `prefix` into `out`.
inline void put(phasor::StateDict& out, const std::string& prefix, const phasor::StateDict& d) {
  for (const auto& [k, v] : d) out[prefix + k] = v;
}
/// The entries of `d` under `prefix`, without it.
inline phasor::StateDict take(const phasor::StateDict& d, const std::string& prefix) {
  phasor::StateDict out;
  for (const auto& [k, v] : d)
    if (k.compare(0, prefix.size(), prefix) == 0) out[k.substr(prefix.size())] = v;
  return out;
}
}  // namespace detail

/// Trains `model` for o.epochs epochs: per batch zero_grad, batch_loss(batch), backward, step; per
/// epoch sched.step() and test_error() (model in eval mode, no gradients recorded). After the first
/// epoch it prints the expected total time to stderr.
template <class Loader, class LossFn, class TestFn>
History fit(phasor::nn::Module& model, Loader& loader, phasor::optim::Optimizer& opt,
            phasor::optim::LRScheduler& sched, const Options& o, LossFn batch_loss, TestFn test_error) {
  History h;
  const auto t0 = std::chrono::steady_clock::now();
  double earlier_seconds = 0;  // training time of the runs this one resumes
  auto seconds = [&] {
    return earlier_seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  int first = 1;
  if (!o.resume_path.empty() && std::ifstream(o.resume_path).good()) {
    phasor::io::Metadata meta;
    const phasor::StateDict d = phasor::io::load_safetensors(o.resume_path, &meta);
    model.load_state_dict(detail::take(d, "model."));
    opt.load_state_dict(detail::take(d, "optimizer."));
    sched.load_state_dict(detail::take(d, "scheduler."));
    h.train = phasor::to_vector<double>(d.at("history.train"));
    h.test = phasor::to_vector<double>(d.at("history.test"));
    for (std::size_t i = 0; i < h.train.size(); ++i) h.epoch.push_back(static_cast<double>(i + 1));
    earlier_seconds = std::stod(meta.at("seconds"));
    first = static_cast<int>(h.train.size()) + 1;
    loader.set_epoch(first - 1);
    std::printf("resumed from %s after epoch %d (%.0f s of training so far)\n", o.resume_path.c_str(), first - 1,
                earlier_seconds);
  }
  auto save = [&](int ep) {
    phasor::StateDict d;
    detail::put(d, "model.", model.state_dict());
    detail::put(d, "optimizer.", opt.state_dict());
    detail::put(d, "scheduler.", sched.state_dict());
    d["history.train"] = phasor::from_vector(h.train);
    d["history.test"] = phasor::from_vector(h.test);
    phasor::io::save_safetensors(o.resume_path, d, {{"epoch", std::to_string(ep)}, {"seconds", std::to_string(seconds())}});
  };
  const auto params = model.parameters();
  const bool graphed = o.cuda_graph && !params.empty() && params[0].device().is_cuda();
  std::vector<phasor::Shape> shapes;   // the first batch's: batches of these shapes replay the graph
  std::vector<phasor::Tensor> inputs;  // the graph's: each such batch is copied into them
  phasor::Tensor graph_loss;           // the graph's loss, rewritten by each replay
  phasor::cuda::Graph graph;
  bool warm = false;  // an eager step of this run has made (or moved) the optimizer state
  auto fits = [&](const std::vector<phasor::Tensor>& b) {
    if (shapes.empty())
      for (const phasor::Tensor& t : b) shapes.push_back(t.shape());
    if (b.size() != shapes.size()) return false;
    for (std::size_t i = 0; i < b.size(); ++i)
      if (b[i].shape() != shapes[i]) return false;
    return true;
  };
  phasor::ProgressBar bar(o.epochs - first + 1, "training");
  for (int ep = first; ep <= o.epochs; ++ep) {
    model.train();
    phasor::Tensor total_t;  // the loss sum on the device: read once per epoch, not once per batch
    std::int64_t seen = 0;
    for (auto& b : loader) {
      phasor::Tensor loss;
      if (graphed && fits(b) && warm) {
        if (inputs.empty()) {
          for (const phasor::Tensor& t : b) inputs.push_back(t.clone());
        } else {
          for (std::size_t i = 0; i < b.size(); ++i) inputs[i].copy_(b[i]);
        }
        if (!graph.is_captured()) {
          opt.zero_grad();  // the captured backward makes the gradients; each replay rewrites them
          graph.capture([&] {
            graph_loss = batch_loss(inputs);
            graph_loss.backward();
            opt.step();
          });
        }
        graph.replay();
        loss = graph_loss;
        ++h.replayed;
      } else {
        opt.zero_grad();
        loss = batch_loss(b);
        loss.backward();
        opt.step();
        warm = true;
      }
      const std::int64_t n = b[0].size(0);
      const phasor::Tensor part = loss.detach().to(phasor::float64) * (o.loss_is_sum ? 1.0 : static_cast<double>(n));
      total_t = total_t.defined() ? total_t + part : part;
      seen += n;
      ++h.steps;
    }
    const double total = total_t.defined() ? total_t.template item<double>() : 0.0;
    sched.step();
    double test_err;
    {
      phasor::NoGradGuard ng;
      model.eval();
      test_err = test_error();
    }
    h.epoch.push_back(ep), h.train.push_back(total / static_cast<double>(seen)), h.test.push_back(test_err);
    char post[96];
    std::snprintf(post, sizeof post, "%s %.3e  %s %.3e", o.train_label, h.train.back(), o.test_label, test_err);
    bar.set_postfix(post);
    bar.update(1);
    if (ep == first && o.epochs > first) {
      const double t1 = seconds() - earlier_seconds, left = t1 * (o.epochs - first + 1);
      std::fprintf(stderr, "\nepoch %d took %.1f s: about %.0f s (%.1f h) for the remaining %d epochs\n", ep, t1,
                   left, left / 3600.0, o.epochs - first + 1);
    }
    if (!o.resume_path.empty() && (ep % o.save_every == 0 || ep == o.epochs)) save(ep);
    if (bar.mode() != phasor::ProgressBar::Mode::live && (ep % o.print_every == 0 || ep == 1 || ep == o.epochs))
      std::printf("epoch %3d  %s rel-L2 %.4e  %s rel-L2 %.4e\n", ep, o.train_label, h.train.back(), o.test_label,
                  test_err);
  }
  bar.close();
  h.seconds = seconds();
  if (graphed)
    std::printf("CUDA graph: %lld of %lld training steps replayed (captured once)\n", (long long)h.replayed,
                (long long)h.steps);
  return h;
}

}  // namespace train
