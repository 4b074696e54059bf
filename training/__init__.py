"""The training pipelines over the library (`python training/NAME.py`, or `python -m training.NAME`):
data, the MDMs, the MI data sets and the heads. They read the library, never the app or benchmarks/."""
