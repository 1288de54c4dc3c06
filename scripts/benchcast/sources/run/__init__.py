"""Measuring: the jobs that run the benchmarks (fio, YCSB with its throwaway MariaDB server, the
out-of-core programs) with their deadlines and repeat rule, what each run saw of the machine
(interference, other I/O on the device, paging, CPU share), and recovery after a killed run."""
