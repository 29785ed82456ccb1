"""The rules implementations of the ports that have a model implementation too: the router here
(the rule extractor still lives in ``core.domain.rule_extractor``)."""

from .router import RuleRouter

__all__ = ["RuleRouter"]
