"""Where records come from, by concern: the run plan (:mod:`.plan`, every run a study measures and
the layout of its result paths), reading results (:mod:`.parse`: fio JSON, YCSB output, the importers
and their checks) and measuring (:mod:`.run`: the benchmark jobs and what a run saw of the machine).
Within, the plan comes first, then parse, then run: a module imports none of a later one. The names
the analysis reads back (ops, benchmark names, modes) are :mod:`benchcast.core.vocabulary`'s."""
