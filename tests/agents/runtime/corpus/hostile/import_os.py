# expect: refused — import of 'os' is not allowed
import os

os.system("touch {CANARY}")
