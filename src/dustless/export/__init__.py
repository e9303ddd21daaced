"""Exporting a crawl: documents as files with crawl-info XML, or one WACZ (``dustless export``).

Seed 004 §2 stores each document as a numbered file, 10,000 per subdirectory of a seed
directory; seed 002 Fig. 11 writes a crawl-info XML beside each. ``doc_paths`` and
``crawl_info_xml`` are pure; ``export_files`` reads the crawl and writes the files.
"""

from ._files import ExportSummary, export_files
from ._info import FILES_PER_DIR, DocInfo, crawl_info_xml, doc_paths, extension, java_date
from ._wacz import WACZ_VERSION, WaczSummary, check_wacz, export_wacz

__all__ = [
    "FILES_PER_DIR",
    "WACZ_VERSION",
    "DocInfo",
    "ExportSummary",
    "WaczSummary",
    "check_wacz",
    "crawl_info_xml",
    "doc_paths",
    "export_files",
    "export_wacz",
    "extension",
    "java_date",
]
