"""Starting ranks: the torchrun-style command and ``run_ranks``; failures end the whole job.

Every test that starts a job checks that no process of it is left afterwards:
each process of a job carries the job's id (or, for the command, a marker the
test sets) in its environment, and /proc is searched for it.
"""
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from learntorch.distributed import ChildFailedError, run_ranks
from learntorch.distributed._launching import processes_of_job, processes_with_environment

ROOT = Path(__file__).resolve().parents[2]


def run_command(args, tmp_path, timeout=120):
    marker = uuid.uuid4().hex
    env = {**os.environ, "LEARNTORCH_TEST_MARK": marker,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "learntorch.distributed.run", *args],
                            cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=timeout)
    assert processes_with_environment("LEARNTORCH_TEST_MARK", marker) == [], "processes left"
    return result


def test_the_command_starts_n_ranks_with_torchruns_environment(mpi, tmp_path):
    (tmp_path / "show.py").write_text(textwrap.dedent(r"""
        import os, sys
        import learntorch.distributed as dist
        dist.init_process_group("mpi")
        names = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                 "MASTER_PORT", "TORCHELASTIC_RUN_ID"]
        # one write per rank: the ranks share the terminal, and separate writes (print's
        # pieces, unbuffered) could interleave
        sys.stdout.write(" ".join([str(dist.get_rank())] + [os.environ[n] for n in names]
                                  + sys.argv[1:]) + "\n")
        dist.destroy_process_group()
    """))
    result = run_command(["--nproc-per-node", "3", "--master-port", "29999", "show.py",
                          "--epochs", "2"], tmp_path)
    assert result.returncode == 0, result.stderr
    lines = sorted(line.split() for line in result.stdout.splitlines())
    assert [line[:5] for line in lines] == [[str(r), str(r), str(r), "3", "3"] for r in range(3)]
    assert all(line[6] == "29999" and line[-2:] == ["--epochs", "2"] for line in lines)


def test_the_command_takes_torchruns_underscore_spelling_and_modules(mpi, tmp_path):
    (tmp_path / "hello_module.py").write_text("import os, sys\nsys.stdout.write(f\"hello {os.environ['RANK']}\\n\")\n")
    result = run_command(["--nproc_per_node=2", "--standalone", "-m", "hello_module"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split("\n")[:2]) == ["hello 0", "hello 1"]


def test_a_rank_that_raises_fails_the_command_with_its_rank_and_error(mpi, tmp_path):
    (tmp_path / "fail.py").write_text(textwrap.dedent("""
        import learntorch as torch
        import learntorch.distributed as dist
        dist.init_process_group("mpi")
        if dist.get_rank() == 1:
            raise ValueError("rank one gives up")
        dist.all_reduce(torch.ones(2))   # rank 0 would wait here forever
    """))
    started = time.monotonic()
    result = run_command(["--nproc-per-node", "2", "fail.py"], tmp_path)
    assert time.monotonic() - started < 60
    assert result.returncode != 0
    assert "rank 1 (of 2) failed" in result.stderr
    assert "ValueError: rank one gives up" in result.stderr
    assert 'fail.py", line 6' in result.stderr  # the traceback points into the script


def test_several_nodes_need_a_hostfile(tmp_path):
    result = subprocess.run([sys.executable, "-m", "learntorch.distributed.run", "--nnodes",
                             "2", "x.py"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--hostfile" in result.stderr


def test_run_ranks_returns_each_ranks_value_and_output(mpi, capsys):
    from rank_programs import report
    results = run_ranks(report, nprocs=2, args=("hello",), timeout=120)
    assert [r.rank for r in results] == [0, 1]
    for r in results:
        rank, size, env = r.value
        assert (rank, size) == (r.rank, 2)
        assert env["RANK"] == str(rank) and env["WORLD_SIZE"] == "2"
        assert env["LOCAL_RANK"] == str(rank) and env["LOCAL_WORLD_SIZE"] == "2"
        assert env["OMP_NUM_THREADS"] == "1" and env["MASTER_PORT"] == "29500"
        assert r.stdout == f"hello from rank {rank}\n"
        assert r.stderr == f"a warning from rank {rank}\n"
    shown = capsys.readouterr()
    assert "[rank 0] hello from rank 0" in shown.out and "[rank 1] hello from rank 1" in shown.out
    assert "[rank 1] a warning from rank 1" in shown.err


def test_a_rank_that_raises_makes_run_ranks_raise_with_the_rank_and_traceback(mpi):
    from rank_programs import raise_on_rank_1
    started = time.monotonic()
    with pytest.raises(ChildFailedError) as failure:
        run_ranks(raise_on_rank_1, nprocs=2, timeout=120, show_output=False)
    assert time.monotonic() - started < 60  # rank 0 did not wait for the timeout
    assert isinstance(failure.value, RuntimeError)
    assert set(failure.value.failures) == {1}
    message = str(failure.value)
    assert "rank 1 (of 2) failed" in message
    assert "ZeroDivisionError: division by zero" in message
    assert "return 1 / 0" in message  # the line of the learner's code
    assert processes_of_job(failure.value.job_id) == []


def test_a_job_past_its_timeout_is_stopped_and_leaves_nothing(mpi, monkeypatch):
    from learntorch.distributed import _launching
    from rank_programs import wait_forever
    jobs = []
    real_run = _launching.Job.run
    monkeypatch.setattr(_launching.Job, "run", lambda self: jobs.append(self) or real_run(self))
    with pytest.raises(TimeoutError, match="did not finish within 2 s"):
        run_ranks(wait_forever, nprocs=2, timeout=2, show_output=False)
    assert processes_of_job(jobs[0].job_id) == []
    assert not os.path.exists(jobs[0].dir)


def test_run_ranks_runs_a_function_defined_in_a_notebook_cell(mpi, tmp_path):
    # IPython's shell is what runs a notebook's cells: the function has no importable module
    cell = textwrap.dedent("""
        import learntorch.distributed as dist

        def double_rank(factor):
            import learntorch.distributed as dist
            dist.init_process_group("mpi")
            return dist.get_rank() * factor

        results = dist.run_ranks(double_rank, nprocs=2, args=(2,), show_output=False)
        print("values", [r.value for r in results])
    """)
    code = ("from IPython.core.interactiveshell import InteractiveShell\n"
            f"result = InteractiveShell.instance().run_cell({cell!r})\n"
            "result.raise_error()\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "values [0, 2]" in result.stdout, result.stdout + result.stderr


def test_a_notebook_function_takes_the_notebooks_imports_helpers_and_function_arguments(
        mpi, tmp_path):
    # what the chapter's cells do: the rank function uses the modules and names the notebook
    # imported (not imported again in its body), calls a helper of another cell, and gets a
    # notebook function as an argument (a check handing the learner's function to the ranks);
    # a notebook value that is neither is not sent, and the rank says which name it missed
    cells = [textwrap.dedent(cell) for cell in ("""
        import numpy as np
        import learntorch as torch
        import learntorch.distributed as dist
        from learntorch.distributed import ReduceOp
        SCALE = 10
    """, """
        def rank_value():
            return torch.tensor([float(dist.get_rank() + 1)])
    """, """
        def halve(t):
            return t / 2
    """, """
        def total(finish):
            dist.init_process_group()
            t = rank_value()
            dist.all_reduce(t, op=ReduceOp.SUM)
            return float(np.asarray(finish(t))[0])

        results = dist.run_ranks(total, nprocs=2, args=(halve,), show_output=False)
        print("values", [r.value for r in results])
    """, """
        def scaled():
            return SCALE
        try:
            dist.run_ranks(scaled, nprocs=2, show_output=False)
        except dist.ChildFailedError as error:
            print("failed:", str(error).splitlines()[-1])
    """)]
    code = ("from IPython.core.interactiveshell import InteractiveShell\n"
            "shell = InteractiveShell.instance()\n"
            f"for cell in {cells!r}:\n"
            "    shell.run_cell(cell).raise_error()\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "values [1.5, 1.5]" in result.stdout, result.stdout + result.stderr
    assert "failed: NameError: name 'SCALE' is not defined" in result.stdout, result.stdout


def test_run_ranks_runs_a_function_of_a_scripts_main_without_rerunning_the_script(mpi,
                                                                                   tmp_path):
    (tmp_path / "script.py").write_text(textwrap.dedent("""
        import learntorch.distributed as dist
        OFFSET = 10   # a global of the script: the ranks see it

        def plus_offset():
            dist.init_process_group("mpi")
            return dist.get_rank() + OFFSET

        if __name__ == "__main__":
            print("values", [r.value for r in dist.run_ranks(plus_offset, nprocs=2)])
    """))
    result = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "values [10, 11]" in result.stdout, result.stdout + result.stderr


def test_run_ranks_refuses_a_lambda_and_a_nested_function():
    with pytest.raises(TypeError, match="defined with `def`"):
        run_ranks(lambda: 1)


def test_the_search_for_left_processes_finds_a_process_that_carries_the_mark():
    # so that the "nothing left" assertions above could fail
    marker = uuid.uuid4().hex
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                               env={**os.environ, "LEARNTORCH_TEST_MARK": marker})
    try:
        deadline = time.monotonic() + 10
        while sleeper.pid not in processes_with_environment("LEARNTORCH_TEST_MARK", marker):
            assert time.monotonic() < deadline, "the marked process was not found"
            time.sleep(0.05)
        assert processes_with_environment("LEARNTORCH_TEST_MARK", marker[:-1]) == []
    finally:
        sleeper.kill()
        sleeper.wait()


def test_no_python_runs_a_program_with_the_ranks_environment(mpi, tmp_path):
    result = run_command(["--nproc-per-node", "2", "--no-python", "printenv", "RANK"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == ["0", "1"]


def test_several_machines_are_named_to_mpiexec_with_the_hostfile(tmp_path):
    from learntorch.distributed._launching import Job
    job = Job(4, ["script", "train.py"], hostfile=tmp_path / "hosts", per_node=2)
    try:
        command = job.command()
    finally:
        job.cleanup()
    assert command[1:7] == ["-n", "4", "-f", str(tmp_path / "hosts"), "-ppn", "2"]
    assert command[-5:] == [sys.executable, "-m", "learntorch.distributed._rank_main", "script",
                            "train.py"]


def test_under_a_plain_mpiexec_an_uncaught_exception_still_ends_every_rank(mpi, tmp_path):
    # without learntorch's launcher: init_process_group makes an uncaught exception abort
    # the MPI job, so rank 0 does not wait forever in its all_reduce
    from learntorch.distributed._launching import mpiexec
    (tmp_path / "plain.py").write_text(textwrap.dedent("""
        import learntorch as torch
        import learntorch.distributed as dist
        dist.init_process_group("mpi")
        if dist.get_rank() == 1:
            raise ValueError("rank one gives up")
        dist.all_reduce(torch.ones(2))
    """))
    marker = uuid.uuid4().hex
    env = {**os.environ, "LEARNTORCH_TEST_MARK": marker,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([mpiexec(), "-n", "2", sys.executable, "plain.py"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "ValueError: rank one gives up" in result.stderr
    # mpiexec returns while the ranks it stopped may still be exiting: give them a moment
    deadline = time.monotonic() + 10
    while processes_with_environment("LEARNTORCH_TEST_MARK", marker):
        assert time.monotonic() < deadline, "a rank outlived the job"
        time.sleep(0.1)
