#!/bin/sh
# Runs rdma-core 44's own Python tests (python3-pyverbs ships them, some
# gzipped, under /usr/share/doc/rdma-core/tests) from a private copy:
#   rdma_core_tests.sh TEST...   (unittest names, e.g. test_device)
# Exits with the tests' status; 1 when they are not installed.
set -eu
src=/usr/share/doc/rdma-core/tests
if [ ! -f "$src/run_tests.py" ] || ! /usr/bin/python3 -c "import pyverbs" 2>/dev/null; then
  echo "rdma-core's tests are not installed: install python3-pyverbs (scripts/setup-deps.sh)" >&2
  exit 1
fi
dir=$(mktemp -d /tmp/ibfab-rdma-core-tests.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cp -r "$src" "$dir/tests"
gunzip -f "$dir"/tests/*.gz
# Debian's interpreter: pyverbs is built for it.
/usr/bin/python3 "$dir/tests/run_tests.py" -v "$@"
