"""Stratified evaluation of many runs with assessor-error correction by double sampling: the
adapter of seed 004's TREC practice onto the core.

Seed 004 (Webber, Oard, Scholer & Hedin 2010, "Assessor error in stratified evaluation");
Tenenbein (1970); Oard et al. (2008). Documents map onto the core's run-return
:class:`~assay.core.strata.Strata` (:mod:`.design`); the estimators are the core's two-phase
stratified estimator (:mod:`assay.core.two_phase`, whose one-phase case is every design-based
estimate of assay) and double sampling (:mod:`assay.core.double_sampling`); I/O lives in
:mod:`assay.formats.trec` and :mod:`assay.interfaces.stratified_cli`.
"""
from assay.core.allocation import allocate_by_rule

from .design import (DocumentSample, draw_sample, stratify_by_labels,
                     stratify_by_runs)
from assay.core.two_phase import (SampleCounts, TopicEstimate, estimate, estimate_dict,
                         estimate_arrays, mean_over_topics)
from assay.core.small_counts import jeffreys_two_phase_intervals
from assay.core.double_sampling import (NOT_ADJUDICATED, StratumErrorRates, TenenbeinEstimate,
                              allocate_adjudication, build_counts, draw_adjudication,
                              error_rates, tenenbein, tenenbein_variance)
from assay.core.assessor_error import (assessed_proportion, bias_dominance_sample_size, error_effect,
                             mse_fallible, mse_true, naive_bias)
from assay.core.consistency import bin_consistency, chi2_equal_proportions
from assay.labels.aggregation import dawid_skene, fleiss_kappa, krippendorff_alpha, majority_vote

__all__ = ["DocumentSample", "allocate_by_rule", "draw_sample", "stratify_by_labels",
           "stratify_by_runs", "SampleCounts", "TopicEstimate", "estimate_dict",
           "estimate", "estimate_arrays", "jeffreys_two_phase_intervals", "mean_over_topics",
           "NOT_ADJUDICATED",
           "TenenbeinEstimate", "allocate_adjudication", "build_counts", "draw_adjudication",
           "tenenbein", "tenenbein_variance", "StratumErrorRates", "error_rates",
           "assessed_proportion", "bias_dominance_sample_size", "error_effect", "mse_fallible",
           "mse_true", "naive_bias", "bin_consistency", "chi2_equal_proportions",
           "dawid_skene", "fleiss_kappa", "krippendorff_alpha", "majority_vote"]
