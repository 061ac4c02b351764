"""Primitive skills shared by the sim and the real robot: settings, outcomes, the executor."""
