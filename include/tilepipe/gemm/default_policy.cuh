#pragma once
//! \file
//! Kept so that code including it still compiles: the tile configurations, DefaultTileConfig
//! among them, are in tile_configs.cuh.

#include "tile_configs.cuh"
