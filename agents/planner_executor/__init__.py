"""The planner-executor agent: router, chatbot, a planner and executor with four tools over a
perceived semantic snapshot, and a goal completion critic (registered as ``planner-executor``).
"""
