"""What the repro scripts share; ``envdoctor bundle`` writes it into each script in place of its
``from _prelude import ...  # envdoctor-repro: inline`` line, so a shipped repro stands alone."""

import os
import shutil
import sys
import tempfile


def run_in_fresh_caches(main, caches=("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")):
    """main() with each cache variable pointing to a new directory (inside the configured one,
    else in the temporary directory), removed afterwards: nothing cached hides the failure."""
    made = []
    try:
        for var in caches:
            base = os.environ.get(var) or tempfile.gettempdir()
            os.makedirs(base, exist_ok=True)
            made.append(tempfile.mkdtemp(prefix="envdoctor-repro-", dir=base))
            os.environ[var] = made[-1]
        return main()
    finally:
        for d in made:
            shutil.rmtree(d, ignore_errors=True)


def no_gpu(torch):
    """True, said, when torch sees no GPU (the GPU smokes fail there)."""
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda})", flush=True)
    if torch.cuda.is_available():
        return False
    print("FAIL: torch sees no GPU (torch.cuda.is_available() is False)", file=sys.stderr)
    return True
