# expect: refused — "__traceback__" is an invalid attribute name
try:
    1 / 0
except ZeroDivisionError as exc:
    print(exc.__traceback__.tb_frame.f_globals)
