# expect: ok — chosen: 
from random import choice

names = sorted(get_objects())
print("chosen:", choice(names))
