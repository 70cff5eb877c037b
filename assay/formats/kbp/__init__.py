"""Readers (and a writer) for the TAC KBP Cold Start 2015 slot-filling file formats.

* :mod:`.queries` — query XML (SF queries, LDC queries with several entry points, two hops),
  read, expanded to SF queries and written;
* :mod:`.responses` — the 8-column SF submission and the assessment file;
* :mod:`.queryids` — CS-Score's ``-queries`` list (``LDC_ID SF_ID [HOP]``);
* :mod:`.provenance`, :mod:`.ids`, :mod:`.slots` — provenance triples, query IDs and hashes,
  the slot inventory.

Every malformed input raises :class:`KBPInputError` naming file, line and column.
"""
from __future__ import annotations

from .errors import KBPInputError
from .ids import QueryId, entrypoint_uuid, hop1_uuid, parse_queryid
from .provenance import Provenance, Triple, parse_provenance
from .queries import EntryPoint, Query, expand, format_queries, parse_queries, read_queries
from .queryids import QueryListEntry, parse_query_list, read_query_list
from .responses import (ASSESSMENT, JUDGMENTS, SUBMISSION, Response, check_documents,
                        format_submission, parse_responses, read_doc_lengths, read_responses)
from .slots import slot_quantity

__all__ = ["ASSESSMENT", "EntryPoint", "JUDGMENTS", "KBPInputError", "Provenance", "Query",
           "QueryId", "QueryListEntry", "Response", "SUBMISSION", "Triple", "check_documents",
           "entrypoint_uuid", "expand", "format_queries", "format_submission", "hop1_uuid",
           "parse_provenance", "parse_queries", "parse_query_list", "parse_queryid",
           "parse_responses", "read_doc_lengths", "read_queries", "read_query_list",
           "read_responses", "slot_quantity"]
