#!/usr/bin/env bash
# Maintainer check (not in CI): every committed notebook output must be the same on any CPU.
#
# Runs nbval in strict mode on every notebook in notebooks/ and exercises/ under two OpenBLAS kernels
# (this machine's default and Prescott, an old generic one) and with faiss/OpenMP on 1 and 2 threads:
# four runs. A float that depends on the kernel or the thread count shows up as a failing cell.
#
#   bash tools/check_determinism.sh            # from the repository root, in the kit's venv
#
# Run it before changing anything that ranks, cuts or prints scores (retrieval, memory, budgets).
set -uo pipefail
cd "$(dirname "$0")/.."
failed=0
for coretype in default Prescott; do
  for threads in 1 2; do
    label="OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=$threads"
    if [ "$coretype" = default ]; then core_env=(-u OPENBLAS_CORETYPE); else core_env=(OPENBLAS_CORETYPE=$coretype); fi
    if env "${core_env[@]}" OMP_NUM_THREADS=$threads python -m pytest -q -p no:randomly notebooks exercises \
        > "/tmp/determinism_${coretype}_${threads}.log" 2>&1; then
      echo "ok      $label: $(tail -1 "/tmp/determinism_${coretype}_${threads}.log")"
    else
      echo "FAILED  $label: $(tail -1 "/tmp/determinism_${coretype}_${threads}.log") (log: /tmp/determinism_${coretype}_${threads}.log)"
      failed=1
    fi
  done
done
exit $failed
