"""benchcast: predict application performance on storage devices you do not have.

The logic of the workflow lives here; Snakemake rule scripts are thin shells over it.
"""

__version__ = "0.1.0"


class BenchcastError(Exception):
    """A user-facing error: bad config, bad input file or bad device state.

    Its message is one line that names the offending key, file or device.
    """


def result_text(path, errors: str = "strict") -> str:
    """The text of a result file made elsewhere: UTF-8, or with a byte-order mark UTF-8 or UTF-16
    (what Windows PowerShell's ``>`` writes), the mark dropped. Raises FileNotFoundError, and
    UnicodeDecodeError where ``errors`` is strict and the bytes are not text."""
    from pathlib import Path

    data = Path(path).read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors=errors)
    return data.decode("utf-8-sig", errors=errors)
