"""PDDL: domains, problem text, validation with precise errors, Fast Downward, plan simulation."""
