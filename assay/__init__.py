"""assay: label-efficient, unbiased evaluation with honest confidence intervals."""
__version__ = "0.1.0"

from assay.evaluate import EvaluationResult, evaluate  # noqa: E402
from assay.pool import Pool, load_pool  # noqa: E402

__all__ = ["EvaluationResult", "Pool", "evaluate", "load_pool"]
