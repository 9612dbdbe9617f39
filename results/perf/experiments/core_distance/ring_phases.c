#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static double med(double*v,int n){qsort(v,n,sizeof*v,cmp);return v[n/2]*1e6;}
int main(int c,char**v){MPI_Init(&c,&v);int r,p;MPI_Comm_rank(MPI_COMM_WORLD,&r);MPI_Comm_size(MPI_COMM_WORLD,&p);
 MPI_Win w; _Atomic long *flag; MPI_Win_allocate_shared(r==0?4096:0,1,MPI_INFO_NULL,MPI_COMM_WORLD,&flag,&w);
 MPI_Aint sz; int du; MPI_Win_shared_query(w,0,&sz,&du,&flag); if(r==0) atomic_store(flag,0); MPI_Barrier(MPI_COMM_WORLD);
 int N=100000; double t0=MPI_Wtime();
 for(long i=0;i<N;i++){ if(r==0){atomic_store(flag,2*i+1); while(atomic_load(flag)!=2*i+2);} else if(r==1){while(atomic_load(flag)!=2*i+1); atomic_store(flag,2*i+2);} }
 double lat=(MPI_Wtime()-t0)/N/2*1e9;
 size_t n=1<<20, h=n/2, cnt=h/4; int o=1-r;
 float*in=aligned_alloc(4096,n),*out=aligned_alloc(4096,n),*tmp=aligned_alloc(4096,h);
 for(size_t i=0;i<n/4;i++) in[i]=r; memset(out,0,n); memset(tmp,0,h);
 enum{R=400}; static double A[R],B[R],C[R],T[R],L[R];
 for(int i=0;i<R;i++){MPI_Barrier(MPI_COMM_WORLD);
  double t=MPI_Wtime();
  MPI_Sendrecv((char*)in+o*h,h,MPI_BYTE,o,0,tmp,h,MPI_BYTE,o,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);
  double ta=MPI_Wtime();
  float*dst=(float*)((char*)out+r*h),*src=(float*)((char*)in+r*h);
  for(size_t k=0;k<cnt;k++) dst[k]=src[k]+tmp[k];
  double tb=MPI_Wtime();
  MPI_Sendrecv(dst,h,MPI_BYTE,o,1,(char*)out+o*h,h,MPI_BYTE,o,1,MPI_COMM_WORLD,MPI_STATUS_IGNORE);
  double tc=MPI_Wtime();
  A[i]=ta-t;B[i]=tb-ta;C[i]=tc-tb;T[i]=tc-t;
 }
 for(int i=0;i<R;i++){double t=MPI_Wtime();float*dst=(float*)out,*src=(float*)in; for(size_t k=0;k<cnt;k++) dst[k]=src[k]+tmp[k]; L[i]=MPI_Wtime()-t;}
 double m[5]={med(A,R),med(B,R),med(C,R),med(T,R),med(L,R)};
 double all[2][5]; MPI_Gather(m,5,MPI_DOUBLE,all,5,MPI_DOUBLE,0,MPI_COMM_WORLD);
 if(r==0)for(int k=0;k<2;k++)printf("c2c %.0f rank%d: A static-sr %.1f  B reduce %.1f  C fresh-sr %.1f  total %.1f  | local reduce %.1f us\n",lat,k,all[k][0],all[k][1],all[k][2],all[k][3],all[k][4]);
 MPI_Win_free(&w);MPI_Finalize();}
