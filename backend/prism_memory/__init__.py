"""Prism Memory: typed, scoped, auditable memory for teams of AI agents.

One deliberate import-time effect: numpy's BLAS is capped at one thread unless the
environment says otherwise. Recall multiplies one query by many vectors; on a small shared
machine BLAS threads cost more than they save (a 2,000 x 384 product took 3.45 ms with the
default threads and 0.26 ms with one), and a server already runs requests in parallel. It has
to happen before numpy is first imported, which is why it lives here.
"""

import os

from prism_memory.version import VERSION as __version__  # noqa: F401 (re-exported)

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
