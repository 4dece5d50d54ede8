"""`python -m dpclust.pipeline`: see `dpclust.pipeline.cli`."""
import sys

from dpclust.pipeline.cli import main

sys.exit(main())
