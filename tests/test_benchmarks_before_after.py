"""benchmarks/before_after.py turns the per-call ratios of two checkouts into one table (medians
and quartiles, before's runs then after's), and BENCHMARKS.md includes the committed one."""
from pathlib import Path

from benchmarks.before_after import SUITE_CASES, report, suite_report
from benchmarks.report import TIERS_FIGURES, _tiers_section


def _run(commit, mlp, chain):
    return {"commit": commit, "ratios": {"MLP step": mlp, "chain": chain}}


def test_the_table_has_one_row_per_case_with_each_runs_median_and_quartiles():
    before, after = Path("before"), Path("after")
    runs = {before: [_run("aaa", [1.0, 2.0, 3.0], [4.0] * 3), _run("aaa", [2.0] * 3, [5.0] * 3)],
            after: [_run("bbb", [0.5] * 3, [1.0, 1.5, 2.0]), _run("bbb", [0.25] * 3, [1.0] * 3)]}
    text = report(runs, before, after, 2, "the command")
    rows = [line for line in text.splitlines() if line.startswith("| MLP") or
            line.startswith("| chain")]
    assert rows[0] == ("| MLP step | 2.00× (1.50–2.50) | 2.00× (2.00–2.00) | 0.50× (0.50–0.50) "
                       "| 0.25× (0.25–0.25) |")
    assert rows[1].split(" | ")[3] == "1.50× (1.25–1.75)"
    assert "(aaa)" in text and "(bbb)" in text and "`the command`" in text


def test_the_regenerated_page_keeps_the_committed_table():
    section = _tiers_section()
    if TIERS_FIGURES.exists():
        assert section[0] == "## Two tiers: before and after"
        assert any("leaves accumulate" in line for line in section)
    else:
        assert section == []


def test_the_table_names_each_trees_threading_layer_and_points_to_the_cost_when_they_differ():
    before, after = Path("before"), Path("after")

    def run(layer):
        return dict(_run("c", [1.0] * 3, [1.0] * 3), layer=layer)
    differ = report({before: [run("omp")], after: [run("tbb")]}, before, after, 1, "cmd")
    assert "Numba's threading layer: before omp; after tbb." in differ
    assert "loader.py" in differ
    same = report({before: [run("tbb")], after: [run("tbb")]}, before, after, 1, "cmd")
    assert "before tbb; after tbb." in same and "loader.py" not in same


def test_the_suite_table_has_each_runs_ratio_and_each_trees_median():
    before, after = Path("before"), Path("after")
    suites = {before: [{"MLP step": 1.0, "softmax": 1.2}, {"MLP step": 0.9, "softmax": 1.1},
                       {"MLP step": 1.1, "softmax": 1.0}],
              after: [{"MLP step": 0.8, "softmax": 0.9}, {"MLP step": 1.2, "softmax": 0.85},
                      {"MLP step": 1.0}]}  # a case that did not run in one process: "—"
    text = suite_report(suites, before, after)
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| ")}
    assert rows["| MLP step"] == ("| MLP step | 1.00× | 0.90× | 1.10× | **1.00×** | 0.80× | "
                                  "1.20× | 1.00× | **1.00×** |")
    assert rows["| softmax"].endswith("| 0.90× | 0.85× | — | **0.88×** |")
    assert all(case in text for case in SUITE_CASES)


PAGE = ("# learntorch benchmarks\n\n## widgets\n\nrows\n\n## Two tiers: before and after\n\n"
        "the old table\n\n## distributed\n\nthe MPI text\n\n## GPU\n\nthe GPU text\n")


def test_a_new_table_replaces_the_pages_copy_in_place(tmp_path):
    """``--markdown`` updates BENCHMARKS.md's section too: the page shows the table just
    measured, where the suite puts it, and only once."""
    from benchmarks.report import splice_tiers_section
    page = tmp_path / "BENCHMARKS.md"
    page.write_text(PAGE, encoding="utf-8")
    splice_tiers_section(page, "## Two tiers: before and after\n\nthe new table\n")
    text = page.read_text(encoding="utf-8")
    assert text.count("## Two tiers") == 1 and "the new table" in text
    assert "the old table" not in text
    assert text.index("## widgets") < text.index("## Two tiers") < text.index("## distributed")
    assert text.endswith("## distributed\n\nthe MPI text\n\n## GPU\n\nthe GPU text\n")
    # a page without the section gets it before "## distributed"
    page.write_text(PAGE.replace("## Two tiers: before and after\n\nthe old table\n\n", ""),
                    encoding="utf-8")
    splice_tiers_section(page, "## Two tiers: before and after\n\nthe new table\n")
    text = page.read_text(encoding="utf-8")
    assert text.index("## widgets") < text.index("the new table") < text.index("## distributed")
