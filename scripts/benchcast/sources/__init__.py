"""Where records come from: the measuring jobs (fio, YCSB, out-of-core) and their plan, the
throwaway MariaDB server, what a run saw of the machine (quality, CPU share, block I/O, paging), and
the importers of results made elsewhere with their checks."""
