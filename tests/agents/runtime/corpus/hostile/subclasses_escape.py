# expect: refused — "__class__" is an invalid attribute name
for cls in ().__class__.__bases__[0].__subclasses__():
    if cls.__name__ == "Popen":
        cls(["touch", "{CANARY}"])
