# expect: killed — CPU time limit of 3 s exceeded
while True:
    pass
