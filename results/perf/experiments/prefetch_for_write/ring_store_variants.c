// A 2-rank ring allreduce of 1 MiB f32 (the data flow of collbench's ring at
// p=2), whose reduction `out[mine] = in[mine] + received` is written three
// ways, rotated call by call in one job so that all three see the same
// core distance:
//   plain     AVX2 loads/adds/stores (what collbench's kernel compiles to);
//   prefetchw the same, plus PREFETCHW of the destination DIST bytes ahead,
//             asking for ownership of lines the peer read in the previous
//             call before the store needs them;
//   stream    non-temporal stores (no read for ownership, written to memory).
// Prints the cache-line handoff latency between the two ranks (before and
// after) and, per variant, the median reduction time and call time.
// Build: mpicc -O2 -mavx2 -mprfchw ring_store_variants.c -o ring_store_variants
#include <immintrin.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../two_ranks.h"

enum { kVariants = 3, kCallsPerVariant = 300 };
static const char* kNames[kVariants] = {"plain", "prefetchw", "stream"};

static void reduce(int variant, float* dst, const float* a, const float* b, size_t count,
                   size_t prefetch_distance) {
  for (size_t k = 0; k < count; k += 8) {
    __m256 sum = _mm256_add_ps(_mm256_load_ps(a + k), _mm256_load_ps(b + k));
    if (variant == 1) {
      if ((k & 15) == 0 && k * 4 + prefetch_distance < count * 4)
        _mm_prefetch((const char*)(dst + k) + prefetch_distance, _MM_HINT_ET0);
      _mm256_store_ps(dst + k, sum);
    } else if (variant == 2) {
      _mm256_stream_ps(dst + k, sum);
    } else {
      _mm256_store_ps(dst + k, sum);
    }
  }
  if (variant == 2) _mm_sfence();
}

int main(int argc, char** argv) {
  int rank = init_two_ranks(&argc, &argv);
  size_t bytes = argc > 1 ? strtoull(argv[1], 0, 0) : (1u << 20);
  size_t prefetch_distance = argc > 2 ? strtoull(argv[2], 0, 0) : 1024;
  MPI_Win window;
  _Atomic long* flag = shared_flag(rank, &window);
  double before = handoff_ns(flag, rank);

  size_t half = bytes / 2, count = half / 4;
  int peer = 1 - rank;
  float* in = aligned_alloc(4096, bytes);
  float* out = aligned_alloc(4096, bytes);
  float* received = aligned_alloc(4096, half);
  for (size_t i = 0; i < bytes / 4; i++) in[i] = (float)rank;
  memset(out, 0, bytes);
  memset(received, 0, half);
  static double reduce_time[kVariants][kCallsPerVariant], call_time[kVariants][kCallsPerVariant];
  for (int call = 0; call < kVariants * kCallsPerVariant; call++) {
    int variant = call % kVariants;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Sendrecv((char*)in + peer * half, half, MPI_BYTE, peer, 0, received, half, MPI_BYTE,
                 peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    float* mine = (float*)((char*)out + rank * half);
    double t1 = MPI_Wtime();
    reduce(variant, mine, (float*)((char*)in + rank * half), received, count,
           prefetch_distance);
    double t2 = MPI_Wtime();
    MPI_Sendrecv(mine, half, MPI_BYTE, peer, 1, (char*)out + peer * half, half, MPI_BYTE, peer,
                 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double t3 = MPI_Wtime();
    reduce_time[variant][call / kVariants] = t2 - t1;
    call_time[variant][call / kVariants] = t3 - t0;
  }
  for (size_t i = 0; i < bytes / 4; i++)
    if (out[i] != 1.0f) {
      fprintf(stderr, "rank %d: out[%zu] = %g, expected 1\n", rank, i, out[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  double after = handoff_ns(flag, rank);
  double medians[2 * kVariants];
  for (int v = 0; v < kVariants; v++) {
    medians[2 * v] = median_us(reduce_time[v], kCallsPerVariant);
    medians[2 * v + 1] = median_us(call_time[v], kCallsPerVariant);
  }
  double all[2][2 * kVariants];
  MPI_Gather(medians, 2 * kVariants, MPI_DOUBLE, all, 2 * kVariants, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  if (rank == 0) {
    printf("bytes %zu prefetch %zu handoff_ns before %.0f after %.0f |", bytes, prefetch_distance,
           before, after);
    for (int v = 0; v < kVariants; v++)
      printf(" %s reduce %.1f/%.1f call %.1f/%.1f |", kNames[v], all[0][2 * v], all[1][2 * v],
             all[0][2 * v + 1], all[1][2 * v + 1]);
    printf("\n");
  }
  MPI_Win_free(&window);
  MPI_Finalize();
  return 0;
}
