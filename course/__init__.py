"""The teaching machinery of learntorch: exercise checks used inside chapters,
the learner release of the instructor sources, and grading behind a sandbox.

- ``course.checks``        the helpers check cells call (specific feedback; metadata format)
- ``course.observe``       what "how" checks observe: names the code uses, calls, messages
- ``course.observation``   what a check compares, as plain data (shared by checks and grader)
- ``course.cells``         running a notebook's cells in this process, as a kernel would
- ``course.variants``      learner variants of each exercise, tried against its visible checks
- ``course.plain_pytorch`` a chapter's plain-PyTorch cells run on PyTorch, output compared
- ``course.notebook``      reading chapter sources and their exercise marks
- ``course.release``       learner copies: solutions stubbed, hidden checks removed
- ``course.grade``         grading submissions, per exercise, each in its own sandbox
- ``course.grading``       the pieces of grading: plan, taint, sandbox, kernel, judge, ...
- ``course.gradebook``     gradebook.csv / gradebook.json, learner feedback files, digest

The command line is ``learntorch-course`` (``learntorch-course --help``).
"""
