# expect: refused — import of 'ctypes' is not allowed
from ctypes import CDLL

CDLL(None).system(b"touch {CANARY}")
