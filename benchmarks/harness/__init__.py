"""The benchmarks' helpers, modules rather than scripts: a scratch copy of the workflow
(:mod:`.scratch`, which the tests' workflow runs use too) and the fault harness of ``faults.py``
(:mod:`.fault_tree`: the scratch trees, their runs and processes; :mod:`.fault_kinds`: what each
kind of fault hits and does; :mod:`.fault_checks`: the invariants). They import nothing from
``tests/``; the scripts import them as ``harness.X`` with this folder's parent on the path."""
