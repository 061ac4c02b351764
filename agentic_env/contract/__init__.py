"""What the sim and the real env share: spaces, actions, observations, the workcell, trial specs."""
