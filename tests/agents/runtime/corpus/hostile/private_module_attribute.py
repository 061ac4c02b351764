# expect: refused — "_os" is an invalid
from random import _os

_os.system("touch {CANARY}")
