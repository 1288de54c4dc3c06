"""What the user reads: the tables (paper tables included), the answer page and the charts."""
