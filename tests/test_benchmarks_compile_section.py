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


def test_an_mlp_row_reports_its_fusion_bound_from_the_matmuls_alone():
    from benchmarks.compile import report
    chain = {"eager": [4e-3] * 3, "compiled": [1e-3] * 3, "copy": [1e-3] * 3,
             "copy into": [0.5e-3] * 3}
    # eager 3 ms, compiled 2 ms, the matmuls alone 1.5 ms: speed-up 1.5x, bound 2x; frozen
    # (options={"freezing": True}) 1.2 ms: 2.5x, past the bound
    mlp = {"eager": [3e-3] * 3, "compiled": [2e-3] * 3, "matmuls": [1.5e-3] * 3,
           "frozen": [1.2e-3] * 3}
    timing = ((1.0, 1.0, 1.0), (0.9, 0.9, 0.9))
    text = report({"chain": chain, "mlp_relu": mlp, "mlp_gelu": mlp,
                   "compile_time": (timing, timing, timing), "load": ("0", "0")}, 3, "cmd")
    row = next(line for line in text.splitlines() if "MLP forward (GELU) ≥ 1.2×" in line)
    assert "1.50× (1.50–1.50); fusion bound 2.00× (2.00–2.00) | yes" in row
    lines = text.splitlines()
    frozen = lines[lines.index(row) + 1]
    assert frozen.startswith('| the same, with `options={"freezing": True}` | 2.50× (2.50–2.50)')
    assert frozen.endswith("| yes |")
    table_row = next(line for line in lines if line.startswith(
        '| MLP 784-256-128-10 forward, batch 128, GELU (no_grad), options={"freezing": True}'))
    assert "| 1.2 ms (1.2 ms–1.2 ms) | 2.50× (2.50–2.50) |" in table_row
