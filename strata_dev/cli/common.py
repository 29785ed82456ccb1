"""What every ``strata`` sub-command module shares: the context of the running stack (or of the
environment's project) and the sub-command parsers that take the shared options. Below
:mod:`strata_dev.cli.main` and the command modules, so none of them imports another's parent."""

from __future__ import annotations

import argparse
import os
from typing import Any

from strata_dev.cli.output import RULE, exit_codes_epilog


def use_running_stack() -> None:
    from core import config

    settings = config.load()
    if settings.firestore_emulator_host or settings.real_project:
        return
    from strata_dev.localstack import stack

    state = stack.status()
    info = state.get("info") if isinstance(state, dict) else None
    if info:
        os.environ.update(stack.stack_env(info))


def context() -> Any:
    use_running_stack()
    from core.bootstrap import Context

    return Context()


class Subparsers:
    """Sub-command parsers that all take the shared options (``--json``) and show the exit codes."""

    def __init__(self, action: Any, common: argparse.ArgumentParser) -> None:
        self._action = action
        self._common = common

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.setdefault("parents", [self._common])
        kwargs.setdefault("epilog", f"{RULE}\n\n{exit_codes_epilog()}")
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        if "help" in kwargs:
            kwargs.setdefault("description", kwargs["help"])
        return self._action.add_parser(name, **kwargs)
