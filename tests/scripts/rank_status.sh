#!/usr/bin/env bash
# rank_status.sh DIR COMMAND...: runs COMMAND as one rank of an MPI job and records its exit
# status in DIR/rank-R (R from the launcher's environment), so that a test can check the status
# of every rank, not only the launcher's. A rank killed by a peer's MPI_Abort, or by the launcher
# after a peer's failure, records nothing.
dir=$1
shift
"$@"
status=$?
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-0}}}
# Written aside and renamed into place: the launcher may kill this rank once a peer has failed,
# and a kill between creating the file and writing it would leave an empty status behind.
mkdir -p "$dir" && echo "$status" >"$dir/.rank-$rank.partial" &&
  mv "$dir/.rank-$rank.partial" "$dir/rank-$rank"
exit "$status"
