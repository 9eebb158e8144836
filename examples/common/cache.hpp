// examples/common/cache.hpp - keeps an example's generated data in a file, so that a long run that is
// stopped and restarted (train.hpp's resume) does not solve its PDEs again.
#pragma once
#include <phasor/phasor.hpp>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace cache {

/// The tensors in `path` when it exists and was written for `key`; otherwise those `make()` returns
/// (a StateDict), saved to `path` (unless it is empty) with the key, `note` and the default
/// generator's position after make(). On a load the generator moves to that saved position, so what
/// the program draws afterwards (e.g. the model's initialization) is the same either way; `note`
/// then receives the saved note. A file made for another key is an error.
template <class Make>
phasor::StateDict load_or_make(const std::string& path, const std::string& key, std::string& note, Make make) {
  if (!path.empty() && std::ifstream(path).good()) {
    phasor::io::Metadata meta;
    phasor::StateDict d = phasor::io::load_safetensors(path, &meta);
    if (meta["data_key"] != key)
      throw std::runtime_error(path + " holds data for " + meta["data_key"] + ", not " + key +
                               ": remove it or give another path");
    phasor::default_generator().set_offset(std::stoull(meta.at("rng_offset")));
    note = meta["note"];
    std::printf("data: loaded %s\n", path.c_str());
    return d;
  }
  phasor::StateDict d = make();
  if (!path.empty()) {
    phasor::io::save_safetensors(
        path, d,
        {{"data_key", key}, {"rng_offset", std::to_string(phasor::default_generator().offset())}, {"note", note}});
    std::printf("data: saved to %s\n", path.c_str());
  }
  return d;
}

}  // namespace cache
