#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static _Atomic int flag __attribute__((aligned(64)));
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
#define N 200000
#define BUF (1<<20)
static float *buf; static _Atomic int turn;
void* pong(void*a){pin(1);for(int i=0;i<N;i++){while(atomic_load(&flag)!=2*i+1);atomic_store(&flag,2*i+2);}
 // bandwidth: consumer reads buffer written by producer
 for(int r=0;r<200;r++){while(atomic_load(&turn)!=2*r+1); float s=0; volatile float sink; for(int i=0;i<BUF/4;i++) s+=buf[i]; sink=s; (void)sink; for(int i=0;i<BUF/4;i++) buf[i]+=1.0f; atomic_store(&turn,2*r+2);}
 return 0;}
int main(){pin(0);buf=aligned_alloc(4096,BUF);memset(buf,0,BUF);pthread_t t;pthread_create(&t,0,pong,0);
 double t0=now();for(int i=0;i<N;i++){atomic_store(&flag,2*i+1);while(atomic_load(&flag)!=2*i+2);}double lat=(now()-t0)/N/2*1e9;
 double t1=now();for(int r=0;r<200;r++){for(int i=0;i<BUF/4;i++) buf[i]+=1.0f; atomic_store(&turn,2*r+1); while(atomic_load(&turn)!=2*r+2);} double bw=(now()-t1)/200*1e6;
 pthread_join(t,0);printf("one-way %.1f ns  handoff-1MiB-roundtrip %.1f us\n",lat,bw);return 0;}
