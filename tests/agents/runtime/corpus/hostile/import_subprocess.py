# expect: refused — import of 'subprocess' is not allowed
import subprocess

subprocess.run(["touch", "{CANARY}"])
