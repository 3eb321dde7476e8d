"""Self-tests of the load lab (make lab-selftest)."""
