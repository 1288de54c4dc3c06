"""Reading results: fio's JSON and YCSB's output in as records, the importers of results made
elsewhere (the paper's tables, PerfKitBenchmarker, records files) with their checks, and the preflight
check of every file the planned jobs will read."""
