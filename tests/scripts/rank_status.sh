#!/usr/bin/env bash
# rank_status.sh DIR COMMAND...: runs COMMAND as one rank of an MPI job and records its exit
# status in DIR/rank-R (R from the launcher's environment), so that a test can check the status
# of every rank, not only the launcher's. A rank killed by a peer's MPI_Abort records nothing.
dir=$1
shift
"$@"
status=$?
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-0}}}
mkdir -p "$dir" && echo "$status" >"$dir/rank-$rank"
exit "$status"
