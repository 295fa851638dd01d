# One ibfab_add_fuzzer(...) line per fuzz target.
