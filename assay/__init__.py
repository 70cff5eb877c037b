"""assay: label-efficient, unbiased evaluation with honest confidence intervals."""
__version__ = "0.1.0"
