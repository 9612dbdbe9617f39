#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static double med(double*v,int n){qsort(v,n,sizeof*v,cmp);return v[n/2];}
int main(int c,char**v){MPI_Init(&c,&v);int r,p;MPI_Comm_rank(MPI_COMM_WORLD,&r);MPI_Comm_size(MPI_COMM_WORLD,&p);
 MPI_Win w; _Atomic long *flag; MPI_Win_allocate_shared(r==0?4096:0,1,MPI_INFO_NULL,MPI_COMM_WORLD,&flag,&w);
 MPI_Aint sz; int du; MPI_Win_shared_query(w,0,&sz,&du,&flag); if(r==0) atomic_store(flag,0); MPI_Barrier(MPI_COMM_WORLD);
 int N=100000; double t0=MPI_Wtime();
 for(long i=0;i<N;i++){ if(r==0){atomic_store(flag,2*i+1); while(atomic_load(flag)!=2*i+2);} else if(r==1){while(atomic_load(flag)!=2*i+1); atomic_store(flag,2*i+2);} }
 double lat=(MPI_Wtime()-t0)/N/2*1e9;
 size_t n=512*1024; char*s=aligned_alloc(4096,n),*d=aligned_alloc(4096,n); memset(s,r,n); memset(d,0,n);
 int R=300; double ts[300],tf[300],ta[300]; int right=(r+1)%p,left=(r+p-1)%p;
 float*a=aligned_alloc(4096,2*n),*b=aligned_alloc(4096,2*n); memset(a,0,2*n);
 for(int k=0;k<3;k++){
 for(int i=0;i<R;i++){MPI_Barrier(MPI_COMM_WORLD);double t=MPI_Wtime();MPI_Sendrecv(s,n,MPI_BYTE,right,0,d,n,MPI_BYTE,left,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);ts[i]=MPI_Wtime()-t;}
 for(int i=0;i<R;i++){memset(s,r+i,n);MPI_Barrier(MPI_COMM_WORLD);double t=MPI_Wtime();MPI_Sendrecv(s,n,MPI_BYTE,right,0,d,n,MPI_BYTE,left,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);tf[i]=MPI_Wtime()-t;}
 for(int i=0;i<R;i++){MPI_Barrier(MPI_COMM_WORLD);double t=MPI_Wtime();MPI_Allreduce(a,b,2*n/4,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD);ta[i]=MPI_Wtime()-t;}
 }
 if(r==0)printf("c2c %.0f ns  sendrecv512K static %.1f us  fresh %.1f us  MPI_Allreduce 1MiB %.1f us\n",lat,med(ts,R)*1e6,med(tf,R)*1e6,med(ta,R)*1e6);
 MPI_Win_free(&w);MPI_Finalize();}
