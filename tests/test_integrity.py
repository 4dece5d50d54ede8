"""dpclust.pipeline.integrity: a record cut anywhere is caught by its three bytes, a table cut inside a row by
its last, a figure or report page by its end marker; a damaged record is named."""
import pytest

from dpclust.api import DPClustError
from dpclust.fileio import write_csv_atomic, write_json_atomic
from dpclust.pipeline.integrity import intact, load_records, record_intact, table_intact


def _record():
    return {"schema": 2, "records": [{"spec": {"note": "a line\nand another }\n", "k": 3},
                                      "runs": [{"released": {"centers": [[0.5, -1.0]]}, "diagnostics": {}}]}]}


def test_every_strict_prefix_of_a_written_record_is_caught(tmp_path):
    path = tmp_path / "r.json"
    write_json_atomic(_record(), path)
    whole = path.read_bytes()
    assert record_intact(path) == (True, "")
    cut = tmp_path / "cut.json"
    for n in range(len(whole)):
        cut.write_bytes(whole[:n])
        ok, why = record_intact(cut)
        assert not ok and "not a whole record" in why, n


def test_a_missing_record_is_missing_and_a_whole_one_loads(tmp_path):
    assert record_intact(tmp_path / "none.json") == (False, "missing")
    write_json_atomic(_record(), tmp_path / "r.json")
    (record,) = load_records([tmp_path / "r.json"])
    assert record["spec"]["k"] == 3 and record["runs"] == [{"centers": [[0.5, -1.0]]}]


def test_the_released_view_beside_a_run_jobs_file_is_checked_like_a_record(tmp_path):
    """A run job writes `X.json` and its publishable view `X.released.json` (dpclust.pipeline.run_job): the
    view is a whole compact record too (`intact`), cut anywhere it is caught, and it loads as records."""
    from dpclust.pipeline.records import released_path
    from dpclust.pipeline.run_job import write_json_atomic as write_run_file

    path = tmp_path / "alg.json"
    write_run_file(_record(), path)
    view = released_path(path)
    assert view == tmp_path / "alg.released.json" and intact(path) == intact(view) == (True, "")
    (record,) = load_records([view])
    assert record["runs"] == [{"centers": [[0.5, -1.0]]}]
    whole = view.read_bytes()
    for n in range(0, len(whole), 7):
        view.write_bytes(whole[:n])
        assert not intact(view)[0], n


def test_a_record_that_does_not_parse_is_one_error_naming_it_and_the_fix(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"schema": 2, "records": [}\n')
    with pytest.raises(DPClustError, match=r"record .*bad\.json is damaged .*delete it and run the same command again"):
        load_records([bad])


def test_a_table_cut_inside_a_row_is_caught_and_only_a_cut_between_rows_is_not(tmp_path):
    import pandas as pd

    path = tmp_path / "t.csv"
    write_csv_atomic(pd.DataFrame({"algorithm": ["a", "b, c"], "mean": [1.5, 2.25]}), path)
    whole = path.read_bytes()
    assert table_intact(path) == (True, "") and intact(path) == (True, "")
    row_ends = {i + 1 for i, b in enumerate(whole) if b == ord("\n")}
    cut = tmp_path / "cut.csv"
    for n in range(len(whole)):
        cut.write_bytes(whole[:n])
        assert table_intact(cut)[0] == (n in row_ends), n
    assert intact(tmp_path / "notes.txt") == (True, "")   # any other kind of file is not judged
    assert intact(tmp_path / "none.csv") == (False, "missing")


def test_a_figure_or_report_page_cut_anywhere_is_caught(tmp_path):
    """Figures and report pages as the renderers write them: every strict prefix of the PNG, the PDF
    and the HTML page is caught by its end marker; a Markdown caption cut inside a line is."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from dpclust.fileio import write_text_atomic
    from dpclust.pipeline.plotting import html_table, save_figure, to_markdown

    fig, ax = plt.subplots(figsize=(1.0, 0.8))
    ax.plot([0, 1], [1, 0])
    save_figure(fig, tmp_path / "fig")
    frame = pd.DataFrame({"claim": ["a"], "result": ["holds"]})
    write_text_atomic(html_table(frame, "t"), tmp_path / "fig.html")
    write_text_atomic("**t**\n\n" + to_markdown(frame), tmp_path / "fig.md")
    for suffix in (".png", ".pdf", ".html", ".md"):
        path = tmp_path / f"fig{suffix}"
        whole = path.read_bytes()
        assert intact(path) == (True, ""), suffix
        line_ends = {i + 1 for i, b in enumerate(whole) if b == ord("\n")} if suffix == ".md" else set()
        cut = tmp_path / f"cut{suffix}"
        for n in range(len(whole)):
            cut.write_bytes(whole[:n])
            ok, why = intact(cut)
            assert ok == (n in line_ends), (suffix, n)
            assert ok or f"not a whole {suffix[1:].upper()} file" in why
    assert intact(tmp_path / "none.png") == (False, "missing")
