"""The pieces of ``learntorch-course grade`` (``course/grade.py`` puts them together).

- ``plan``       a chapter source prepared for grading: numbered check calls, the
                 submission's copy of each check cell without its expected values
- ``taint``      which check calls compare with values the learner's own code made
- ``sandbox``    the command line that runs a kernel in bubblewrap, as a dedicated
                 user, under limits; the isolation this machine allows
- ``kernel``     driving one sandboxed kernel through the cells, from the grader's side
- ``in_kernel``  what grading runs inside a kernel (grading mode, RNG states)
- ``submission`` reading a submitted notebook, whatever it turns out to be
- ``judge``      a submission's observations against the instructor's: the verdicts

The threat model -- what a submission can and cannot do -- is in the README's
instructor section.
"""
