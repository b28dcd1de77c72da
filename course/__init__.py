"""The teaching machinery of learntorch: exercise checks used inside chapters,
the learner release of the instructor sources, and grading with nbval.

The command line is ``learntorch-course`` (``learntorch-course --help``).
"""
