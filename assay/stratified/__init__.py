"""Stratified evaluation of many runs with assessor-error correction by double sampling.

Seed 004 (Webber, Oard, Scholer & Hedin 2010, "Assessor error in stratified evaluation");
Tenenbein (1970); Oard et al. (2008) for the stratified estimators. Pure numpy/scipy; I/O lives
in :mod:`assay.formats.trec` and :mod:`assay.interfaces.stratified_cli`.
"""
from assay.core.allocation import allocate_by_rule

from .design import (DocumentSample, draw_sample, stratify_by_labels,
                     stratify_by_runs)
from .estimators import (SampleCounts, TopicEstimate, estimate, estimate_dict,
                         estimate_arrays, mean_over_topics)
from .double_sampling import (NOT_ADJUDICATED, StratumErrorRates, TenenbeinEstimate,
                              allocate_adjudication, build_counts, draw_adjudication,
                              error_rates, tenenbein, tenenbein_variance)
from .assessor_error import (assessed_proportion, bias_dominance_sample_size, error_effect,
                             mse_fallible, mse_true, naive_bias)
from .consistency import bin_consistency, chi2_equal_proportions
from .aggregation import dawid_skene, fleiss_kappa, krippendorff_alpha, majority_vote

__all__ = ["DocumentSample", "allocate_by_rule", "draw_sample", "stratify_by_labels",
           "stratify_by_runs", "SampleCounts", "TopicEstimate", "estimate_dict",
           "estimate", "estimate_arrays", "mean_over_topics", "NOT_ADJUDICATED",
           "TenenbeinEstimate", "allocate_adjudication", "build_counts", "draw_adjudication",
           "tenenbein", "tenenbein_variance", "StratumErrorRates", "error_rates",
           "assessed_proportion", "bias_dominance_sample_size", "error_effect", "mse_fallible",
           "mse_true", "naive_bias", "bin_consistency", "chi2_equal_proportions",
           "dawid_skene", "fleiss_kappa", "krippendorff_alpha", "majority_vote"]
