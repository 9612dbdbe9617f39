"""collbench's report package: what the report scripts share, and each script's own logic.

The scripts in scripts/ (report.py, characterize_report.py, perf_report.py,
plot.py, summarize.py, compare_osu_table.py, compare_transports.py,
sim_study.py) are entry
points of a few lines; each runs one module of this package:

  shared by every module
    readers   the files the reports read: collbench CSVs through
              collbench_csv.py (the one CSV reader, and its column rules),
              key-value files (machine.txt, run.env), optional text files,
              collbench --timeline's trace
    text      Markdown tables and the number formats of the reports (times,
              sizes, percentages)
    figures   matplotlib found and set up, the algorithms' colours and
              order, axes of sizes, a figure saved into the outputs
    outputs   outputs written whole or not at all (ReplaceTogether, one
              file, one folder) and the checks of an --out before any work
    cli       a command's option parser (a value option given twice is
              refused), its bad input and failed writes as one line, status 2

  one per script
    report (report.py), characterize (characterize_report.py), perf
    (perf_report.py), plot (plot.py), summary (summarize.py), compare_osu
    (compare_osu_table.py), compare_transports (compare_transports.py),
    simstudy (sim_study.py: the simulated studies of sim_sweep.sh)
  and characterize's parts in modules of their own
    measurements (a characterize.sh folder's sweep, fit and matrix as its
    subcommands read them; the table and exit status of their checks),
    netsim_check (netsim-check, and the report's sections on the emulated
    network), two_level (two-level), your_model (the report's "Your model
    on N nodes like these", scale.sh's CSVs), simselection (the simulated
    cluster's best allreduce per size and p)

Standard library only, but for figures (matplotlib, imported when a figure
is drawn, so that bad input is refused before it loads).
"""
