// tests/test_print.cpp - operator<< for Tensor: exact strings for small cases. The value parts
// were produced by PyTorch 1.13 (torch._tensor_str._tensor_str(t, indent=0)); phasor then adds
// a line "[dtype shape device]" with the autograd state.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <phasor/phasor.hpp>
#include <sstream>

using namespace phasor;

namespace {
std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}
}  // namespace

TEST_CASE("print: floating styles") {
  CHECK(str(from_vector(std::vector<float>{1, 2.5f, 3, 4, 5, -6}, Shape{2, 3})) ==
        "[[ 1.0000,  2.5000,  3.0000],\n [ 4.0000,  5.0000, -6.0000]]\n[float32 (2, 3) cpu]");
  CHECK(str(from_vector(std::vector<double>{1, 2, 3})) == "[1., 2., 3.]\n[float64 (3,) cpu]");
  CHECK(str(from_vector(std::vector<double>{1e-5, 2, 3})) == "[1.0000e-05, 2.0000e+00, 3.0000e+00]\n[float64 (3,) cpu]");
  CHECK(str(zeros({2}, float64)) == "[0., 0.]\n[float64 (2,) cpu]");
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(str(from_vector(std::vector<double>{1, nan, -inf})) == "[1., nan, -inf]\n[float64 (3,) cpu]");
  CHECK(str(from_vector(std::vector<double>{0.001234, 123.5, nan, -0.5}, Shape{2, 2})) ==
        "[[ 1.2340e-03,  1.2350e+02],\n [        nan, -5.0000e-01]]\n[float64 (2, 2) cpu]");
  CHECK(str(from_vector(std::vector<double>{1e9, 1})) == "[1.0000e+09, 1.0000e+00]\n[float64 (2,) cpu]");
  CHECK(str(from_vector(std::vector<double>{1, 1e5})) == "[1.0000e+00, 1.0000e+05]\n[float64 (2,) cpu]");
  CHECK(str(from_vector(std::vector<double>{-0.0, 1.5})) == "[-0.0000, 1.5000]\n[float64 (2,) cpu]");
  CHECK(str(arange(0, 4).to(float32).reshape({4, 1}) / 3.0) == "[[0.0000],\n [0.3333],\n [0.6667],\n [1.0000]]\n[float32 (4, 1) cpu]");
  CHECK(str(scalar_tensor(3.5)) == "3.5000\n[float32 () cpu]");
  CHECK(str(scalar_tensor(-2.0, float64)) == "-2.\n[float64 () cpu]");
}

TEST_CASE("print: integers, bools, complex, empty") {
  CHECK(str(from_vector(std::vector<std::int64_t>{1, -20, 300})) == "[  1, -20, 300]\n[int64 (3,) cpu]");
  const std::int64_t big = (std::int64_t{1} << 62) + 1;
  CHECK(str(from_vector(std::vector<std::int64_t>{big, -5})) == "[4611686018427387905,                  -5]\n[int64 (2,) cpu]");
  CHECK(str(from_vector(std::vector<bool>{true, false})) == "[ True, False]\n[bool (2,) cpu]");
  CHECK(str(scalar_tensor(true)) == "True\n[bool () cpu]");
  CHECK(str(from_vector(std::vector<std::complex<double>>{{1, 2}, {-3.5, -4}})) ==
        "[ 1.0000+2.j, -3.5000-4.j]\n[complex128 (2,) cpu]");
  CHECK(str(from_vector(std::vector<std::complex<float>>{{1, 0}, {-2.25f, 1e-3f}, {0, -1}, {3.5f, 2}}, Shape{2, 2})) ==
        "[[ 1.0000+0.0000e+00j, -2.2500+1.0000e-03j],\n [ 0.0000-1.0000e+00j,  3.5000+2.0000e+00j]]\n[complex64 (2, 2) cpu]");
  CHECK(str(zeros({2, 0})) == "[]\n[float32 (2, 0) cpu]");
  CHECK(str(Tensor()) == "[undefined tensor]");
  // non-contiguous views print their logical order
  CHECK(str(arange(0, 6).reshape({2, 3}).t()) == "[[0, 3],\n [1, 4],\n [2, 5]]\n[int64 (3, 2) cpu]");
}

TEST_CASE("print: nesting, wrapping and summarization") {
  CHECK(str(arange(0, 24).reshape({2, 3, 4})) ==
        "[[[ 0,  1,  2,  3],\n  [ 4,  5,  6,  7],\n  [ 8,  9, 10, 11]],\n\n [[12, 13, 14, 15],\n  [16, 17, 18, 19],\n  [20, 21, 22, 23]]]\n[int64 (2, 3, 4) cpu]");
  CHECK(str(arange(0.0, 50.0, 1.0)) ==
        "[ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13., 14., 15.,\n"
        " 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27., 28., 29., 30., 31.,\n"
        " 32., 33., 34., 35., 36., 37., 38., 39., 40., 41., 42., 43., 44., 45., 46., 47.,\n"
        " 48., 49.]\n[float32 (50,) cpu]");
  CHECK(str(arange(0, 1001).to(float32)) == "[   0.,    1.,    2.,  ...,  998.,  999., 1000.]\n[float32 (1001,) cpu]");
  CHECK(str(arange(0, 2000).reshape({2, 1000})) ==
        "[[   0,    1,    2,  ...,  997,  998,  999],\n [1000, 1001, 1002,  ..., 1997, 1998, 1999]]\n[int64 (2, 1000) cpu]");
  // 1000 elements exactly: not summarized
  std::string full = str(arange(0, 1000));
  CHECK(full.find("...") == std::string::npos);
  const std::string cube =
      "[[[   0,    1,    2,  ...,    8,    9,   10],\n"
      "  [  11,   12,   13,  ...,   19,   20,   21],\n"
      "  [  22,   23,   24,  ...,   30,   31,   32],\n"
      "  ...,\n"
      "  [  88,   89,   90,  ...,   96,   97,   98],\n"
      "  [  99,  100,  101,  ...,  107,  108,  109],\n"
      "  [ 110,  111,  112,  ...,  118,  119,  120]],\n"
      "\n"
      " [[ 121,  122,  123,  ...,  129,  130,  131],\n"
      "  [ 132,  133,  134,  ...,  140,  141,  142],\n"
      "  [ 143,  144,  145,  ...,  151,  152,  153],\n"
      "  ...,\n"
      "  [ 209,  210,  211,  ...,  217,  218,  219],\n"
      "  [ 220,  221,  222,  ...,  228,  229,  230],\n"
      "  [ 231,  232,  233,  ...,  239,  240,  241]],\n"
      "\n"
      " [[ 242,  243,  244,  ...,  250,  251,  252],\n"
      "  [ 253,  254,  255,  ...,  261,  262,  263],\n"
      "  [ 264,  265,  266,  ...,  272,  273,  274],\n"
      "  ...,\n"
      "  [ 330,  331,  332,  ...,  338,  339,  340],\n"
      "  [ 341,  342,  343,  ...,  349,  350,  351],\n"
      "  [ 352,  353,  354,  ...,  360,  361,  362]],\n"
      "\n"
      " ...,\n"
      "\n"
      " [[ 968,  969,  970,  ...,  976,  977,  978],\n"
      "  [ 979,  980,  981,  ...,  987,  988,  989],\n"
      "  [ 990,  991,  992,  ...,  998,  999, 1000],\n"
      "  ...,\n"
      "  [1056, 1057, 1058,  ..., 1064, 1065, 1066],\n"
      "  [1067, 1068, 1069,  ..., 1075, 1076, 1077],\n"
      "  [1078, 1079, 1080,  ..., 1086, 1087, 1088]],\n"
      "\n"
      " [[1089, 1090, 1091,  ..., 1097, 1098, 1099],\n"
      "  [1100, 1101, 1102,  ..., 1108, 1109, 1110],\n"
      "  [1111, 1112, 1113,  ..., 1119, 1120, 1121],\n"
      "  ...,\n"
      "  [1177, 1178, 1179,  ..., 1185, 1186, 1187],\n"
      "  [1188, 1189, 1190,  ..., 1196, 1197, 1198],\n"
      "  [1199, 1200, 1201,  ..., 1207, 1208, 1209]],\n"
      "\n"
      " [[1210, 1211, 1212,  ..., 1218, 1219, 1220],\n"
      "  [1221, 1222, 1223,  ..., 1229, 1230, 1231],\n"
      "  [1232, 1233, 1234,  ..., 1240, 1241, 1242],\n"
      "  ...,\n"
      "  [1298, 1299, 1300,  ..., 1306, 1307, 1308],\n"
      "  [1309, 1310, 1311,  ..., 1317, 1318, 1319],\n"
      "  [1320, 1321, 1322,  ..., 1328, 1329, 1330]]]";
  CHECK(str(arange(0, 11 * 11 * 11).reshape({11, 11, 11})) == cube + "\n[int64 (11, 11, 11) cpu]");
}

TEST_CASE("print: autograd state") {
  Tensor x = from_vector(std::vector<double>{1, 2}).requires_grad_();
  CHECK(str(x) == "[1., 2.]\n[float64 (2,) cpu, requires_grad=True]");
  Tensor y = x * x;
  CHECK(str(y) == "[1., 4.]\n[float64 (2,) cpu, grad_fn=<mulBackward>]");
  CHECK(str(y.detach()) == "[1., 4.]\n[float64 (2,) cpu]");
}
