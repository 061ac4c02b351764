"""The UR5e with the fin-ray gripper: names and limits, MJCF model, kinematics, motion planning."""
