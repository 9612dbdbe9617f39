# As run at 12:00 UTC from /tmp/c2c, alone on the machine: c2c is c2c.c here
# (gcc -O2 -march=x86-64-v3 -pthread c2c.c -o c2c; collbench-core-latency
# now measures the same), collbench was build-lead at f469734.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
for i in $(seq 1 40); do
a=$(./c2c | awk '{print $2}')
mpirun -np 2 --bind-to core --oversubscribe --mca btl self,vader /work/main/build-lead/benchmarks/harness/collbench --families allreduce,sendrecv --algorithms ring,mpi --sizes 1MiB --csv /tmp/c2c/k$i.csv --quiet --benchmark_repetitions=3 --benchmark_min_time=0.1 >/dev/null 2>&1
b=$(./c2c | awk '{print $2}')
echo "$(date +%T) job $i c2c $a $b $(awk -F, 'NR>1{print $1"="$24}' k$i.csv | sort | awk -F= '{split($1,p,"/"); a[p[2]]=a[p[2]]" "int($2)} END{for(k in a) printf "%s:%s  ", k, a[k]}')"
done
