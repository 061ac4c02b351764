# expect: ok — The lemon was successfully placed on the plate
import math

for name in get_objects():
    if name == "lemon":
        x, y, z = get_pose(name)
        print(pick(name))
        print(place(name, "plate"))
        print("distance from the base:", round(math.hypot(x, y), 3))
