"""One CPU instruction made callable from Numba: ``vpdpbusd``, AVX-512 VNNI's int8 dot product.

Why an instruction by name: the register-blocked int8 GEMM (``int8_linear.py``) must keep a
tile of int32 sums in vector registers while it walks along K, and Numba cannot say that.
Written as plain loops, LLVM either keeps the sums in memory (a load and a store per
multiply-add) or vectorises the wrong loop (measured: 1.5 ms for a 256 x 64 x 128 product
that this instruction does in ~30 us).  So the innermost step is written in LLVM's own
language, and everything around it stays ordinary Numba.

What ``vpdpbusd acc, a, w`` does, lane by lane (16 lanes of 32 bits in a 512-bit register)::

    acc[j] += a[4j]*w[4j] + a[4j+1]*w[4j+1] + a[4j+2]*w[4j+2] + a[4j+3]*w[4j+3]

with ``a`` read as *unsigned* bytes and ``w`` as *signed* bytes; every product and sum is
exact (no 16-bit saturation, unlike ``vpmaddubsw``).  ``dot4_tile`` broadcasts four
activation codes to all 16 lanes, so one instruction adds 4 k-steps of 16 output
columns: 64 multiply-adds.

The instruction exists only where the CPU has it: ``vnni_available()`` says whether Numba
compiles for such a CPU (the host's features, or ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``
when set); callers must not compile ``dot4_tile`` otherwise (LLVM would stop the process
with "Cannot select").  Numba's cache keys compiled code by CPU and features, so a cached
kernel never travels to a CPU without the instruction.
"""
from numba import types
from numba.core import cgutils, codegen
from numba.extending import intrinsic

ir = cgutils.ir  # llvmlite's IR builder, reached through Numba, whose code generator it is

#: output columns per tile: one 512-bit register of int32 sums
TILE_COLUMNS = 16
#: k-steps per instruction: four byte products summed into each lane
K_GROUP = 4

_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
_SUMS = ir.VectorType(_I32, TILE_COLUMNS)  # <16 x i32>, the instruction's operand type


def vnni_available():
    """True when Numba compiles for a CPU with AVX-512 VNNI (x86 only)."""
    from numba.core import config
    if config.CPU_FEATURES is not None:
        return "+avx512vnni" in config.CPU_FEATURES.split(",")
    if config.CPU_NAME not in (None, "host"):
        return False  # a named CPU (a portable cache): do not assume the instruction
    # (the host's features as Numba compiles for them: NUMBA_ENABLE_AVX=0 turns them off)
    return "+avx512vnni" in codegen.get_host_cpu_features().split(",")


def _vpdpbusd(builder, acc, a, w):
    fnty = ir.FunctionType(_SUMS, [_SUMS, _SUMS, _SUMS])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.avx512.vpdpbusd.512")
    return builder.call(fn, [acc, a, w])


@intrinsic
def dot4_tile(typingctx, codes, rows, weight_tiles, block, tile):
    """``tile[r, :] = sum over k of codes[r, k] * W[k, block's 16 columns]`` for r < rows.

    ``codes``: (>= rows, K4) uint8, C-contiguous, K4 a multiple of 4 (zero padded);
    ``weight_tiles``: (blocks, K4 // 4, 64) int8 from ``int8_linear.pack_weight_tiles``:
    for each group of 4 k-steps, 16 columns x 4 bytes, the order ``vpdpbusd`` reads;
    ``tile``: (>= rows, >= 16) int32, rows contiguous; its first 16 columns are
    overwritten.  ``rows`` must be a constant (the number of sums kept in registers: one
    512-bit register per row).
    """
    if not isinstance(rows, types.IntegerLiteral):
        return None  # Numba retries with the constant's literal type
    expected = ((codes, types.uint8, 2), (weight_tiles, types.int8, 3), (tile, types.int32, 2))
    for array, dtype, ndim in expected:
        if not (isinstance(array, types.Array) and array.dtype == dtype and array.ndim == ndim):
            raise TypeError(f"dot4_tile takes {ndim}-D {dtype} arrays here, got {array}")

    def codegen(context, builder, sig, args):
        n_rows = sig.args[1].literal_value
        codes_arr = context.make_array(sig.args[0])(context, builder, args[0])
        tiles_arr = context.make_array(sig.args[2])(context, builder, args[2])
        tile_arr = context.make_array(sig.args[4])(context, builder, args[4])
        block_index = builder.sext(args[3], _I64) if args[3].type.width < 64 else args[3]
        row_stride = cgutils.unpack_tuple(builder, codes_arr.strides)[0]
        groups = cgutils.unpack_tuple(builder, tiles_arr.shape)[1]
        group_bytes = ir.Constant(_I64, K_GROUP * TILE_COLUMNS)
        weights = builder.gep(builder.bitcast(tiles_arr.data, _I8.as_pointer()),
                              [builder.mul(builder.mul(block_index, groups), group_bytes)])
        code_rows = [builder.gep(builder.bitcast(codes_arr.data, _I8.as_pointer()),
                                 [builder.mul(ir.Constant(_I64, r), row_stride)])
                     for r in range(n_rows)]
        # the sums live in stack slots that LLVM promotes to registers (mem2reg)
        sums = [cgutils.alloca_once_value(builder, ir.Constant(_SUMS, None))
                for _ in range(n_rows)]
        for slot in sums:
            builder.store(ir.Constant(_SUMS, None), slot)  # zero at every call
        broadcast = ir.Constant(_SUMS, [0] * TILE_COLUMNS)
        with cgutils.for_range(builder, groups) as loop:
            g = loop.index
            w_ptr = builder.gep(weights, [builder.mul(g, group_bytes)])
            w = builder.load(builder.bitcast(w_ptr, _SUMS.as_pointer()), align=1)
            for r in range(n_rows):
                a_ptr = builder.gep(code_rows[r], [builder.mul(g, ir.Constant(_I64, K_GROUP))])
                four_codes = builder.load(builder.bitcast(a_ptr, _I32.as_pointer()), align=1)
                lane0 = builder.insert_element(ir.Constant(_SUMS, None), four_codes,
                                               ir.Constant(_I32, 0))
                a = builder.shuffle_vector(lane0, ir.Constant(_SUMS, None), broadcast)
                builder.store(_vpdpbusd(builder, builder.load(sums[r]), a, w), sums[r])
        out = builder.bitcast(tile_arr.data, _I8.as_pointer())
        out_stride = cgutils.unpack_tuple(builder, tile_arr.strides)[0]
        for r in range(n_rows):
            row = builder.gep(out, [builder.mul(ir.Constant(_I64, r), out_stride)])
            builder.store(builder.load(sums[r]), builder.bitcast(row, _SUMS.as_pointer()),
                          align=4)
        return context.get_dummy_value()

    return types.none(codes, rows, weight_tiles, block, tile), codegen
