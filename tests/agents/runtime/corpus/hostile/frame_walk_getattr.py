# expect: error — "gi_frame" is a restricted name
generator = (value for value in [1])
print(getattr(generator, "gi_frame"))
