#!/bin/sh
# Runs in the Soft-RoCE VM for tests/vm/runner.sh: never finishes.
echo "hanging"
while :; do sleep 1; done
