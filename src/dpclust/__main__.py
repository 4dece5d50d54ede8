"""`python -m dpclust`: see `dpclust.cli`."""
import sys

from .cli import main

sys.exit(main())
