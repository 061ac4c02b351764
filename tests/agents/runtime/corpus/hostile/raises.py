# expect: error — RuntimeError: the gripper is on fire
pick("lemon")
raise RuntimeError("the gripper is on fire")
