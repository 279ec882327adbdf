# SPDX-License-Identifier: BSD-3-Clause
"""mpi4py program (libmpi opened with dlopen by Python): ring of sends,
a reduction and a barrier; rank 0 prints the results."""
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
right, left = (rank + 1) % size, (rank - 1) % size
got = comm.sendrecv(rank * 10, dest=right, sendtag=7, source=left, recvtag=7)
total = array("i", [0])
comm.Allreduce([array("i", [got]), MPI.INT], [total, MPI.INT], op=MPI.SUM)
total = total[0]
comm.Barrier()
if rank == 0:
    print("size", size)
    print("sum", total)
