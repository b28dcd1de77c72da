"""Course programs: scripts a learner runs from the command line.  Each one that starts with
``import learntorch as torch`` promises to run on PyTorch with that line changed to
``import torch`` (tests/course/test_course_programs_on_both_libraries.py holds it to that)."""
