# Where Numba keeps compiled kernels on Binder: the same folder at build time
# (postBuild) and at run time (start), inside the image's home directory.
export NUMBA_CACHE_DIR="${HOME}/.cache/learntorch-numba"
mkdir -p "${NUMBA_CACHE_DIR}"
