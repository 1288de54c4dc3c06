"""benchcast.core.vocabulary: the names the sources write and the analysis reads are the sources' own."""

from benchcast.core import vocabulary as v
from benchcast.records import blockio
from benchcast.sources.run import ooc, paging, ycsb


def test_the_sources_names_are_the_vocabulary():
    assert blockio.OP == v.DEVICE_OP == "device" and paging.OP == v.PAGING_OP == "paging"
    assert ooc.BENCHMARK == v.OOC_BENCHMARK == "ooc" and ooc.REFERENCE_MODE == v.OOC_REFERENCE_MODE
    assert ooc.MODES is v.OOC_MODES and ooc.PROGRAMS is v.OOC_PROGRAMS and ooc.MODE_KINDS is v.OOC_MODE_KINDS
    assert ycsb.ENGINES is v.YCSB_ENGINES


def test_modes_and_their_kinds():
    assert v.OOC_REFERENCE_MODE in v.OOC_MODES and set(v.OOC_MODE_KINDS) == set(v.OOC_MODES)
    assert v.OOC_MODE_KINDS[v.OOC_REFERENCE_MODE] is None  # in memory: any device
    assert v.OOC_SWAP_KINDS < v.OOC_MMAP_KINDS and "tmpfs" not in v.OOC_MMAP_KINDS


def test_light_no_imports():
    import ast
    from pathlib import Path

    tree = ast.parse(Path(v.__file__).read_text())
    assert [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
            and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")] == []
