"""Geometry helpers, numpy only: rotations and angles, planar overlap tests, the pinhole camera."""
