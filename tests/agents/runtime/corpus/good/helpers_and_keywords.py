# expect: ok — The banana was successfully placed in the bin
def move(name, target="bin"):
    print(pick(name))
    return place(name=name, target=target)


moved = 0
for name in ["banana"]:
    print(move(name, target="bin"))
    moved += 1
print({"moved": moved})
