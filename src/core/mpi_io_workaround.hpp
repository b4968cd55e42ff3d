#pragma once
// Open MPI's default collective I/O component (fcoll/vulcan) writes wrong data in Debian 12's
// Open MPI 4.1.4: a checkpoint written by interleaved file views left 36 elements of a sharded
// optimizer state unwritten, and one written by contiguous per-rank domains fails its CRC too
// (our tests, with OMPI_MCA_fcoll=vulcan; upstream reports of vulcan corruption:
// open-mpi/ompi#12718). The other components (dynamic_gen2, the default of earlier releases) and
// ROMIO write the same files correctly. The checkpoint files are now written with independent
// calls (checkpoint/tensor_file.hpp), which no fcoll component handles; the exclusion keeps any
// collective call off the broken one.
//
// Called before MPI_Init: under Open MPI, unless the user chose a component
// (OMPI_MCA_fcoll or OMPI_MCA_io set), it excludes vulcan for this process.
namespace meshslice {

void avoid_broken_mpi_io();

}  // namespace meshslice
