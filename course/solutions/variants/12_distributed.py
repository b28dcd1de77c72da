"""Learner variants of chapter 12 (distributed): 12.1 each rank's share of the indices,
12.2 average the gradients yourself.  See course/variants.py for the format."""
from course.variants import correct, mistake


def _average(body):
    return "def average_gradients(model):\n" + body


VARIANTS = {
    "12.1": [
        correct("padding by cycling through the list with a modulo", """
            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                n = len(indices)
                if drop_last:
                    per_rank = n // num_replicas
                    padded = indices[:per_rank * num_replicas]
                else:
                    per_rank = -(-n // num_replicas)
                    padded = [indices[i % n] for i in range(per_rank * num_replicas)]
                return padded[rank::num_replicas]
        """),
        correct("positions picked one by one, no padded list built", """
            import math

            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                n = len(indices)
                per_rank = n // num_replicas if drop_last else math.ceil(n / num_replicas)
                share = []
                for k in range(per_rank):
                    position = rank + k * num_replicas
                    share.append(indices[position % n])
                return share
        """),
        correct("torch's own steps: num_samples from ceil((n - R) / R), padding in a loop", """
            import math

            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                n = len(indices)
                if drop_last and n % num_replicas != 0:
                    num_samples = math.ceil((n - num_replicas) / num_replicas)
                else:
                    num_samples = math.ceil(n / num_replicas)
                total = num_samples * num_replicas
                chosen = list(indices)
                if drop_last:
                    chosen = chosen[:total]
                else:
                    while len(chosen) < total:
                        chosen += indices[:total - len(chosen)]
                return chosen[rank:total:num_replicas]
        """),
        mistake("no padding: the ranks read different numbers of indices", """
            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                if drop_last:
                    indices = indices[:len(indices) // num_replicas * num_replicas]
                return indices[rank::num_replicas]
        """, feedback=["num_replicas=3, rank=1, drop_last=False", "pad to 12"]),
        mistake("a block of consecutive indices per rank, not interleaved", """
            import math

            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                n = len(indices)
                per_rank = n // num_replicas if drop_last else math.ceil(n / num_replicas)
                padded = (indices * num_replicas)[:per_rank * num_replicas]
                return padded[rank * per_rank:(rank + 1) * per_rank]
        """, feedback=["num_replicas=2, rank=0", "not a block"]),
        mistake("padding with the last index repeated, not from the start", """
            import math

            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                n = len(indices)
                per_rank = n // num_replicas if drop_last else math.ceil(n / num_replicas)
                total = per_rank * num_replicas
                padded = indices[:total] + [indices[-1]] * max(0, total - n)
                return padded[rank::num_replicas]
        """, feedback=["drop_last=False", "from the start"]),
        mistake("drop_last ignored: always padded", """
            import math

            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                n = len(indices)
                total = math.ceil(n / num_replicas) * num_replicas
                padded = (indices * num_replicas)[:total]
                return padded[rank::num_replicas]
        """, feedback=["drop_last=True", "cut to 9"]),
        mistake("indices[:padding] only: too short when there are fewer samples than ranks", """
            import math

            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                n = len(indices)
                per_rank = n // num_replicas if drop_last else math.ceil(n / num_replicas)
                total = per_rank * num_replicas
                padded = indices[:total] if drop_last else indices + indices[:total - n]
                return padded[rank:total:num_replicas]
        """, feedback=["num_replicas=5", "fewer samples than ranks"]),
        mistake("the padding appended to the learner's list in place", """
            import math

            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                n = len(indices)
                per_rank = n // num_replicas if drop_last else math.ceil(n / num_replicas)
                total = per_rank * num_replicas
                if drop_last:
                    del indices[total:]
                else:
                    indices.extend((indices * num_replicas)[:total - n])
                return indices[rank:total:num_replicas]
        """, feedback=["the indices list after", "leave it unchanged"]),
        mistake("DistributedSampler called instead of writing the split", """
            def split_for_rank(indices, num_replicas, rank, drop_last=False):
                sampler = DistributedSampler(indices, num_replicas=num_replicas, rank=rank,
                                             shuffle=False, drop_last=drop_last)
                return [indices[i] for i in sampler]
        """, feedback=["DistributedSampler", "write the split yourself"]),
    ],
    "12.2": [
        correct("all_reduce with ReduceOp.AVG", _average("""\
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
""")),
        correct("one flat buffer for all gradients, one all_reduce, copied back (a bucket)", _average("""\
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat = flat / dist.get_world_size()
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].reshape(g.shape))
        offset += g.numel()
""")),
        correct("a new .grad tensor assigned, divided first", _average("""\
    for name, p in model.named_parameters():
        if p.requires_grad and p.grad is not None:
            share = p.grad / dist.get_world_size()
            dist.all_reduce(share)
            p.grad = share
""")),
        mistake("the sum over the ranks, not divided", _average("""\
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
"""), feedback=["sum over the ranks", "divide by the world size"]),
        mistake("divided by 2, not by the world size", _average("""\
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= 2
"""), feedback=["on 3 ranks", "divide by the world size, 3"]),
        mistake("reduce to rank 0: the other ranks keep their own", _average("""\
    for p in model.parameters():
        if p.grad is not None:
            dist.reduce(p.grad, dst=0)
            p.grad /= dist.get_world_size()
"""), feedback=["rank 1", "all_reduce, not reduce"]),
        mistake("the parameters averaged instead of the gradients", _average("""\
    for p in model.parameters():
        with torch.no_grad():
            dist.all_reduce(p, op=dist.ReduceOp.AVG)
"""), feedback=["own shard gradient", "not averaged"]),
        mistake("a frozen parameter's None gradient passed to all_reduce", _average("""\
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
"""), feedback=["what a rank raised", "None"]),
        mistake("DistributedDataParallel made to do it", _average("""\
    DDP(model)
"""), feedback=["DDP", "average with dist.all_reduce"]),
    ],
}
