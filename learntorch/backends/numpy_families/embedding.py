"""Lookups by integer index: embedding tables (their rows, gradient and max-norm) and
one-hot rows."""
import numpy as np


class EmbeddingFamily:
    def embedding(self, weight, indices):
        """The rows ``weight[indices]``: for indices of shape (*), an (*, dim) copy."""
        return np.take(weight, indices, axis=0)

    def embedding_backward(self, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
        """The (num_weights, dim) gradient of the table: each lookup's gradient row added
        into the row it was read from (a row read several times gets the sum); the
        ``padding_idx`` row gets none; ``scale_grad_by_freq`` divides each row's gradient
        by how often it was read."""
        idx = indices.reshape(-1)
        g = grad.reshape(idx.size, grad.shape[-1])  # one gradient row per lookup
        if scale_grad_by_freq:
            counts = np.zeros(num_weights, dtype=g.dtype, like=g)
            np.add.at(counts, idx, np.ones(idx.shape, dtype=g.dtype, like=g))
            g = g / np.take(counts, idx)[:, None]
        table = np.zeros((num_weights, grad.shape[-1]), dtype=g.dtype, like=g)
        np.add.at(table, idx, g)  # rows read several times sum their gradients
        if padding_idx is not None:
            table[padding_idx] = 0  # the padding row never learns
        return table

    def embedding_renorm(self, weight, indices, max_norm, norm_type):
        """(rows, new values): each row of ``weight`` read by ``indices`` whose ``norm_type``
        norm exceeds ``max_norm``, and that row scaled down to ``max_norm`` (torch's
        ``embedding_renorm_``, the 1e-7 included: it keeps the division finite)."""
        rows = np.unique(indices)
        norms = np.linalg.norm(weight[rows].astype(np.float64), ord=norm_type, axis=1)
        too_long = norms > max_norm
        scale = (max_norm / (norms[too_long] + 1e-7))[:, None].astype(weight.dtype)
        return rows[too_long], weight[rows[too_long]] * scale

    def one_hot(self, indices, num_classes):
        """int64 rows of ``num_classes`` zeros with a 1 at each index: shape (*, num_classes)."""
        out = np.zeros(indices.shape + (max(num_classes, 0),), dtype=np.int64, like=indices)
        np.put_along_axis(out, indices[..., None], 1, axis=-1)
        return out
