"""Dropout's mask: which elements survive, and by how much they are scaled."""


class DropoutFamily:
    def dropout_mask(self, uniform, p, dtype):
        """``1/(1-p)`` where ``uniform`` (samples in [0, 1)) is below ``1 - p`` -- an element
        kept, with probability 1 - p -- and 0 where it is dropped, as an array of ``dtype``.

        *Inverted* dropout: the kept elements are scaled up, so that the expected value
        of every element is unchanged and evaluation needs no rescaling.  The scale is
        divided in ``dtype``, as torch does, so the kept values are exactly torch's.
        """
        mask = (uniform < 1 - p).astype(dtype)
        mask /= 1 - p  # a Python float: numpy divides in the mask's dtype
        return mask
