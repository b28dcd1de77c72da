"""Which gradients travel together: DDP's buckets (torch's ``compute_bucket_assignment_by_size``).

One all-reduce per parameter would pay MPI's fixed cost per message hundreds of
times; one for the whole model could start only after the whole backward.
Buckets are the middle way: parameters are taken in **reverse** order of
``module.parameters()`` -- roughly the order in which backward produces their
gradients, last layer first -- and packed into buckets of up to
``bucket_cap_mb`` MiB (the first one only 1 MiB, so that communication starts
early), one dtype per bucket.  As soon as every gradient of a bucket is ready,
the bucket is all-reduced while backward goes on computing the next ones.
"""
FIRST_BUCKET_BYTES = 1024 * 1024  # torch's dist._DEFAULT_FIRST_BUCKET_BYTES
DEFAULT_BUCKET_CAP_MB = 25


def assign(params, bucket_cap_bytes, first_bucket_bytes=FIRST_BUCKET_BYTES):
    """Lists of indices into ``params`` (in ``parameters()`` order), one list per bucket.

    Buckets are filled from the last parameter to the first and closed once they
    reach their size limit (``first_bucket_bytes`` for each dtype's first bucket,
    then ``bucket_cap_bytes``).  They come out in the order they will be all-reduced:
    the bucket holding the last parameters first.
    """
    open_buckets = {}   # dtype -> [indices, bytes, limit]
    closed = []
    for index in reversed(range(len(params))):
        p = params[index]
        key = p.dtype
        if key not in open_buckets:
            limit = min(first_bucket_bytes, bucket_cap_bytes) if not any(
                b[2] == key for b in closed) else bucket_cap_bytes
            open_buckets[key] = [[], 0, limit]
        bucket = open_buckets[key]
        bucket[0].append(index)
        bucket[1] += p.numel() * p.element_size()
        if bucket[1] >= bucket[2]:
            closed.append((bucket[0], bucket[1], key))
            del open_buckets[key]
    closed += [(b[0], b[1], key) for key, b in open_buckets.items()]
    # in the order the reducer launches them: by the position of their first parameter
    # in the reversed list, i.e. the bucket with the last parameters first
    closed.sort(key=lambda b: -b[0][0])
    return [indices for indices, _, _ in closed]
