# expect: refused — import of 'os' is not allowed
from os import environ

print(environ["OPENAI_API_KEY"])
