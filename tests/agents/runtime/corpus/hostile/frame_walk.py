# expect: refused — "gi_frame" is a restricted name
generator = (value for value in [1])
print(generator.gi_frame.f_back.f_globals)
