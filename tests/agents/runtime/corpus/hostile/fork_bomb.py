# expect: refused — import of 'os' is not allowed
import os

while True:
    os.fork()
