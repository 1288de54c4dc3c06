"""protect: which planned re-measurements are refused, and outputs renamed only when complete."""
from benchcast.core import protect


def test_refusal_lists_existing_raw_outputs_and_what_to_do(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("{}")
    planned = [("fio_run", [str(a), str(tmp_path / "a.fio")]), ("fio_run", [str(b)])]
    why = protect.refusal(planned, listing=str(tmp_path / "lost.txt"))
    assert why.startswith("benchcast: refusing to re-measure 1 existing raw result(s): ")
    assert str(a) in why and str(b) not in why and "\n" not in why and "remeasure=" in why
    assert (tmp_path / "lost.txt").read_text() == f"{a}\n"


def test_refusal_allows_what_the_user_named(tmp_path):
    a = tmp_path / "fio" / "disk" / "c1" / "run0.json"
    a.parent.mkdir(parents=True)
    a.write_text("{}")
    planned = [("fio_run", [str(a)])]
    assert protect.refusal(planned) is not None
    assert protect.refusal(planned, patterns=[f"{tmp_path}/fio/disk/*"]) is None
    assert protect.refusal(planned, patterns=[f"{tmp_path}/fio/disk"]) is None
    assert protect.refusal(planned, patterns=[f"{tmp_path}/fio/other/*"]) is not None
    assert protect.refusal(planned, forcerun={"fio_run"}) is None
    assert protect.refusal(planned, forcerun={str(a)}) is None
    assert protect.refusal(planned, forcerun={"ycsb_run"}) is not None


def test_commit_renames_only_a_complete_output(tmp_path):
    out = tmp_path / "run0.json"
    protect.atomic_path(out).write_text('{"jobs": []}')
    assert not out.exists()
    protect.commit(out)
    assert out.read_text() == '{"jobs": []}' and not protect.atomic_path(out).exists()
    d = tmp_path / "raw"
    protect.atomic_path(d).mkdir()
    (protect.atomic_path(d) / "x").write_text("1")
    protect.clear_partial(d)
    assert not protect.atomic_path(d).exists()
