from enum import StrEnum


class ReviewResolveDecision(StrEnum):
    ACCEPT = "accept"
    CORRECT = "correct"
    KEEP_BOTH = "keep_both"
    REJECT = "reject"

    def __str__(self) -> str:
        return str(self.value)
