"""Matrix multiply of square float32 matrices: GFLOP/s, 2·n³ flops per product.

numpy hands this to its BLAS (OpenBLAS in the wheels); the target is for
learntorch to stay within 10% of it.
"""
import learntorch

from .suite import (case, Contenders, flops_per_second, float32, torch_from_numpy,
                    throughput_at_least)

_TARGET = "matmul {n}×{n} throughput ≥ 0.9× numpy's"


def _matmul_target(n):
    return throughput_at_least(0.9, "numpy", _TARGET.format(n=n))


@case("matmul 128×128", n=128, tiny=dict(n=4), target=_matmul_target(128))
@case("matmul 512×512", n=512, tiny=dict(n=4), target=_matmul_target(512))
@case("matmul 1024×1024", n=1024, tiny=dict(n=4), target=_matmul_target(1024))
def matmul(n):
    a, b = float32(n, n, seed=1), float32(n, n, seed=2)
    la, lb = learntorch.from_numpy(a), learntorch.from_numpy(b)
    ta, tb = torch_from_numpy(a), torch_from_numpy(b)
    return Contenders(learntorch=lambda: la @ lb, numpy=lambda: a @ b, torch=lambda: ta @ tb,
                      metric=flops_per_second(2 * n**3))
