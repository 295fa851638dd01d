# The man pages: ibfab(1) and ibfab-COMMAND(1), generated from the same
# CLI11 declarations as --help.
