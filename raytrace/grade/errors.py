"""The error type of the grading tools: bad input (exit status 2, one line)."""
from userio.errors import UserError


class GradeError(UserError):
    """Bad input to a comparison: an unreadable or mismatched image, a bad tolerance,
    a malformed sidecar. Prints as ``file: where: message``."""
