"""`python -m strata_dev.localstack stack up|down|status`: the stack commands without the full CLI."""

import sys

from strata_dev.cli.stack_cmd import main

sys.exit(main())
