#!/bin/sh
# rdmacm_loads.sh LIBDIR PROGRAM NAME: runs `PROGRAM -h` with LIBDIR first on
# LD_LIBRARY_PATH and passes if the program got to main (its usage line
# "usage: PROGRAM" is printed) and the dynamic loader reported no missing
# symbol, version node or version information.
libdir=$1 program=$2 name=$3
out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$program" -h 2>&1)
status=$?
printf '%s\n' "$out"
echo "exit status $status"
if printf '%s\n' "$out" | grep -E -q 'symbol lookup error|version .* not found|no version information|cannot open shared object'; then
  echo "FAIL: the dynamic loader refused or warned"
  exit 1
fi
if ! printf '%s\n' "$out" | grep -q "^usage: .*$name$"; then
  echo "FAIL: $name did not reach its usage message"
  exit 1
fi
# It must have run against the built librdmacm and libibverbs, not the
# system's.
loaded=$(LD_LIBRARY_PATH="$libdir" LD_TRACE_LOADED_OBJECTS=1 "$program")
for library in librdmacm.so.1 libibverbs.so.1; do
  if ! printf '%s\n' "$loaded" | grep -q "$library => $libdir/"; then
    echo "FAIL: $name did not load $library from $libdir"
    exit 1
  fi
done
echo "PASS"
