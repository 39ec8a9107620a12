#pragma once
//! \file
//! Small constexpr integer helpers used by the layout headers.

#include "../detail/macros.cuh"

namespace tilepipe {

//! True when `x` is a positive power of two.
TILEPIPE_HOST_DEVICE constexpr bool is_power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

//! floor(log2(x)) for x >= 1.
TILEPIPE_HOST_DEVICE constexpr int log2_floor(int x) { return x <= 1 ? 0 : 1 + log2_floor(x / 2); }

//! ceil(a / b) for a >= 0, b > 0.
TILEPIPE_HOST_DEVICE constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace tilepipe
