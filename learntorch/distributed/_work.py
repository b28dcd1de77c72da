"""``Work``: the handle an ``async_op=True`` collective returns (torch's ``dist.Work``).

The collective has been started (an MPI non-blocking request: ``Iallreduce``,
``Ibcast``, ``Isend``...); ``wait()`` blocks until it is done and only then is
the result in the tensor.  Some collectives finish with a step of their own
after MPI is done -- AVG divides the sum by the world size, ``all_gather``
copies from one receive buffer into the list of tensors -- which ``wait()``
(or an ``is_completed()`` that finds it done) runs exactly once.
"""


class Work:
    def __init__(self, requests=(), finish=None, result=(), status=None, buffers=()):
        self._requests = list(requests)
        # MPI reads and writes these arrays until the requests complete: holding them here
        # keeps Python from freeing their memory under MPI (a temporary buffer would be)
        self._buffers = buffers
        # an MPI.Status filled in for a single receive: who sent (irecv from any source)
        self._statuses = None if status is None else [status]
        self._finish = finish
        self._result = list(result)
        self._done = not self._requests
        self._exception = None
        if self._done:
            self._run_finish()

    def _run_finish(self):
        finish, self._finish = self._finish, None
        if finish is not None:
            finish()

    def _complete(self, error):
        self._done = True
        self._buffers = ()
        if error is not None:
            self._exception = RuntimeError(_explain(error))
            raise self._exception
        self._run_finish()

    def is_completed(self):
        """True once the collective has finished (asks MPI without blocking)."""
        if not self._done:
            from mpi4py import MPI
            try:
                finished = MPI.Request.Testall(self._requests, self._statuses)
            except MPI.Exception as error:
                self._complete(error)
            else:
                if finished:
                    self._complete(None)
        return self._done

    def wait(self, timeout=None):
        """Block until the collective has finished; returns True (as torch).  ``timeout`` is
        accepted for torch's signature; MPI's requests cannot time out."""
        if self._exception is not None:
            raise self._exception
        if not self._done:
            from mpi4py import MPI
            try:
                MPI.Request.Waitall(self._requests, self._statuses)
            except MPI.Exception as error:
                self._complete(error)
            else:
                self._complete(None)
        return True

    def is_success(self):
        return self.is_completed() and self._exception is None

    def exception(self):
        return self._exception

    def result(self):
        """The output tensors of the collective (after ``wait()``)."""
        return self._result

    def source_rank(self):
        """For a receive from any source (``irecv(src=None)``): the rank that sent."""
        if self._statuses is None or not self.is_completed():
            return -1
        return self._statuses[0].Get_source()

    def __repr__(self):
        return f"<Work {'completed' if self._done else 'in progress'}>"


def _explain(error):
    text = str(error)
    if "truncat" in text.lower():
        return ("irecv: the message that arrived is larger than the tensor given to irecv; "
                "send and recv must use tensors of the same shape and dtype (MPI: " + text + ")")
    return f"the collective failed in MPI: {text}"
