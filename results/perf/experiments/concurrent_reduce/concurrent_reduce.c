// Does a reduction slow down when the other core reduces at the same time?
// dst += src over BYTES of floats, K calls, prints the median call time and
// the rate counting reads and writes (3 touches per element). run.sh runs
// one copy pinned to CPU 0 alone, then one on each CPU at once.
// Build: gcc -O3 -march=x86-64-v2 concurrent_reduce.c -o concurrent_reduce
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: concurrent_reduce BYTES CALLS\n");
    return 2;
  }
  size_t bytes = strtoull(argv[1], 0, 10), count = bytes / 4;
  int calls = atoi(argv[2]);
  float* dst = aligned_alloc(64, bytes);
  float* src = aligned_alloc(64, bytes);
  double* seconds = malloc(calls * sizeof *seconds);
  if (!dst || !src || !seconds || calls < 1) return 1;
  memset(dst, 0, bytes);
  memset(src, 0, bytes);
  for (int c = 0; c < calls; c++) {
    double start = now();
    for (size_t i = 0; i < count; i++) dst[i] += src[i];
    seconds[c] = now() - start;
  }
  qsort(seconds, calls, sizeof *seconds, compare);
  double median = seconds[calls / 2];
  printf("%zu %.1f us %.2f GB/s\n", bytes, median * 1e6, 3.0 * bytes / median / 1e9);
  return 0;
}
