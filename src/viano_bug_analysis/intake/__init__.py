"""Raw-input formats (native intake JSON, GitHub issue, Bugzilla bug, Markdown) and the
importers that write supplied packages. See docs/intake-format.md."""

from viano_bug_analysis.intake.formats import FORMATS, IntakeFormat, parser_for
from viano_bug_analysis.intake.importers import (
    DEFAULT_PACKAGE_ID,
    IMPORT_FORMATS,
    ImportedPackage,
    import_file,
)
from viano_bug_analysis.intake.model import IntakeDocument
from viano_bug_analysis.intake.native import INTAKE_FORMAT

__all__ = [
    "DEFAULT_PACKAGE_ID",
    "FORMATS",
    "IMPORT_FORMATS",
    "INTAKE_FORMAT",
    "ImportedPackage",
    "IntakeDocument",
    "IntakeFormat",
    "import_file",
    "parser_for",
]
