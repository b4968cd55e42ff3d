#pragma once
// Open MPI's default collective I/O component (fcoll/vulcan) writes wrong data for some
// non-contiguous file views: ranks whose views interleave at a fine grain, as a checkpoint's
// global tensors do (a sharded optimizer state left 36 elements unwritten in our tests; Open MPI
// issue #12718, fixed upstream in August 2024; Debian 12 ships 4.1.4). The other components
// (dynamic_gen2, the default of earlier releases) and ROMIO write the same views correctly.
//
// Called before MPI_Init: under Open MPI, unless the user chose a component
// (OMPI_MCA_fcoll or OMPI_MCA_io set), it excludes vulcan for this process.
namespace meshslice {

void avoid_broken_mpi_io();

}  // namespace meshslice
