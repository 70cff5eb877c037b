"""Golden outputs of release 0.1.0 (commit bd65c11): the cases (``cases``), the TREC world they
use (``world``), the recorder (``record.py``) and the recording (``expected.json``)."""
