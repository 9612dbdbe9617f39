#!/usr/bin/python3
"""Per job of jobs/*.csv and size: recursive_doubling and ring at p=2 against
their bottom-up prices from the same job, each input at its own size:
  rd   = sendrecv(n) + reduce(n)
  ring = 2 sendrecv(n/2) + reduce(n/2)
(medians over the job's repetitions; sizes whose n/2 was not measured get
no ring ratio), with the job's core_handoff_ns range. Then, per size, the
spread of each ratio over the jobs whose rows were all near (<= 100 ns)."""
import csv
import glob
import statistics

MIB = 1 << 20
per_size = {}
print("job      size    rd us  model  ratio | ring us  model  ratio | handoff ns")
for path in sorted(glob.glob("jobs/job*.csv"), key=lambda p: int(p[8:-4])):
    rows = list(csv.DictReader(open(path)))

    def median(algorithm, size):
        values = [float(r["median_us"]) for r in rows
                  if r["algorithm"] == algorithm and int(r["bytes"]) == size]
        return statistics.median(values) if values else None

    for size in sorted({int(r["bytes"]) for r in rows}):
        handoffs = [float(r["core_handoff_ns"]) for r in rows if int(r["bytes"]) == size]
        rd, ring = median("recursive_doubling", size), median("ring", size)
        rd_model = median("sendrecv", size) + median("reduce", size)
        half = size // 2
        ring_model = (2 * median("sendrecv", half) + median("reduce", half)
                      if median("sendrecv", half) else None)
        near = max(handoffs) <= 100
        ring_text = (f"{ring:8.1f} {ring_model:6.0f} {ring / ring_model:6.2f}"
                     if ring_model else f"{ring:8.1f}      -      -")
        print(f"{path[5:-4]:8} {size // MIB:2} MiB {rd:8.1f} {rd_model:6.0f} {rd / rd_model:6.2f} |"
              f" {ring_text} | {min(handoffs):.0f}..{max(handoffs):.0f}{'' if near else ' far'}")
        if near:
            entry = per_size.setdefault(size, ([], []))
            entry[0].append(rd / rd_model)
            if ring_model:
                entry[1].append(ring / ring_model)

print("\nnear jobs only: measured / model, lowest..median..highest over jobs")
for size, (rd, ring) in sorted(per_size.items()):
    ring_text = (f"ring {min(ring):.2f}..{statistics.median(ring):.2f}..{max(ring):.2f}"
                 if ring else "ring -")
    print(f"{size // MIB:2} MiB ({len(rd)} jobs): rd {min(rd):.2f}..{statistics.median(rd):.2f}.."
          f"{max(rd):.2f}  {ring_text}")
