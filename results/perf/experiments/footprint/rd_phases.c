// Where a 2-rank recursive_doubling allreduce (one exchange of the whole
// vector, then out = in + received) spends its time at 1..64 MiB, against
// the two benchmarks its bottom-up model is priced with, run on the same
// buffers in the same job, in blocks of calls:
//   allreduce   exchange in -> received, then out = in + received; each
//               phase timed
//   sendrecv    the exchange alone, repeated on unchanging buffers (what
//               collbench's p2p/sendrecv measures)
//   reduce      out = in + received alone (what local/reduce measures,
//               with dst = a + b rather than dst += src)
//   sendrecv+touch  the exchange, then (untimed) a write of every line of out:
//               the exchange sees the cache the allreduce leaves behind
// Prints the cache-line handoff latency between the ranks before and after,
// then per size the median of each phase over the blocks' calls (rank 0).
// Build: mpicc -O2 -mavx2 rd_phases.c -o rd_phases
#include <immintrin.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../two_ranks.h"

enum { kBlocks = 3, kCallsPerBlock = 15, kCalls = kBlocks * kCallsPerBlock };

static void reduce_into(float* dst, const float* a, const float* b, size_t count) {
  for (size_t k = 0; k < count; k += 8)
    _mm256_store_ps(dst + k, _mm256_add_ps(_mm256_load_ps(a + k), _mm256_load_ps(b + k)));
}

int main(int argc, char** argv) {
  int rank = init_two_ranks(&argc, &argv);
  MPI_Win window;
  _Atomic long* flag = shared_flag(rank, &window);
  double before = handoff_ns(flag, rank);
  if (rank == 0)
    printf("%-8s %12s %12s | %12s %12s %14s\n", "MiB", "ar_exchange", "ar_reduce", "sendrecv",
           "reduce", "sendrecv+touch");
  int peer = 1 - rank;
  for (int arg = 1; arg < argc; arg++) {
    size_t bytes = strtoull(argv[arg], 0, 0) << 20, count = bytes / 4;
    float* in = aligned_alloc(4096, bytes);
    float* out = aligned_alloc(4096, bytes);
    float* received = aligned_alloc(4096, bytes);
    for (size_t i = 0; i < count; i++) in[i] = (float)rank;
    memset(out, 0, bytes);
    memset(received, 0, bytes);
    static double ar_x[kCalls], ar_r[kCalls], sr[kCalls], red[kCalls], touch[kCalls];
    for (int block = 0; block < kBlocks; block++) {
      int base = block * kCallsPerBlock;
      for (int c = 0; c < kCallsPerBlock; c++) {
        ar_x[base + c] = exchange(in, received, bytes, peer);
        double t = MPI_Wtime();
        reduce_into(out, in, received, count);
        ar_r[base + c] = MPI_Wtime() - t;
      }
      for (int c = 0; c < kCallsPerBlock; c++) sr[base + c] = exchange(in, received, bytes, peer);
      for (int c = 0; c < kCallsPerBlock; c++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        reduce_into(out, in, received, count);
        red[base + c] = MPI_Wtime() - t;
      }
      for (int c = 0; c < kCallsPerBlock; c++) {
        touch[base + c] = exchange(in, received, bytes, peer);
        for (size_t i = 0; i < count; i += 16) out[i] += 0.0f;
      }
    }
    double m[5] = {median_us(ar_x, kCalls), median_us(ar_r, kCalls), median_us(sr, kCalls),
                   median_us(red, kCalls), median_us(touch, kCalls)};
    if (rank == 0)
      printf("%-8zu %12.1f %12.1f | %12.1f %12.1f %14.1f\n", bytes >> 20, m[0], m[1], m[2], m[3],
             m[4]);
    fflush(stdout);
    free(in);
    free(out);
    free(received);
  }
  double after = handoff_ns(flag, rank);
  if (rank == 0) printf("handoff_ns before %.0f after %.0f\n", before, after);
  MPI_Win_free(&window);
  MPI_Finalize();
  return 0;
}
