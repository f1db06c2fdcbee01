"""What the benchmarks share: paths and embedders, fixtures, the peers, Prism as a system, reports.

Not part of the product and not a benchmark: nothing here measures anything by itself. The
scripts in ``bench/`` import it as ``lib`` (their folder is on ``sys.path`` when they run);
the studies in ``bench/studies/`` put ``bench/`` there first.
"""
