// src/core/small_vec.hpp - a short list of trivially copyable values kept inline: hot paths (the FFT's
// dims and plan keys, a convolution's window geometry) then make no heap allocation for up to N entries.
#pragma once
#include <array>
#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace phasor::detail {

/// A vector that stores up to N elements inline and spills to the heap beyond.
template <class T, std::size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVec holds trivially copyable values");

 public:
  SmallVec() = default;
  SmallVec(const SmallVec& o) { copy_from(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  /// n copies of v.
  explicit SmallVec(std::size_t n, const T& v = T()) { assign(n, v); }
  SmallVec(std::initializer_list<T> il) {
    for (const T& v : il) push_back(v);
  }
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>  // (n, v) is the count form
  SmallVec(It first, It last) {
    for (; first != last; ++first) push_back(static_cast<T>(*first));
  }
  explicit SmallVec(const std::vector<T>& v) : SmallVec(v.begin(), v.end()) {}

  void push_back(const T& v) {
    if (n_ < N) {
      a_[n_] = v;
    } else {
      if (n_ == N) heap_.assign(a_.begin(), a_.end());
      heap_.push_back(v);
    }
    ++n_;
  }
  void clear() {
    n_ = 0;
    heap_.clear();
  }
  /// Replaces the contents with n copies of v.
  void assign(std::size_t n, const T& v) {
    clear();
    for (std::size_t i = 0; i < n; ++i) push_back(v);
  }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T* data() { return n_ <= N ? a_.data() : heap_.data(); }
  const T* data() const { return n_ <= N ? a_.data() : heap_.data(); }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& back() { return data()[n_ - 1]; }
  const T& back() const { return data()[n_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + n_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + n_; }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }
  bool operator==(const SmallVec& o) const {
    if (n_ != o.n_) return false;
    for (std::size_t i = 0; i < n_; ++i)
      if (!((*this)[i] == o[i])) return false;
    return true;
  }

 private:
  void copy_from(const SmallVec& o) {
    n_ = o.n_;
    if (n_ <= N) {
      heap_.clear();
      for (std::size_t i = 0; i < n_; ++i) a_[i] = o.a_[i];  // only the used entries
    } else {
      heap_ = o.heap_;
    }
  }

  std::array<T, N> a_;  // entries past n_ are never read
  std::size_t n_ = 0;
  std::vector<T> heap_;
};

}  // namespace phasor::detail
