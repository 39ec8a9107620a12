#pragma once
// The operators' error messages (ops.cpp, scaled_mm_op.cpp): "tilepipe.<op>: " and the parts,
// built into one string here, integers by std::to_string, which TORCH_CHECK then gets whole.
// Letting TORCH_CHECK stream an integer (or a shape) into its message segfaulted the process on
// the GPU machine (torch 2.11: every bad-argument case whose message held a number crashed,
// those with only strings and devices raised as they should).

#include <ATen/ATen.h>

#include <cstddef>
#include <string>
#include <type_traits>

namespace tilepipe_torch {

inline std::string dtype_name(at::ScalarType t) { return "torch." + c10::getDtypeNames(t).first; }

inline std::string text(const char* s) { return s; }
inline std::string text(const std::string& s) { return s; }
inline std::string text(c10::string_view s) { return std::string(s); }
inline std::string text(const c10::Device& d) { return d.str(); }
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
std::string text(T v) {
  return std::to_string(v);
}
// "[64, 32]": a tensor's sizes.
inline std::string text(c10::IntArrayRef v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

//! `who` ("tilepipe.gemm: ") followed by the parts.
template <class... Parts>
std::string compose(const char* who, const Parts&... parts) {
  return (std::string(who) + ... + text(parts));
}

}  // namespace tilepipe_torch
