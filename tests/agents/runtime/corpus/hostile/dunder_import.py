# expect: refused — "__import__" is an invalid variable name
__import__("os").system("touch {CANARY}")
