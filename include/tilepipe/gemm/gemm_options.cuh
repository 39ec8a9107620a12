#pragma once
//! \file
//! GemmOptions: which kernels a GEMM compiles in besides its 16-byte data-parallel one. Each
//! extra kernel is another mainloop instantiation, so it costs compile time, and is asked for by
//! name rather than by a positional bool.
//!
//! \code
//! using Gemm = tilepipe::GemmTiered<__half, __half, tilepipe::Layout::kRowMajor,
//!                                   tilepipe::Layout::kColumnMajor, 4, tilepipe::Identity,
//!                                   tilepipe::DefaultTileConfig<4>,
//!                                   tilepipe::GemmOptions<tilepipe::WithSplitK>>;
//! \endcode

#include <type_traits>

namespace tilepipe {

//! Split-K: `args.split_k > 1` runs the slices' partial products into the workspace, then their
//! sum in a fixed order (split_k.cuh).
struct WithSplitK {};
//! Stream-K: `args.stream_k > 0` runs one persistent kernel that shares the k-tiles of the
//! output tiles evenly over its blocks (stream_k.cuh).
struct WithStreamK {};
//! No narrow kernel: arguments whose pointers, leading dimensions or batch strides are not
//! multiples of 16 bytes are refused (naming the first one) instead of run by a kernel that
//! copies with narrower `cp.async`.
struct AlignedOnly {};

//! A set of the options above, in any order; `GemmOptions<>` is the 16-byte kernel plus the
//! narrow one.
template <class... Options>
struct GemmOptions {
  static_assert((true && ... &&
                 (std::is_same_v<Options, WithSplitK> || std::is_same_v<Options, WithStreamK> ||
                  std::is_same_v<Options, AlignedOnly>)),
                "GemmOptions: each option must be WithSplitK, WithStreamK or AlignedOnly");
  static constexpr bool kSplitK = (false || ... || std::is_same_v<Options, WithSplitK>);
  static constexpr bool kStreamK = (false || ... || std::is_same_v<Options, WithStreamK>);
  static constexpr bool kAnyAlignment = !(false || ... || std::is_same_v<Options, AlignedOnly>);
};

namespace detail {
template <class... A, class... B>
GemmOptions<A..., B...> join_options(GemmOptions<A...>, GemmOptions<B...>);  // (unevaluated)
template <bool kOn, class Option>
using OptionIf = std::conditional_t<kOn, GemmOptions<Option>, GemmOptions<>>;

//! The GemmOptions of GemmMultistage's bools, in the order WithSplitK, AlignedOnly, WithStreamK.
template <bool SplitK, bool AnyAlignment, bool StreamK>
using GemmOptionsOf = decltype(join_options(
    join_options(OptionIf<SplitK, WithSplitK>{}, OptionIf<!AnyAlignment, AlignedOnly>{}),
    OptionIf<StreamK, WithStreamK>{}));
}  // namespace detail

}  // namespace tilepipe
