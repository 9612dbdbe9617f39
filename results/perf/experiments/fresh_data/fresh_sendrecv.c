// Does sending data the sender has just written cost more than sending an
// unchanging buffer (what collbench's p2p/sendrecv, the model's price per
// exchange, measures)? Two ranks exchange `bytes` with MPI_Sendrecv, timed
// alone after a barrier, in alternating blocks:
//   clean  the send buffer is the same, unwritten, every call
//   fresh  before the barrier (untimed) the sender rewrites every line of its
//          send buffer, as ring's allgather, the tree's broadcast and the
//          central server's pull send what a reduction has just written
//   swap   send and receive buffers trade places every call, so each
//          exchange writes the lines the peer read in the one before, as the
//          next allreduce call writes `out` (receive, reduce) after the peer
//          read it (allgather, broadcast, pull)
// Prints the cache-line handoff latency between the ranks before and after,
// then per size the median of each over the blocks' calls (rank 0).
// Build: mpicc -O2 fresh_sendrecv.c -o fresh_sendrecv
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../two_ranks.h"

enum { kBlocks = 5, kCallsPerBlock = 20, kCalls = kBlocks * kCallsPerBlock };

int main(int argc, char** argv) {
  int rank = init_two_ranks(&argc, &argv);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 fresh_sendrecv KIB...\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Win window;
  _Atomic long* flag = shared_flag(rank, &window);
  double before = handoff_ns(flag, rank);
  if (rank == 0) printf("%-8s %10s %10s %10s\n", "KiB", "clean_us", "fresh_us", "swap_us");
  int peer = 1 - rank;
  for (int arg = 1; arg < argc; arg++) {
    size_t bytes = strtoull(argv[arg], 0, 0) << 10, count = bytes / 4;
    float* send = aligned_alloc(4096, bytes);
    float* receive = aligned_alloc(4096, bytes);
    for (size_t i = 0; i < count; i++) send[i] = (float)rank;
    memset(receive, 0, bytes);
    static double clean[kCalls], fresh[kCalls], swap[kCalls];
    for (int block = 0; block < kBlocks; block++) {
      int base = block * kCallsPerBlock;
      for (int c = 0; c < kCallsPerBlock; c++) clean[base + c] = exchange(send, receive, bytes, peer);
      for (int c = 0; c < kCallsPerBlock; c++) {
        // One store per 64-byte line: every line of the send buffer is
        // modified in this core's cache when the exchange starts.
        for (size_t i = 0; i < count; i += 16) send[i] += 0.0f;
        fresh[base + c] = exchange(send, receive, bytes, peer);
      }
      for (int c = 0; c < kCallsPerBlock; c++) {
        // Receive into the buffer the peer read in the previous exchange.
        float* s = c % 2 ? receive : send;
        float* r = c % 2 ? send : receive;
        swap[base + c] = exchange(s, r, bytes, peer);
      }
    }
    double c = median_us(clean, kCalls), f = median_us(fresh, kCalls), w = median_us(swap, kCalls);
    if (rank == 0) printf("%-8zu %10.1f %10.1f %10.1f\n", bytes >> 10, c, f, w);
    fflush(stdout);
    free(send);
    free(receive);
  }
  double after = handoff_ns(flag, rank);
  if (rank == 0) printf("handoff ns: before %.1f after %.1f\n", before, after);
  MPI_Win_free(&window);
  MPI_Finalize();
  return 0;
}
