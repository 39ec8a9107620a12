// Compiled for sm_75 by the host.refuses_sm75 test, which expects the headers to refuse it.
#include <tilepipe/tilepipe.cuh>
