# expect: refused — "__globals__" is an invalid attribute name
print(f"{pick.__globals__}")
