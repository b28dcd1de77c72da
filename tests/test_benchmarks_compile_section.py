"""python -m benchmarks.compile --markdown puts its section into BENCHMARKS.md before the GPU
section, replacing the one there (running it twice leaves one section), and the page the
suite regenerates (benchmarks/report.py) keeps it."""
from benchmarks.report import COMPILE_FIGURES, _compile_section, splice_compile_section

PAGE = "# learntorch benchmarks\n\n## widgets\n\nrows\n\n## GPU\n\nthe GPU text\n"


def test_the_section_goes_before_gpu_and_replaces_the_old_one(tmp_path):
    page = tmp_path / "BENCHMARKS.md"
    page.write_text(PAGE, encoding="utf-8")
    splice_compile_section(page, "## compile\n\nfirst run\n")
    splice_compile_section(page, "## compile\n\nsecond run\n")
    text = page.read_text(encoding="utf-8")
    assert text.count("## compile") == 1 and "second run" in text and "first run" not in text
    assert text.index("## widgets") < text.index("## compile") < text.index("## GPU")
    assert text.endswith("the GPU text\n")


def test_the_regenerated_page_keeps_the_committed_figures():
    section = _compile_section()
    if COMPILE_FIGURES.exists():
        assert section[0] == "## compile"
        assert any("compile time of the MLP forward" in line for line in section)
    else:
        assert section == []
