# expect: killed — CPU time limit of 1 s exceeded
while True:
    pass
