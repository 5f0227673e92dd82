"""SSM expressivity probes: gate classes, fixed-width arithmetic, formal languages, LTLf, constructions, probes."""
