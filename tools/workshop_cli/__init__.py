"""The workshop's command-line tool (see ../../workshop)."""
