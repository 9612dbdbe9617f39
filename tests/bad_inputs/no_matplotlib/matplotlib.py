# Shadows matplotlib for bad_inputs rows (PYTHONPATH): a Python that cannot plot.
raise ImportError("matplotlib hidden by tests/bad_inputs/no_matplotlib")
