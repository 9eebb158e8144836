// src/linalg/einsum.cpp - einsum as a composition of public ops (so gradients of every order
// come for free): repeated labels -> diagonal views, labels found in a single operand -> sum,
// then operands are contracted pairwise left to right with permute + reshape + matmul.
//
// Note [einsum labels]
// Every dim of every operand gets an integer label: letters A-Z are 0..25, a-z are 26..51 (so
// sorting ids sorts labels like the ASCII characters, as torch and numpy do), and the dims
// covered by "..." get 52 + j, right-aligned over the longest ellipsis (numpy broadcasting).
// Sizes of one label must agree across operands or be 1 (a size-1 dim broadcasts, as in
// torch). Implicit output ("ij,jk"): the ellipsis dims, then the labels that occur exactly once
// in the whole equation, sorted. An explicit output without "..." sums the ellipsis dims.
//
// Note [einsum contraction]
// Pairwise step (left, right) with the set of labels still needed (in the output or in a
// later operand): labels in both and needed -> batch; in both and not needed -> contracted;
// in one side only -> kept (or summed when not needed). With no contracted label the step is
// a broadcast multiply; with no kept label it is multiply + sum; otherwise a batched matmul
// (batch, N, K) @ (batch, K, M) after permuting each side to (batch, kept, contracted).
#include <algorithm>
#include <array>
#include <functional>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {
namespace {

// ---- diagonal view (private primitive; ops.hpp has no diagonal yet) -----------------------------
// groups[i] lists the input dims that collapse into output dim i (all of one size); the view's
// stride along dim i is the sum of their strides. Its gradient scatters into zeros through the
// same view (einsum_diagonal_backward), whose own gradient is the view again, so gradients of
// gradients work (the pattern of selection views in src/core/views.cpp).
using DimGroups = std::vector<std::vector<std::size_t>>;

Tensor raw_diagonal(const Tensor& t, const DimGroups& groups) {
  Shape s, st;
  for (const auto& g : groups) {
    s.push_back(t.shape()[g[0]]);
    std::int64_t stride = 0;
    for (auto d : g) stride += t.strides()[d];
    st.push_back(stride);
  }
  return make_view(t, s, st, t.storage_offset());
}

Tensor take_diagonal(const Tensor& x, const DimGroups& groups);

Tensor diagonal_scatter(const Tensor& g, const Shape& shape, const DimGroups& groups) {
  return apply_op(
      "einsum_diagonal_backward", {g}, kSaveNone,
      [shape, groups](In in) {
        Tensor z = zeros(shape, in[0].dtype(), in[0].device());
        copy_into(raw_diagonal(z, groups), in[0]);
        return z;
      },
      [groups](const Ctx&, const G& gg) { return G{take_diagonal(gg[0], groups)}; });
}

Tensor take_diagonal(const Tensor& x, const DimGroups& groups) {
  return apply_op(
      "einsum_diagonal", {x}, kSaveNone,
      [groups](In in) {
        Tensor v = raw_diagonal(in[0], groups);
        set_view_base(v, in[0]);
        return v;
      },
      [groups](const Ctx& c, const G& g) { return G{diagonal_scatter(g[0], c.input_shape(0), groups)}; });
}

// ---- parsing --------------------------------------------------------------------------------------
constexpr int kLetters = 52;  // ids of letters; ellipsis dims start here (Note [einsum labels])

int label_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

std::string label_name(int id) {
  if (id < 26) return std::string("label '") + static_cast<char>('A' + id) + "'";
  if (id < kLetters) return std::string("label '") + static_cast<char>('a' + id - 26) + "'";
  return "ellipsis dim " + std::to_string(id - kLetters);
}

struct Term {
  std::string text;
  std::vector<int> labels;  // letter ids in order
  int ellipsis = -1;        // position in `labels` where "..." sits, -1 if none
};

Term parse_term(const std::string& s, const std::string& eq) {
  Term t;
  t.text = s;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (s.compare(i, 3, "...") != 0)
        throw Error("einsum", "found a '.' that is not part of \"...\" in \"" + eq + "\"");
      if (t.ellipsis >= 0) throw Error("einsum", "subscripts \"" + s + "\" contain more than one \"...\"");
      t.ellipsis = static_cast<int>(t.labels.size());
      i += 2;
      continue;
    }
    const int id = label_id(c);
    if (id < 0)
      throw Error("einsum", std::string("invalid character '") + c + "' in equation \"" + eq +
                                "\"; subscripts must be letters a-z, A-Z or \"...\"");
    t.labels.push_back(id);
  }
  return t;
}

struct Operand {
  Tensor t;
  std::vector<int> ids;  // one label per dim, all distinct
};

int find_id(const std::vector<int>& ids, int id) {
  auto it = std::find(ids.begin(), ids.end(), id);
  return it == ids.end() ? -1 : static_cast<int>(it - ids.begin());
}

/// Sums the dims of `o` whose label fails `keep`.
void sum_out(Operand& o, const std::function<bool(int)>& keep) {
  Shape dims;
  std::vector<int> rest;
  for (std::size_t d = 0; d < o.ids.size(); ++d) {
    if (keep(o.ids[d])) rest.push_back(o.ids[d]);
    else dims.push_back(static_cast<std::int64_t>(d));
  }
  if (dims.empty()) return;
  o.t = o.t.sum(dims);
  o.ids = rest;
}

Tensor permute_to(const Operand& o, const std::vector<int>& order) {
  Shape perm;
  for (int id : order) perm.push_back(find_id(o.ids, id));
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<std::int64_t>(i);
  return identity ? o.t : o.t.permute(perm);
}

std::vector<int> concat(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> r;
  for (auto* p : parts) r.insert(r.end(), p->begin(), p->end());
  return r;
}

/// One pairwise step (Note [einsum contraction]); `needed(id)` = in the output or a later operand.
Operand contract(Operand L, Operand R, const std::function<bool(int)>& needed,
                 const std::array<std::int64_t, 128>& size) {
  sum_out(L, [&](int id) { return needed(id) || find_id(R.ids, id) >= 0; });
  sum_out(R, [&](int id) { return needed(id) || find_id(L.ids, id) >= 0; });
  std::vector<int> batch, lo, con, ro;
  for (int id : L.ids) {
    if (find_id(R.ids, id) >= 0) (needed(id) ? batch : con).push_back(id);
    else lo.push_back(id);
  }
  for (int id : R.ids)
    if (find_id(L.ids, id) < 0) ro.push_back(id);
  const auto nb = static_cast<std::int64_t>(batch.size());
  Operand out;
  out.ids = concat({&batch, &lo, &ro});
  if (con.empty()) {  // broadcast multiply: (batch, lo, 1..) * (batch, 1.., ro)
    Tensor l = permute_to(L, concat({&batch, &lo})), r = permute_to(R, concat({&batch, &ro}));
    for (std::size_t i = 0; i < ro.size(); ++i) l = l.unsqueeze(-1);
    for (std::size_t i = 0; i < lo.size(); ++i) r = r.unsqueeze(nb);
    out.t = l * r;
    return out;
  }
  if (lo.empty() && ro.empty()) {  // batched inner products: multiply and sum the contracted dims
    const auto order = concat({&batch, &con});
    Shape dims;
    for (std::size_t i = 0; i < con.size(); ++i) dims.push_back(nb + static_cast<std::int64_t>(i));
    out.t = (permute_to(L, order) * permute_to(R, order)).sum(dims);
    return out;
  }
  // (B, N, K) @ (B, K, M); size-1 batch/contracted dims are expanded to the label's size first
  Shape ls, rs, res;
  std::int64_t B = 1, N = 1, K = 1, M = 1;
  for (int id : batch) {
    ls.push_back(size[static_cast<std::size_t>(id)]);
    rs.push_back(size[static_cast<std::size_t>(id)]);
    res.push_back(size[static_cast<std::size_t>(id)]);
    B *= size[static_cast<std::size_t>(id)];
  }
  for (int id : lo) {
    const auto s = L.t.size(find_id(L.ids, id));
    ls.push_back(s);
    res.push_back(s);
    N *= s;
  }
  for (int id : con) {
    ls.push_back(size[static_cast<std::size_t>(id)]);
    K *= size[static_cast<std::size_t>(id)];
  }
  for (int id : con) rs.push_back(size[static_cast<std::size_t>(id)]);
  for (int id : ro) {
    const auto s = R.t.size(find_id(R.ids, id));
    rs.push_back(s);
    res.push_back(s);
    M *= s;
  }
  Tensor l = permute_to(L, concat({&batch, &lo, &con})).expand(ls);
  Tensor r = permute_to(R, concat({&batch, &con, &ro})).expand(rs);
  Tensor p = batch.empty() ? mm(l.reshape({N, K}), r.reshape({K, M})) : bmm(l.reshape({B, N, K}), r.reshape({B, K, M}));
  out.t = p.reshape(res);
  return out;
}

Tensor einsum_impl(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : equation)
    if (c != ' ' && c != '\t' && c != '\n') eq += c;
  if (operands.empty()) throw Error("einsum", "expected at least one operand");
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].defined()) throw Error("einsum", "operand " + std::to_string(i) + " is undefined");
  }
  check_same_device(operands, "einsum");

  // split "lhs->rhs" and the lhs terms
  const auto arrow = eq.find("->");
  if (arrow != std::string::npos && eq.find("->", arrow + 2) != std::string::npos)
    throw Error("einsum", "equation \"" + equation + "\" has more than one \"->\"");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (std::size_t b = 0;;) {
    const auto e = lhs.find(',', b);
    terms.push_back(parse_term(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b), equation));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (terms.size() != operands.size())
    throw Error("einsum", "equation \"" + equation + "\" has " + std::to_string(terms.size()) +
                              " operand subscripts but " + std::to_string(operands.size()) + " operands were given");

  // labels per dim (Note [einsum labels])
  std::int64_t ell = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto nl = static_cast<std::int64_t>(terms[i].labels.size()), nd = operands[i].dim();
    if (terms[i].ellipsis < 0 ? nd != nl : nd < nl)
      throw Error("einsum", "operand " + std::to_string(i) + " has " + std::to_string(nd) + " dims (shape " +
                                shape_str(operands[i].shape()) + ") but its subscripts \"" + terms[i].text +
                                "\" name " + (terms[i].ellipsis < 0 ? "" : "at most ") + std::to_string(nl));
    if (terms[i].ellipsis >= 0) ell = std::max(ell, nd - nl);
  }
  if (kLetters + ell > 128) throw Error("einsum", "too many dims under \"...\"");
  std::array<int, 128> count{};  // occurrences in the whole lhs
  std::vector<Operand> ops;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    std::vector<int> ids;
    for (std::size_t j = 0; j < t.labels.size(); ++j) {
      if (static_cast<int>(j) == t.ellipsis) {
        const std::int64_t e = operands[i].dim() - static_cast<std::int64_t>(t.labels.size());
        for (std::int64_t d = 0; d < e; ++d) ids.push_back(kLetters + static_cast<int>(ell - e + d));
      }
      ids.push_back(t.labels[j]);
    }
    if (t.ellipsis == static_cast<int>(t.labels.size())) {
      const std::int64_t e = operands[i].dim() - static_cast<std::int64_t>(t.labels.size());
      for (std::int64_t d = 0; d < e; ++d) ids.push_back(kLetters + static_cast<int>(ell - e + d));
    }
    for (int id : ids) ++count[static_cast<std::size_t>(id)];
    ops.push_back(Operand{operands[i], ids});
  }

  // output labels
  std::vector<int> out_ids;
  std::array<bool, 128> in_out{};
  if (arrow == std::string::npos) {
    for (std::int64_t d = 0; d < ell; ++d) out_ids.push_back(kLetters + static_cast<int>(d));
    for (int id = 0; id < kLetters; ++id)
      if (count[static_cast<std::size_t>(id)] == 1) out_ids.push_back(id);
  } else {
    const Term t = parse_term(eq.substr(arrow + 2), equation);
    for (std::size_t j = 0; j <= t.labels.size(); ++j) {
      if (static_cast<int>(j) == t.ellipsis)
        for (std::int64_t d = 0; d < ell; ++d) out_ids.push_back(kLetters + static_cast<int>(d));
      if (j == t.labels.size()) break;
      const int id = t.labels[j];
      if (count[static_cast<std::size_t>(id)] == 0)
        throw Error("einsum", "output " + label_name(id) + " does not appear in the inputs of \"" + equation + "\"");
      if (std::find(out_ids.begin(), out_ids.end(), id) != out_ids.end())
        throw Error("einsum", "output " + label_name(id) + " appears more than once in \"" + equation + "\"");
      out_ids.push_back(id);
    }
  }
  for (int id : out_ids) in_out[static_cast<std::size_t>(id)] = true;

  // sizes (equal or 1 across operands; equal within one operand), then diagonals
  std::array<std::int64_t, 128> size{};
  std::array<int, 128> size_from{};
  size_from.fill(-1);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    Operand& o = ops[i];
    std::vector<int> uniq;
    DimGroups groups;
    for (std::size_t d = 0; d < o.ids.size(); ++d) {
      const int id = o.ids[d];
      const std::int64_t s = o.t.size(static_cast<std::int64_t>(d));
      const int at = find_id(uniq, id);
      if (at >= 0) {
        const std::int64_t s0 = o.t.size(static_cast<std::int64_t>(groups[static_cast<std::size_t>(at)][0]));
        if (s0 != s)
          throw Error("einsum", label_name(id) + " is repeated in operand " + std::to_string(i) +
                                    " with different sizes " + std::to_string(s0) + " and " + std::to_string(s));
        groups[static_cast<std::size_t>(at)].push_back(d);
        continue;
      }
      uniq.push_back(id);
      groups.push_back({d});
      auto& have = size[static_cast<std::size_t>(id)];
      auto& from = size_from[static_cast<std::size_t>(id)];
      if (from < 0 || have == 1) {
        if (from < 0 || s != 1) {
          have = s;
          from = static_cast<int>(i);
        }
      } else if (s != 1 && s != have) {
        throw Error("einsum", label_name(id) + " has size " + std::to_string(have) + " in operand " +
                                  std::to_string(from) + " but size " + std::to_string(s) + " in operand " +
                                  std::to_string(i));
      }
    }
    if (uniq.size() != o.ids.size()) {
      o.t = take_diagonal(o.t, groups);
      o.ids = uniq;
    }
  }

  // labels found in one operand only and not in the output are summed right away
  std::array<int, 128> n_ops{};
  for (const auto& o : ops)
    for (int id : o.ids) ++n_ops[static_cast<std::size_t>(id)];
  for (auto& o : ops)
    sum_out(o, [&](int id) { return in_out[static_cast<std::size_t>(id)] || n_ops[static_cast<std::size_t>(id)] > 1; });

  // pairwise contraction, left to right
  Operand acc = ops[0];
  for (std::size_t i = 1; i < ops.size(); ++i) {
    auto needed = [&](int id) {
      if (in_out[static_cast<std::size_t>(id)]) return true;
      for (std::size_t j = i + 1; j < ops.size(); ++j)
        if (find_id(ops[j].ids, id) >= 0) return true;
      return false;
    };
    acc = contract(std::move(acc), ops[i], needed, size);
  }
  sum_out(acc, [&](int id) { return in_out[static_cast<std::size_t>(id)]; });
  return permute_to(acc, out_ids);
}

}  // namespace
}  // namespace detail

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  return detail::composite("einsum", operands, [&] { return detail::einsum_impl(equation, operands); });
}

}  // namespace phasor
