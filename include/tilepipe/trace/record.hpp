#pragma once
//! \file
//! What a pipeline trace records (trace.cuh writes it on the GPU, render.hpp draws it on the host).

#include <cstdint>

namespace tilepipe::trace {

//! What happened to a k-tile in one warp.
enum class Event : std::uint32_t {
  kLoadIssued = 0,  //!< the warp issued (its share of) the k-tile's copies into the ring
  kWaitDone = 1,    //!< the wait for the k-tile's data returned: the warp may compute on it
  kMmaDone = 2,     //!< the warp's MMAs on the k-tile ended (were issued, for mma.sync)
};

//! One event of one warp, written by its lane 0 (24 bytes).
struct Record {
  std::uint64_t time_ns;  //!< %globaltimer
  std::uint32_t block;    //!< linear block index
  std::uint32_t warp;     //!< warp index within the block
  std::uint32_t k_tile;   //!< the k-tile, counted from 0 over the block's whole run (its ring slot
                          //!< is k_tile % Stages)
  std::uint32_t event;    //!< an Event
};

}  // namespace tilepipe::trace
