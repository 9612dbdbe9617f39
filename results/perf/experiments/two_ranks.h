// Shared by the two-rank experiment programs (footprint/rd_phases.c,
// prefetch_for_write/ring_store_variants.c, fresh_data/fresh_sendrecv.c):
// start-up, a timed exchange, the median of a sample, and the one-way
// latency of handing one cache line between ranks 0 and 1 through an MPI
// shared-memory window, which says whether the host ran the two vCPUs near
// (tens of ns) or far (hundreds).
#pragma once

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

enum { kHandoffs = 50000 };

// MPI_Init; a job of other than 2 ranks is aborted. Returns this rank.
static inline int init_two_ranks(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks != 2) {
    if (rank == 0) fprintf(stderr, "run with exactly 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return rank;
}

// One MPI_Sendrecv of `bytes` with `peer`, timed alone after a barrier; s.
static inline double exchange(const void* send, void* receive, size_t bytes, int peer) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  MPI_Sendrecv(send, (int)bytes, MPI_BYTE, peer, 0, receive, (int)bytes, MPI_BYTE, peer, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return MPI_Wtime() - t;
}

static inline int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

// Median of v[0..n) seconds, in µs (sorts v).
static inline double median_us(double* v, int n) {
  qsort(v, n, sizeof *v, compare);
  return v[n / 2] * 1e6;
}

// Collective over MPI_COMM_WORLD: one flag in a window of rank 0's memory,
// mapped by both ranks; free the window with MPI_Win_free.
static inline _Atomic long* shared_flag(int rank, MPI_Win* window) {
  _Atomic long* flag;
  MPI_Win_allocate_shared(rank == 0 ? 4096 : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &flag, window);
  MPI_Aint size;
  int unit;
  MPI_Win_shared_query(*window, 0, &size, &unit, &flag);
  return flag;
}

// One-way handoff latency of the flag's line between ranks 0 and 1, in ns.
static inline double handoff_ns(_Atomic long* flag, int rank) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) atomic_store(flag, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long i = 0; i < kHandoffs; i++) {
    if (rank == 0) {
      atomic_store(flag, 2 * i + 1);
      while (atomic_load(flag) != 2 * i + 2) {
      }
    } else {
      while (atomic_load(flag) != 2 * i + 1) {
      }
      atomic_store(flag, 2 * i + 2);
    }
  }
  return (MPI_Wtime() - t0) / kHandoffs / 2 * 1e9;
}
