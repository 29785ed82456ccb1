"""`python -m core.localstack stack up|down|status`: the stack commands without the full CLI."""

import sys

from core.cli.stack_cmd import main

sys.exit(main())
