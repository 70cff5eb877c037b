"""On-demand open-world evaluation of many systems (seeds 000/001): a campaign kept in the label
store (:mod:`assay.ondemand.campaign`), its tables (:mod:`assay.ondemand.schema`,
:mod:`assay.ondemand.store`) and the joint estimates and sample-size plan over its arrays
(:mod:`assay.ondemand.joint`)."""
from assay.ondemand.campaign import CampaignReport, OnDemandCampaign, SystemReport

__all__ = ["CampaignReport", "OnDemandCampaign", "SystemReport"]
