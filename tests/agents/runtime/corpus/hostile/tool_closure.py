# expect: refused — "__closure__" is an invalid attribute name
print(pick.__closure__[0].cell_contents)
