"""benchcast: predict application performance on storage devices you do not have.

The logic of the workflow lives here; Snakemake rule scripts are thin shells over it.
"""

__version__ = "0.1.0"


class BenchcastError(Exception):
    """A user-facing error: bad config, bad input file or bad device state.

    Its message is one line that names the offending key, file or device.
    """
