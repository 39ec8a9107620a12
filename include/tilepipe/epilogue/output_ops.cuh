#pragma once
//! \file
//! Output operators: what a GEMM's epilogue does to each element of `alpha * A * B + beta * C`
//! before it is converted to D's type. The provided GEMMs take one as a template argument
//! (`GemmMultistage<..., Stages, OutputOp>`), and its members travel to the kernel in
//! `Arguments::output_op`.
//!
//! An output operator is a trivially copyable struct with a device call operator
//! \code
//! __device__ float operator()(float v, int row, int col) const;  // v: alpha * acc + beta * C
//! \endcode
//! where `row` and `col` are the element's position in D (each batch's D counts from (0, 0), so a
//! bias is shared by the batches). It may also have a host member
//! `tilepipe::Status check(int m, int n) const`, which `can_implement` calls to refuse bad
//! arguments (a null bias, say) with a message naming them.
//!
//! An operator that chooses at run time what it does (a bias that may be absent, an activation
//! the caller names) pays for the choice at every element: a branch, and loads that cannot move
//! ahead of it, in the loop the tensor cores wait for. Such an operator may also have
//! \code
//! template <class F> __device__ void dispatch(F&& f) const;  // calls f(op) once
//! \endcode
//! calling `f` with an operator that makes no choice (a type per choice, e.g. bias + ReLU); the
//! Hopper tier's staged epilogue then runs its loop once per choice, chosen once per tile
//! (`visit_output_op`). Its `operator()` must compute the same values: the other paths (the
//! Ampere tier, stores from the registers) call it per element. Built in:
//!
//! | operator | D = |
//! | --- | --- |
//! | `Identity` (default) | v |
//! | `BiasPerRow<T>` / `BiasPerCol<T>` | v + bias[row] / v + bias[col] |
//! | `ScalePerRow<T>` / `ScalePerCol<T>` | v * scale[row] / v * scale[col] |
//! | `Relu`, `Silu`, `GeluTanh`, `GeluErf` | the activation of v |
//! | `Clamp` | min(max(v, lo), hi) |
//! | `Chain<Op1, Op2, ...>` | ... Op2(Op1(v)), applied left to right |
//!
//! \code
//! // D = relu(alpha * A * B + bias[col]), bias in f32
//! using Op = tilepipe::Chain<tilepipe::BiasPerCol<float>, tilepipe::Relu>;
//! using Gemm = tilepipe::GemmMultistage<__half, __half, tilepipe::Layout::kRowMajor,
//!                                       tilepipe::Layout::kColumnMajor, 4, Op>;
//! Gemm::Arguments args;  // m, n, k, a, b, d, ...
//! args.output_op.get<0>().bias = d_bias;
//! \endcode

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "../detail/macros.cuh"
#include "../status.cuh"
#include "../numeric/element_traits.cuh"

namespace tilepipe {

//! D = v.
struct Identity {
  TILEPIPE_DEVICE float operator()(float v, int, int) const { return v; }
};

namespace detail {

//! Which of D's coordinates indexes a per-row or per-column vector.
enum class VectorAxis { kRow, kCol };

//! A vector of one value per row (or column) of D, and the checks `can_implement` makes of it.
template <class T, VectorAxis Axis>
struct PerAxisVector {
  static_assert(is_supported_element_v<T>,
                "bias and scale vectors must be float, __half or __nv_bfloat16");
  const T* data = nullptr;

  TILEPIPE_DEVICE float at(int row, int col) const {
    return to_float(data[Axis == VectorAxis::kRow ? row : col]);
  }
  //! `name` is the member's name for messages ("bias", "scale").
  Status check(const char* op, const char* name, int m, int n) const {
    const std::string what =
        std::string(op) + "::" + name + " (" + std::to_string(Axis == VectorAxis::kRow ? m : n) +
        " values, one per " + (Axis == VectorAxis::kRow ? "row" : "column") + " of D)";
    if (data == nullptr) return invalid(what + " is a null pointer");
    if (reinterpret_cast<std::uintptr_t>(data) % sizeof(T) != 0)
      return invalid(what + " is not aligned to its element size (" + std::to_string(sizeof(T)) +
                     " bytes)");
    return Status::success();
  }
  static Status invalid(const std::string& msg) {
    return Status::error(Status::Code::kInvalidArgument, "output_op: " + msg);
  }
};

}  // namespace detail

//! D = v + bias[row]: one value per row of D (M values), shared by all batches.
template <class T = float>
struct BiasPerRow {
  const T* bias = nullptr;  //!< M values
  TILEPIPE_DEVICE float operator()(float v, int row, int col) const {
    return v + vector().at(row, col);
  }
  Status check(int m, int n) const { return vector().check("BiasPerRow", "bias", m, n); }

 private:
  TILEPIPE_HOST_DEVICE detail::PerAxisVector<T, detail::VectorAxis::kRow> vector() const {
    return {bias};
  }
};

//! D = v + bias[col]: one value per column of D (N values), shared by all batches.
template <class T = float>
struct BiasPerCol {
  const T* bias = nullptr;  //!< N values
  TILEPIPE_DEVICE float operator()(float v, int row, int col) const {
    return v + vector().at(row, col);
  }
  Status check(int m, int n) const { return vector().check("BiasPerCol", "bias", m, n); }

 private:
  TILEPIPE_HOST_DEVICE detail::PerAxisVector<T, detail::VectorAxis::kCol> vector() const {
    return {bias};
  }
};

//! D = v * scale[row]: one value per row of D (M values), shared by all batches.
template <class T = float>
struct ScalePerRow {
  const T* scale = nullptr;  //!< M values
  TILEPIPE_DEVICE float operator()(float v, int row, int col) const {
    return v * vector().at(row, col);
  }
  Status check(int m, int n) const { return vector().check("ScalePerRow", "scale", m, n); }

 private:
  TILEPIPE_HOST_DEVICE detail::PerAxisVector<T, detail::VectorAxis::kRow> vector() const {
    return {scale};
  }
};

//! D = v * scale[col]: one value per column of D (N values), shared by all batches.
template <class T = float>
struct ScalePerCol {
  const T* scale = nullptr;  //!< N values
  TILEPIPE_DEVICE float operator()(float v, int row, int col) const {
    return v * vector().at(row, col);
  }
  Status check(int m, int n) const { return vector().check("ScalePerCol", "scale", m, n); }

 private:
  TILEPIPE_HOST_DEVICE detail::PerAxisVector<T, detail::VectorAxis::kCol> vector() const {
    return {scale};
  }
};

//! D = max(v, 0).
struct Relu {
  TILEPIPE_DEVICE float operator()(float v, int, int) const { return fmaxf(v, 0.0f); }
};

//! D = v * sigmoid(v) (SiLU, "swish").
struct Silu {
  TILEPIPE_DEVICE float operator()(float v, int, int) const { return v / (1.0f + expf(-v)); }
};

//! D = v * Phi(v), Phi the standard normal distribution function (the exact GELU).
struct GeluErf {
  TILEPIPE_DEVICE float operator()(float v, int, int) const {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
};

//! D = 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3))), the tanh approximation of GELU.
struct GeluTanh {
  TILEPIPE_DEVICE float operator()(float v, int, int) const {
    const float inner = 0.79788456080286536f * (v + 0.044715f * v * v * v);
    return 0.5f * v * (1.0f + tanhf(inner));
  }
};

//! D = min(max(v, lo), hi). `check` refuses lo > hi and NaN bounds.
struct Clamp {
  float lo = 0.0f;
  float hi = 0.0f;
  TILEPIPE_DEVICE float operator()(float v, int, int) const { return fminf(fmaxf(v, lo), hi); }
  Status check(int, int) const {
    if (!(lo <= hi))
      return Status::error(Status::Code::kInvalidArgument,
                           "output_op: Clamp::lo = " + std::to_string(lo) +
                               " must not exceed Clamp::hi = " + std::to_string(hi) +
                               " (nor be NaN)");
    return Status::success();
  }
};

namespace detail {
//! Whether output operator `Op` has a host `Status check(int m, int n) const`.
template <class Op, class = void>
struct HasCheck : std::false_type {};
template <class Op>
struct HasCheck<Op, std::void_t<decltype(std::declval<const Op&>().check(0, 0))>> : std::true_type {
};

//! Whether output operator `Op` has a `dispatch` that takes `f` (see the top of this file). The
//! test uses the very call `visit_output_op` makes (a probe of another type would instantiate a
//! `dispatch` that nothing calls, which nvcc warns about for operators of internal linkage).
template <class Op, class F, class = void>
struct HasDispatch : std::false_type {};
template <class Op, class F>
struct HasDispatch<Op, F,
                   std::void_t<decltype(std::declval<const Op&>().dispatch(std::declval<F&>()))>>
    : std::true_type {};
}  // namespace detail

//! `f(op.dispatch's operator)` where `Op` has a `dispatch`, else `f(op)`: the operator a loop
//! over a tile's elements should apply.
template <class Op, class F>
TILEPIPE_DEVICE void visit_output_op(const Op& op, F&& f) {
  if constexpr (detail::HasDispatch<Op, F>::value) op.dispatch(f);
  else f(op);
}

//! The checks of an output operator for an `m x n` D: its own `check` if it has one.
template <class Op>
Status check_output_op(const Op& op, int m, int n) {
  if constexpr (detail::HasCheck<Op>::value) return op.check(m, n);
  else return Status::success();
}

//! Output operators applied left to right: `Chain<A, B>` gives `B(A(v))`. `get<I>()` is the I-th.
template <class... Ops>
struct Chain;

template <class First>
struct Chain<First> {
  First first{};
  TILEPIPE_DEVICE float operator()(float v, int row, int col) const { return first(v, row, col); }
  Status check(int m, int n) const { return check_output_op(first, m, n); }
  template <int I>
  TILEPIPE_HOST_DEVICE auto& get() {
    static_assert(I == 0, "Chain::get<I>: I is past the last operator");
    return first;
  }
};

template <class First, class... Rest>
struct Chain<First, Rest...> {
  First first{};
  Chain<Rest...> rest{};
  TILEPIPE_DEVICE float operator()(float v, int row, int col) const {
    return rest(first(v, row, col), row, col);
  }
  Status check(int m, int n) const {
    const Status s = check_output_op(first, m, n);
    return s ? rest.check(m, n) : s;
  }
  template <int I>
  TILEPIPE_HOST_DEVICE auto& get() {
    if constexpr (I == 0) return first;
    else return rest.template get<I - 1>();
  }
};

}  // namespace tilepipe
