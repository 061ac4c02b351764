# expect: refused — Exec calls are not allowed
exec("import os; os.system('touch {CANARY}')")
