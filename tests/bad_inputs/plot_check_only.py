import sys
# Passes collbench's "check" and fails every plot: a plot failure after the fit.
sys.exit(0 if sys.argv[1:] == ["check"] else 3)
